/**
 * MCP protocol revisions (docs/mcp.md "Protocol revisions", ADR 0009), in process: the SDK's v2 Client speaking
 * 2025-06-18, 2025-11-25 and the stateless 2026-07-28 revision, and the 1.x Client most deployed clients embed,
 * each through initialize (or server/discover) → tools/list → tools/call; then raw requests for version
 * negotiation and the MCP-Protocol-Version header.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { BASE_URL, jsonOf, problemOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import { expectInsufficientScope, keyWith } from "./scoped-routes.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ACCEPT = "application/json, text/event-stream";

let cp: InProcessControlPlane;
let key: string;
let readOnlyKey: string;

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  const made = await cp.createKey("mcp-revisions@example.com");
  key = made.key;
  readOnlyKey = await keyWith(cp, made.account.id, ["links:read"]);
});
afterAll(async () => {
  await cp?.close();
});

function transportOptions() {
  return {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    fetch: (url: string | URL, init?: RequestInit) => cp.handle(new Request(url, init)),
  };
}

/** What a client saw after connecting, listing the tools and creating a link with a tool call. */
async function session(client: { listTools(): Promise<{ tools: { name: string }[] }>; callTool(p: object): Promise<unknown> }, slug: string) {
  const { tools } = await client.listTools();
  const call = (await client.callTool({ name: "create_link", arguments: { url: `https://example.com/${slug}`, slug } })) as any;
  const link = await jsonOf(await cp.request("GET", `/api/v1/links/${slug}`, { key }));
  return { tools: tools.length, created: call.structuredContent?.slug, isError: call.isError ?? false, target: link.target };
}

describe("the SDK client on each protocol revision", () => {
  const revisions: [string, ConstructorParameters<typeof Client>[1], "legacy" | "modern"][] = [
    ["2025-06-18", { supportedProtocolVersions: ["2025-06-18"] }, "legacy"],
    ["2025-11-25", { supportedProtocolVersions: ["2025-11-25", "2025-06-18"] }, "legacy"],
    ["2026-07-28", { versionNegotiation: { mode: { pin: "2026-07-28" } } }, "modern"],
  ];
  for (const [revision, options, era] of revisions) {
    test(`${revision}: connect, tools/list, tools/call; a session only where the revision has them`, async () => {
      const client = new Client({ name: "clink-revisions", version: "1.0.0" }, options);
      const transport = new StreamableHTTPClientTransport(new URL(`${BASE_URL}/mcp`), transportOptions());
      await client.connect(transport);
      try {
        expect([client.getProtocolEra(), client.getNegotiatedProtocolVersion()]).toEqual([era, revision]);
        const slug = `rev-${revision}`;
        expect(await session(client, slug)).toEqual({ tools: 10, created: slug, isError: false, target: `https://example.com/${slug}` });
        if (era === "legacy") expect(transport.sessionId).toMatch(UUID);
        else expect(transport.sessionId).toBeUndefined();
      } finally {
        await client.close();
      }
    });
  }

  test("auto negotiation lands on 2026-07-28, and the 1.x client on 2025-11-25", async () => {
    const auto = new Client({ name: "clink-revisions", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await auto.connect(new StreamableHTTPClientTransport(new URL(`${BASE_URL}/mcp`), transportOptions()));
    expect(auto.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    expect(await session(auto, "rev-auto")).toMatchObject({ tools: 10, created: "rev-auto" });
    await auto.close();

    const v1 = new ClientV1({ name: "clink-revisions-v1", version: "1.0.0" });
    const transport = new TransportV1(new URL(`${BASE_URL}/mcp`), transportOptions());
    await v1.connect(transport);
    expect([transport.protocolVersion, transport.sessionId]).toEqual(["2025-11-25", expect.stringMatching(UUID)]);
    expect(await session(v1, "rev-v1")).toMatchObject({ tools: 10, created: "rev-v1" });
    await v1.close();
  });
});

describe("version negotiation and the MCP-Protocol-Version header", () => {
  const post = (json: unknown, headers: Record<string, string> = {}) =>
    cp.request("POST", "/mcp", { key, json, headers: { accept: ACCEPT, ...headers } });
  const initialize = (protocolVersion: string) => ({
    jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion, capabilities: {}, clientInfo: { name: "curl", version: "1" } },
  });
  const TOOLS_LIST = { jsonrpc: "2.0", id: 2, method: "tools/list" };

  test("initialize answers the client's revision when supported, else the latest 2025-era one", async () => {
    for (const [asked, answered] of [["2025-06-18", "2025-06-18"], ["2025-11-25", "2025-11-25"], ["2025-03-26", "2025-03-26"], ["2099-01-01", "2025-11-25"]]) {
      const res = await post(initialize(asked));
      expect([res.status, (await res.json()).result.protocolVersion, res.headers.get("mcp-session-id")]).toEqual([200, answered, expect.stringMatching(UUID)]);
    }
  });

  test("an initialize the server refuses opens no session", async () => {
    const bad = await post({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 2025 } });
    expect([bad.status, typeof (await bad.json()).error.code, bad.headers.get("mcp-session-id")]).toEqual([200, "number", null]);
  });

  test("a later request with an unsupported MCP-Protocol-Version answers 400, with a session and without; supported ones pass", async () => {
    const session = (await post(initialize("2025-06-18"))).headers.get("mcp-session-id")!;
    for (const headers of [{}, { "mcp-session-id": session }] as Record<string, string>[]) {
      for (const version of ["2025-06-18", "2025-11-25"]) expect((await post(TOOLS_LIST, { ...headers, "mcp-protocol-version": version })).status).toBe(200);
      const refused = await post(TOOLS_LIST, { ...headers, "mcp-protocol-version": "1999-01-01" });
      expect([refused.status, (await refused.json()).error.message]).toEqual([400, expect.stringContaining("Unsupported protocol version: 1999-01-01")]);
    }
  });

  test("2026-07-28 requests: the header must match the envelope's revision, a revision we do not serve is refused with the list", async () => {
    const envelope = (protocolVersion: string) => ({
      "io.modelcontextprotocol/protocolVersion": protocolVersion,
      "io.modelcontextprotocol/clientInfo": { name: "curl", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": {},
    });
    const list = (v: string) => ({ jsonrpc: "2.0", id: 3, method: "tools/list", params: { _meta: envelope(v) } });
    const served = await post(list("2026-07-28"), { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list" });
    expect([served.status, served.headers.get("mcp-session-id"), (await served.json()).result.tools.length]).toEqual([200, null, 10]);
    const mismatch = await post(list("2026-07-28"), { "mcp-protocol-version": "2025-11-25", "mcp-method": "tools/list" });
    expect(mismatch.status).toBe(400);
    const future = await post(list("2099-01-01"), { "mcp-protocol-version": "2099-01-01", "mcp-method": "tools/list" });
    expect([future.status, (await future.json()).error.data]).toEqual([400, { supported: ["2026-07-28"], requested: "2099-01-01" }]);
  });

  test("2026-07-28 requests pass the same edge: 401 without a key, 403 from a foreign Origin", async () => {
    const list = { jsonrpc: "2.0", id: 4, method: "tools/list", params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } } };
    const headers = { accept: ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list" };
    await problemOf(await cp.request("POST", "/mcp", { json: list, headers }), 401, "unauthorized");
    await problemOf(await cp.request("POST", "/mcp", { key, json: list, headers: { ...headers, origin: "https://evil.example" } }), 403, "forbidden");
  });

  test("2026-07-28 with a read-only key: every tool listed, a write tool refused with 403 insufficient_scope naming links:write", async () => {
    const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };
    const send = (method: string, params: object) =>
      cp.request("POST", "/mcp", {
        key: readOnlyKey,
        json: { jsonrpc: "2.0", id: 5, method, params: { ...params, _meta: meta } },
        headers: { accept: ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": method, ...(method === "tools/call" ? { "mcp-name": "create_link" } : {}) },
      });
    expect((await jsonOf(await send("tools/list", {}))).result.tools).toHaveLength(10);
    await expectInsufficientScope(await send("tools/call", { name: "create_link", arguments: { url: "https://example.com/no" } }), "links:write", "mcp");
  });
});

/**
 * The MCP server (§5) through the Elysia app in process: the SDK's own Client with a fetch that calls app.handle,
 * and raw JSON-RPC requests as curl would send them. Tools, their effects seen over REST, tool errors, account
 * isolation, sessions, the HTTP edge (401, 403, 405, 415, 400) and the shared rate limit.
 */
import { SCOPES } from "../../shared/enums.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { toJsonSchema } from "../../control/mcp/tools.ts";
import { Rule } from "../../shared/schemas.ts";
import { BASE_URL, jsonOf, linkObject, problemOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

const TOOL_NAMES = [
  "bulk_create_links", "create_link", "delete_link", "get_link", "get_link_stats", "list_links", "set_ab_test", "set_link_preview",
  "set_targeting_rules", "update_link",
];
const TOOLS_LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };
const INITIALIZE = {
  jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
};

type ToolResult = { isError?: boolean; structuredContent?: any; content: { type: string; text?: string }[] };

let cp: InProcessControlPlane;
let keyA: string;
let keyB: string;
let a: { client: Client; transport: StreamableHTTPClientTransport };
let b: { client: Client; transport: StreamableHTTPClientTransport };

async function connect(key: string) {
  const client = new Client({ name: "clink-in-process", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE_URL}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    fetch: (url, init) => cp.handle(new Request(url, init)),
  });
  await client.connect(transport);
  return { client, transport };
}

/** The structured result of a successful call, after checking its text item carries the same JSON. */
async function ok(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  if (r.isError) throw new Error(`${name} failed: ${r.content[0]?.text}`);
  expect(r.content).toEqual([{ type: "text", text: JSON.stringify(r.structuredContent) }]);
  return r.structuredContent;
}

/** The problem object of a failed call (isError, text only: a problem is not the tool's output schema). */
async function problem(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  expect([r.isError, r.structuredContent, r.content.length, r.content[0].type]).toEqual([true, undefined, 1, "text"]);
  return JSON.parse(r.content[0].text!);
}

/** A raw JSON-RPC POST to /mcp. */
function rpc(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return cp.request("POST", "/mcp", { json: body, headers: { accept: "application/json, text/event-stream", ...headers } });
}

const rest = (path: string, key = keyA) => cp.request("GET", path, { key }).then(jsonOf);

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  keyA = (await cp.createKey("mcp-a@example.com")).key;
  keyB = (await cp.createKey("mcp-b@example.com")).key;
  [a, b] = [await connect(keyA), await connect(keyB)];
});
afterAll(async () => {
  await Promise.all([a?.client.close(), b?.client.close()]);
  await cp?.close();
});

describe("tools", () => {
  test("tools/list offers exactly the ten tools, each with schemas, a description and annotations", async () => {
    const { tools } = await a.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
    for (const t of tools) {
      expect(t.description!.length).toBeGreaterThan(80);
      expect([t.inputSchema.type, t.outputSchema?.type, t.annotations?.openWorldHint]).toEqual(["object", "object", false]);
      expect(Object.keys(t.inputSchema.properties ?? {}).length).toBeGreaterThan(0);
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const name of ["list_links", "get_link", "get_link_stats"]) expect(byName[name].annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.delete_link.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    expect(byName.create_link.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    expect([byName.create_link.inputSchema.required, byName.update_link.inputSchema.required]).toEqual([["url"], ["slug"]]);
    expect((byName.set_targeting_rules.inputSchema.properties as any).rules.items).toEqual(toJsonSchema(Rule));
    expect(JSON.stringify(tools)).not.toContain("$id");
  });

  test("every tool works, and its effect shows over REST", async () => {
    const created = await ok(a.client, "create_link", { url: "https://example.com/landing", slug: "mcp-flow", tags: ["launch"] });
    expect(created).toEqual(linkObject("mcp-flow", "https://example.com/landing", { tags: ["launch"] }, cp.clock.now()));
    expect(await rest("/api/v1/links/mcp-flow")).toEqual(created);
    expect(await ok(a.client, "get_link", { slug: "mcp-flow" })).toEqual(created);
    expect(await ok(a.client, "list_links", { tag: "launch", limit: 10 })).toEqual({ links: [created], nextCursor: null });

    const updated = await ok(a.client, "update_link", { slug: "mcp-flow", targetUrl: "https://example.org/new", folder: "campaigns" });
    expect([updated.target, updated.folder]).toEqual(["https://example.org/new", "campaigns"]);
    expect(await rest("/api/v1/links/mcp-flow")).toEqual(updated);

    const rules = [{ kind: "country", match: "DE", url: "https://example.de/" }, { kind: "device", match: "ios", url: "https://apps.example.com/ios" }];
    expect((await ok(a.client, "set_targeting_rules", { slug: "mcp-flow", rules })).rules).toEqual(rules);
    const abUrls = [{ url: "https://b.example.com/variant", weight: 3 }];
    expect((await ok(a.client, "set_ab_test", { slug: "mcp-flow", abUrls })).abUrls).toEqual(abUrls);
    const preview = { serveOg: true, ogTitle: "Launch <day>", ogDescription: "All about it", ogImageUrl: "https://cdn.example.com/card.png" };
    expect(await ok(a.client, "set_link_preview", { slug: "mcp-flow", ...preview })).toMatchObject(preview);
    expect(await rest("/api/v1/links/mcp-flow")).toMatchObject({ rules, abUrls, ...preview, folder: "campaigns" });
    // null ends the rules and the A/B test.
    expect(await ok(a.client, "set_targeting_rules", { slug: "mcp-flow", rules: null })).toMatchObject({ rules: [], abUrls });
    expect(await ok(a.client, "set_ab_test", { slug: "mcp-flow", abUrls: [] })).toMatchObject({ abUrls: [] });

    expect(await ok(a.client, "get_link_stats", { slug: "mcp-flow" })).toEqual(await rest("/api/v1/links/mcp-flow/stats"));

    const bulk = await ok(a.client, "bulk_create_links", {
      links: [{ url: "https://example.com/one", slug: "mcp-bulk-one" }, { url: "javascript:alert(1)" }, { url: "https://example.com/three", slug: "mcp-flow" }],
    });
    expect([bulk.created, bulk.failed, bulk.results.map((r: any) => r.ok ? r.slug : r.error.code)]).toEqual([1, 2, ["mcp-bulk-one", "invalid_input", "slug_taken"]]);
    expect((await rest("/api/v1/links/mcp-bulk-one")).target).toBe("https://example.com/one");

    expect(await ok(a.client, "delete_link", { slug: "mcp-flow" })).toEqual({ deleted: true, slug: "mcp-flow" });
    expect((await rest("/api/v1/links/mcp-flow")).code).toBe("not_found");
  });

  test("tool failures are isError results carrying the problem object, and the session goes on", async () => {
    await ok(a.client, "create_link", { url: "https://example.com/taken", slug: "mcp-taken" });
    expect(await problem(a.client, "create_link", { url: "not a url" })).toMatchObject({ status: 400, code: "invalid_input", errors: [{ path: "/url" }] });
    expect((await problem(a.client, "create_link", { url: "https://example.com", bogus: 1 })).errors).toEqual([{ path: "/bogus", message: "unknown field" }]);
    expect((await problem(a.client, "get_link", {})).errors.map((e: any) => e.path)).toEqual(["/slug"]);
    expect((await problem(a.client, "update_link", { slug: "mcp-taken", url: "https://example.com" })).errors)
      .toEqual([{ path: "/url", message: "unknown field: to change the destination use targetUrl" }]);
    expect((await problem(a.client, "set_ab_test", { slug: "mcp-taken", abUrls: [{ url: "https://example.com", weight: -1 }] })).code).toBe("invalid_input");
    expect((await problem(a.client, "list_links", { limit: 0 })).errors.map((e: any) => e.path)).toEqual(["/limit"]);
    expect(await problem(a.client, "get_link", { slug: "mcp-no-such-link" })).toEqual({
      type: "https://clink.dev/problems/not-found", title: "Not found", status: 404, detail: 'No link "mcp-no-such-link"', code: "not_found",
    });
    expect(await problem(a.client, "create_link", { url: "https://example.com/again", slug: "mcp-taken" })).toMatchObject({ status: 409, code: "slug_taken" });
    expect(await problem(a.client, "create_link", { url: "https://example.com", slug: "dashboard" })).toMatchObject({ status: 400, code: "slug_reserved" });
    // An unknown tool is a JSON-RPC error (MCP spec), not a crash: the next call on the same session works.
    await expect(a.client.callTool({ name: "drop_database", arguments: {} })).rejects.toThrow(/Unknown tool: drop_database/);
    expect((await ok(a.client, "get_link", { slug: "mcp-taken" })).slug).toBe("mcp-taken");
  });

  test("another account's link is answered as unknown by every tool and stays unchanged", async () => {
    const original = await ok(a.client, "create_link", { url: "https://example.com/private", slug: "mcp-isolated" });
    for (const [name, args] of [
      ["get_link", { slug: "mcp-isolated" }],
      ["update_link", { slug: "mcp-isolated", targetUrl: "https://attacker.example/" }],
      ["set_targeting_rules", { slug: "mcp-isolated", rules: [] }],
      ["set_ab_test", { slug: "mcp-isolated", abUrls: [{ url: "https://attacker.example/", weight: 1 }] }],
      ["set_link_preview", { slug: "mcp-isolated", serveOg: true }],
      ["get_link_stats", { slug: "mcp-isolated" }],
      ["delete_link", { slug: "mcp-isolated" }],
    ] as const) {
      expect(await problem(b.client, name, args)).toMatchObject({ status: 404, code: "not_found", detail: 'No link "mcp-isolated"' });
    }
    expect((await ok(b.client, "list_links", {})).links.map((l: any) => l.slug)).not.toContain("mcp-isolated");
    expect((await ok(b.client, "bulk_create_links", { links: [{ url: "https://example.com/x", slug: "mcp-isolated" }] })).results[0].error.code).toBe("slug_taken");
    expect(await rest("/api/v1/links/mcp-isolated")).toEqual(original);
  });

  test("get_link_stats takes the REST stats parameters as typed arguments, account-wide without a slug, with the same codes", async () => {
    const { tools } = await a.client.listTools();
    const stats = tools.find((t) => t.name === "get_link_stats")!;
    expect(stats.description).toContain("top referrers last week");
    expect(stats.inputSchema.required ?? []).not.toContain("slug");
    await ok(a.client, "create_link", { url: "https://example.com/stats", slug: "mcp-stats", tags: ["mcp"] });
    const args = { from: "2030-01-08", interval: "day", tz: "Europe/Berlin", groupBy: "referrer", filters: { country: ["DE", null], device: ["mobile"] }, bots: "include", limit: 5 };
    const query = "from=2030-01-08&interval=day&tz=Europe/Berlin&groupBy=referrer&country=DE,(none)&device=mobile&bots=include&limit=5";
    expect(await ok(a.client, "get_link_stats", { slug: "mcp-stats", ...args })).toEqual(await rest(`/api/v1/links/mcp-stats/stats?${query}`));
    const account = await ok(a.client, "get_link_stats", { groupBy: "tag", from: "2030-01-14" });
    expect(account).toEqual(await rest("/api/v1/stats?groupBy=tag&from=2030-01-14"));
    expect(account.slug).toBeUndefined();
    for (const [bad, code] of [
      [{ from: "last week" }, "invalid_range"], [{ from: "0001-01-01" }, "too_many_points"], [{ tz: "Mars/Olympus" }, "unknown_time_zone"],
      [{ slug: "mcp-stats", groupBy: "tag" }, "unknown_dimension"], [{ groupBy: "colour" }, "invalid_input"], [{ filters: { colour: ["red"] } }, "invalid_input"],
    ] as const) {
      expect((await problem(a.client, "get_link_stats", bad)).code).toBe(code);
    }
  });
});

describe("raw JSON-RPC and sessions", () => {
  test("stateless: a plain POST without a session answers JSON, opens none, and carries the RateLimit headers", async () => {
    const list = await rpc(TOOLS_LIST, { authorization: `Bearer ${keyA}` });
    expect([list.status, list.headers.get("content-type"), list.headers.get("mcp-session-id"), list.headers.get("ratelimit-limit")])
      .toEqual([200, "application/json", null, "100000"]);
    expect((await list.json()).result.tools.map((t: any) => t.name).sort()).toEqual(TOOL_NAMES);
    const call = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "create_link", arguments: { url: "https://example.com/raw", slug: "mcp-raw" } } };
    expect(await (await rpc(call, { authorization: `Bearer ${keyA}` })).json()).toMatchObject({ jsonrpc: "2.0", id: 7, result: { structuredContent: { slug: "mcp-raw" } } });
    expect((await rest("/api/v1/links/mcp-raw")).target).toBe("https://example.com/raw");
  });

  test("initialize opens a session bound to its account; another key's account gets 404, DELETE ends it", async () => {
    const init = await rpc(INITIALIZE, { authorization: `Bearer ${keyA}` });
    const id = init.headers.get("mcp-session-id")!;
    expect([init.status, (await init.json()).result.serverInfo]).toEqual([200, { name: "clink", version: "1.0.0" }]);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await rpc(TOOLS_LIST, { authorization: `Bearer ${keyA}`, "mcp-session-id": id })).status).toBe(200);
    await problemOf(await rpc(TOOLS_LIST, { authorization: `Bearer ${keyB}`, "mcp-session-id": id }), 404, "not_found");
    await problemOf(await rpc(TOOLS_LIST, { authorization: `Bearer ${keyA}`, "mcp-session-id": crypto.randomUUID() }), 404, "not_found");
    const ended = await cp.request("DELETE", "/mcp", { key: keyA, headers: { "mcp-session-id": id } });
    expect(ended.status).toBe(200);
    await problemOf(await rpc(TOOLS_LIST, { authorization: `Bearer ${keyA}`, "mcp-session-id": id }), 404, "not_found");
  });

  test("malformed tools/call params answer JSON-RPC -32602 naming the field, in a session and without", async () => {
    const malformed: [unknown, string][] = [
      [{ name: 5, arguments: {} }, "name"],
      [{ name: "create_link", arguments: "url=https://example.com/x" }, "arguments"],
      [{ name: "create_link", arguments: [{ url: "https://example.com/x" }] }, "arguments"],
      [{ arguments: { url: "https://example.com/x" } }, "name"],
      [undefined, "params"],
    ];
    const headerSets: Record<string, string>[] = [{ authorization: `Bearer ${keyA}` }, { authorization: `Bearer ${keyA}`, "mcp-session-id": a.transport.sessionId! }];
    for (const headers of headerSets) {
      for (const [params, field] of malformed) {
        const res = await rpc({ jsonrpc: "2.0", id: 9, method: "tools/call", ...(params === undefined ? {} : { params }) }, headers);
        const body = await res.json();
        expect([res.status, body.id, body.error.code, body.result]).toEqual([200, 9, -32602, undefined]);
        expect(body.error.message).toContain("Invalid tools/call request");
        expect(body.error.message).toContain(`"${field}"`);
      }
    }
    expect(await rest("/api/v1/links?q=example.com/x")).toEqual({ links: [], nextCursor: null });
  });
});

describe("the HTTP edge", () => {
  test("401 problem+json with WWW-Authenticate without a valid key; a key in the query string is ignored", async () => {
    const attempts: Record<string, string>[] = [{}, { authorization: "Bearer ck_not_a_real_key_000000000000000000" }, { authorization: keyA }];
    for (const headers of attempts) {
      const res = await rpc(TOOLS_LIST, headers);
      // RFC 9728 §5.1: the 401 names the MCP endpoint's protected-resource metadata, where OAuth clients start.
      expect(res.headers.get("www-authenticate")).toBe(`Bearer realm="mcp", resource_metadata="${BASE_URL}/.well-known/oauth-protected-resource/mcp", scope="${SCOPES.join(" ")}"`);
      await problemOf(res, 401, "unauthorized");
    }
    for (const query of [`access_token=${keyA}`, `key=${keyA}`]) {
      await problemOf(await cp.request("POST", `/mcp?${query}`, { json: TOOLS_LIST, headers: { accept: "application/json, text/event-stream" } }), 401, "unauthorized");
    }
  });

  test("a foreign Origin answers 403 forbidden even with a valid key; the service's own origin passes", async () => {
    for (const origin of ["https://evil.example", "http://localhost:1", "null", `${BASE_URL}.evil.example`]) {
      await problemOf(await rpc(TOOLS_LIST, { authorization: `Bearer ${keyA}`, origin }), 403, "forbidden");
    }
    expect((await rpc(TOOLS_LIST, { authorization: `Bearer ${keyA}`, origin: BASE_URL })).status).toBe(200);
  });

  test("GET and PUT answer 405 with Allow: POST, DELETE; DELETE without a session 400; wrong body type 415; bad JSON 400", async () => {
    for (const method of ["GET", "PUT"]) {
      const res = await cp.request(method, "/mcp", { key: keyA, headers: { accept: "text/event-stream" } });
      expect(res.headers.get("allow")).toBe("POST, DELETE");
      await problemOf(res, 405, "method_not_allowed");
    }
    await problemOf(await cp.request("DELETE", "/mcp", { key: keyA }), 400, "invalid_input");
    await problemOf(await cp.request("POST", "/mcp", { key: keyA, body: "hi", headers: { "content-type": "text/plain" } }), 415, "unsupported_media_type");
    await problemOf(await cp.request("POST", "/mcp", { key: keyA, body: "{", headers: { "content-type": "application/json" } }), 400, "invalid_json");
  });
});

describe("rate limit", () => {
  test("a JSON-RPC batch counts as many requests as it holds messages, and one over the budget runs nothing", async () => {
    const limited = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "5" } });
    try {
      const { key } = await limited.createKey("batch@example.com");
      const post = (json: unknown) => limited.request("POST", "/mcp", { key, json, headers: { accept: "application/json, text/event-stream" } });
      const create = (i: number) => ({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "create_link", arguments: { url: "https://example.com/", slug: `batch-${i}` } } });
      const three = await post([create(1), create(2), create(3)]);
      expect([three.status, three.headers.get("ratelimit-remaining")]).toEqual([200, "2"]);
      expect((await three.json()).map((r: any) => r.result.isError ?? false)).toEqual([false, false, false]);
      const over = await post([create(4), create(5), create(6)]);
      expect(over.headers.get("retry-after")).toBe("60");
      await problemOf(over, 429, "rate_limited");
      const owned = await limited.deps.store.listLinks((await limited.account("batch@example.com")).id, { limit: 10 });
      expect(owned.links.map((l) => l.slug).sort()).toEqual(["batch-1", "batch-2", "batch-3"]);
    } finally {
      await limited.close();
    }
  });
});

/**
 * MCP sessions in scale mode without sticky routing (docs/scale-mode.md, ADR 0009): two control processes on one
 * Postgres and Redis, and clients whose requests land on either, as behind a round-robin load balancer. A session
 * opened on control A is served by control B, ended on B it is gone on A, and it stays its account's own.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { requirePostgres, requireRedis, startDeployment, type Deployment } from "../helpers/scale.ts";
import type { TestServer } from "../helpers/server.ts";

const ACCEPT = "application/json, text/event-stream";
const TOOLS_LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };

let d: Deployment;
let key: string;
let otherKey: string;

beforeAll(async () => {
  await requirePostgres();
  await requireRedis();
  d = await startDeployment({ controls: 2, redirectors: 0 });
  [key, otherKey] = [await d.createKey("mcp-scale@example.com"), await d.createKey("mcp-scale-other@example.com")];
});
afterAll(async () => {
  await d?.stop();
});

/** A fetch that sends each request to the control `pick()` names, whatever the URL the client was given. */
function routedFetch(pick: () => TestServer) {
  return (url: string | URL, init?: RequestInit) => {
    const u = new URL(url);
    return fetch(`${pick().url}${u.pathname}${u.search}`, init);
  };
}

function post(control: TestServer, json: unknown, headers: Record<string, string>): Promise<Response> {
  return fetch(`${control.url}/mcp`, { method: "POST", body: JSON.stringify(json), headers: { "content-type": "application/json", accept: ACCEPT, ...headers } });
}

describe("MCP sessions across control processes", () => {
  test("a session opened on control A works on control B; DELETE on B ends it on A; another account's key gets 404", async () => {
    const [a, b] = d.controls;
    let target = a;
    const client = new ClientV1({ name: "clink-scale", version: "1.0.0" });
    const transport = new TransportV1(new URL(`${a.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
      fetch: routedFetch(() => target),
    });
    await client.connect(transport); // initialize and notifications/initialized, both on A
    const session = transport.sessionId!;
    expect(session).toMatch(/^[0-9a-f-]{36}$/);

    target = b;
    expect((await client.listTools()).tools).toHaveLength(10);
    const created = (await client.callTool({ name: "create_link", arguments: { url: "https://example.com/scaled", slug: "mcp-scaled" } })) as any;
    expect(created.structuredContent).toMatchObject({ slug: "mcp-scaled", target: "https://example.com/scaled" });
    const read = await fetch(`${a.url}/api/v1/links/mcp-scaled`, { headers: { authorization: `Bearer ${key}` } });
    expect([read.status, (await read.json()).target]).toEqual([200, "https://example.com/scaled"]);

    const sessionHeaders = { authorization: `Bearer ${key}`, "mcp-session-id": session };
    const foreign = await post(a, TOOLS_LIST, { authorization: `Bearer ${otherKey}`, "mcp-session-id": session });
    expect([foreign.status, (await foreign.json()).code]).toEqual([404, "not_found"]);
    expect((await post(a, TOOLS_LIST, sessionHeaders)).status).toBe(200);

    const ended = await fetch(`${b.url}/mcp`, { method: "DELETE", headers: sessionHeaders });
    expect(ended.status).toBe(200);
    for (const control of [a, b]) {
      const gone = await post(control, TOOLS_LIST, sessionHeaders);
      expect([gone.status, (await gone.json()).code]).toEqual([404, "not_found"]);
    }
    expect((await fetch(`${a.url}/mcp`, { method: "DELETE", headers: sessionHeaders })).status).toBe(404);
  });

  test("a 2026-07-28 client whose every request lands on the other control process", async () => {
    let turn = 0;
    const client = new Client({ name: "clink-scale", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${d.control.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
      fetch: routedFetch(() => d.controls[turn++ % 2]),
    }));
    expect((await client.listTools()).tools).toHaveLength(10);
    const got = (await client.callTool({ name: "get_link", arguments: { slug: "mcp-scaled" } })) as any;
    expect(got.structuredContent).toMatchObject({ slug: "mcp-scaled" });
    expect(turn).toBeGreaterThanOrEqual(3);
    await client.close();
  });
});

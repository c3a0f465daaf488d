/**
 * The MCP server (design §5) against the real embedded server, driven by the SDK's own Client over Streamable HTTP:
 * the ten tools and their schemas, every tool's effect checked over REST and on the short address, tool errors as
 * isError results, account isolation, sessions and stateless use, and the HTTP edge (401, 403 Origin, 405, shared
 * rate limit).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Deps } from "../../control/deps.ts";
import { getServer } from "../../control/mcp/server.ts";
import { McpSessions } from "../../control/mcp/sessions.ts";
import { toJsonSchema } from "../../control/mcp/tools.ts";
import { Rule } from "../../shared/schemas.ts";
import { api, createKey, startServer, type TestServer } from "../helpers/server.ts";

const TOOL_NAMES = [
  "bulk_create_links",
  "create_link",
  "delete_link",
  "get_link",
  "get_link_stats",
  "list_links",
  "set_ab_test",
  "set_link_preview",
  "set_targeting_rules",
  "update_link",
];

const DESKTOP_UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
const IPHONE_UA =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
const CRAWLER_UA = "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)";

interface Connected {
  client: Client;
  transport: StreamableHTTPClientTransport;
}

async function connect(server: TestServer, key: string): Promise<Connected> {
  const client = new Client({ name: "clink-e2e", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

type ToolResult = { isError?: boolean; structuredContent?: any; content: { type: string; text?: string }[] };

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

/** The structured result of a successful call, after checking the text item carries the same JSON. */
async function ok(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const r = await call(client, name, args);
  if (r.isError) throw new Error(`${name} failed: ${r.content[0]?.text}`);
  expect(r.content[0].type).toBe("text");
  expect(JSON.parse(r.content[0].text!)).toEqual(r.structuredContent);
  return r.structuredContent;
}

/** The problem object of a failed call. */
async function problem(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const r = await call(client, name, args);
  expect(r.isError).toBe(true);
  expect(r.content[0].type).toBe("text");
  return JSON.parse(r.content[0].text!);
}

/** A raw JSON-RPC POST to /mcp, as curl would send it. */
function rpc(server: TestServer, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(body),
  });
}

const TOOLS_LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
};

describe("MCP server over Streamable HTTP", () => {
  let server: TestServer;
  let keyA: string;
  let keyB: string;
  let a: Connected;
  let b: Connected;

  beforeAll(async () => {
    server = await startServer({ env: { RATE_LIMIT_PER_MINUTE: "10000", COUNTRY_HEADER: "x-test-country" } });
    [keyA, keyB] = await Promise.all([createKey(server, "mcp-a@example.com"), createKey(server, "mcp-b@example.com")]);
    [a, b] = await Promise.all([connect(server, keyA), connect(server, keyB)]);
  });

  afterAll(async () => {
    await Promise.all([a?.client.close(), b?.client.close()]);
    await server?.stop();
  });

  test("tools/list offers exactly the ten tools, each with schemas, a description and annotations", async () => {
    const { tools } = await a.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
    for (const t of tools) {
      expect(t.description!.length).toBeGreaterThan(80);
      expect(t.inputSchema.type).toBe("object");
      expect(Object.keys(t.inputSchema.properties ?? {}).length).toBeGreaterThan(0);
      expect(t.outputSchema?.type).toBe("object");
      expect(typeof t.annotations?.readOnlyHint).toBe("boolean");
      expect(typeof t.annotations?.destructiveHint).toBe("boolean");
      expect(typeof t.annotations?.idempotentHint).toBe("boolean");
      expect(t.annotations?.openWorldHint).toBe(false);
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const name of ["list_links", "get_link", "get_link_stats"]) expect(byName[name].annotations?.readOnlyHint).toBe(true);
    expect(byName.delete_link.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.create_link.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    expect(byName.create_link.inputSchema.required).toEqual(["url"]);
    expect(byName.update_link.inputSchema.required).toEqual(["slug"]);
    // The schemas are the shared TypeBox ones, emitted as plain JSON Schema without $id.
    expect((byName.set_targeting_rules.inputSchema.properties as any).rules.anyOf[0].items).toEqual(toJsonSchema(Rule));
    expect(JSON.stringify(tools)).not.toContain("$id");
  });

  test("every tool works, and its effect shows over REST and on the short address", async () => {
    const rest = api(server, keyA);

    const created = await ok(a.client, "create_link", { url: "https://example.com/landing", slug: "mcp-flow", tags: ["launch"] });
    expect(created).toMatchObject({ slug: "mcp-flow", shortUrl: `${server.url}/mcp-flow`, target: "https://example.com/landing", tags: ["launch"] });
    expect((await rest.get("/api/v1/links/mcp-flow")).body).toEqual(created);

    expect(await ok(a.client, "get_link", { slug: "mcp-flow" })).toEqual(created);

    const listed = await ok(a.client, "list_links", { tag: "launch", limit: 10 });
    expect(listed.links.map((l: any) => l.slug)).toEqual(["mcp-flow"]);
    expect(listed.nextCursor).toBeNull();

    const updated = await ok(a.client, "update_link", { slug: "mcp-flow", targetUrl: "https://example.org/new", folder: "campaigns" });
    expect(updated).toMatchObject({ target: "https://example.org/new", folder: "campaigns" });
    expect((await rest.get("/api/v1/links/mcp-flow")).body).toMatchObject({ target: "https://example.org/new", folder: "campaigns" });

    const rules = [
      { kind: "country", match: "DE", url: "https://example.de/" },
      { kind: "device", match: "ios", url: "https://apps.example.com/ios" },
    ];
    expect((await ok(a.client, "set_targeting_rules", { slug: "mcp-flow", rules })).rules).toEqual(rules);
    expect((await rest.get("/api/v1/links/mcp-flow")).body.rules).toEqual(rules);

    const abUrls = [{ url: "https://b.example.com/variant", weight: 3 }];
    expect((await ok(a.client, "set_ab_test", { slug: "mcp-flow", abUrls })).abUrls).toEqual(abUrls);
    expect((await rest.get("/api/v1/links/mcp-flow")).body.abUrls).toEqual(abUrls);

    const preview = await ok(a.client, "set_link_preview", {
      slug: "mcp-flow",
      serveOg: true,
      ogTitle: "Launch <day>",
      ogDescription: "All about it",
      ogImageUrl: "https://cdn.example.com/card.png",
    });
    expect(preview).toMatchObject({ serveOg: true, ogTitle: "Launch <day>", ogDescription: "All about it" });

    // The short address follows what the tools set: rules first, then the A/B variant; crawlers see the card.
    const visit = (headers: Record<string, string>) => fetch(`${server.url}/mcp-flow`, { redirect: "manual", headers });
    const german = await visit({ "user-agent": DESKTOP_UA, "x-test-country": "DE" });
    expect([german.status, german.headers.get("location")]).toEqual([302, "https://example.de/"]);
    const iphone = await visit({ "user-agent": IPHONE_UA });
    expect([iphone.status, iphone.headers.get("location")]).toEqual([302, "https://apps.example.com/ios"]);
    const desktop = await visit({ "user-agent": DESKTOP_UA, "x-test-country": "FR" });
    expect([desktop.status, desktop.headers.get("location")]).toEqual([302, "https://b.example.com/variant"]);
    const crawler = await visit({ "user-agent": CRAWLER_UA });
    expect(crawler.status).toBe(200);
    expect(await crawler.text()).toContain("Launch &lt;day&gt;");

    // Clicks are recorded off the hot path; wait until the three human visits are counted.
    let stats: any;
    for (let i = 0; i < 50; i++) {
      stats = await ok(a.client, "get_link_stats", { slug: "mcp-flow" });
      if (stats.totalClicks >= 3) break;
      await Bun.sleep(100);
    }
    expect(stats).toMatchObject({ slug: "mcp-flow", totalClicks: 3, byVariant: { "0": 1 } });
    expect(stats.last24h).toHaveLength(24);
    expect(stats).toEqual((await rest.get("/api/v1/links/mcp-flow/stats")).body);

    const bulk = await ok(a.client, "bulk_create_links", {
      links: [
        { url: "https://example.com/one", slug: "mcp-bulk-one" },
        { url: "javascript:alert(1)" },
        { url: "https://example.com/three", slug: "mcp-flow" },
      ],
    });
    expect(bulk).toMatchObject({ created: 1, failed: 2 });
    expect(bulk.results[0]).toMatchObject({ index: 0, ok: true, slug: "mcp-bulk-one" });
    expect(bulk.results[1]).toMatchObject({ index: 1, ok: false, error: { code: "invalid_input" } });
    expect(bulk.results[2]).toMatchObject({ index: 2, ok: false, error: { code: "slug_taken" } });
    expect((await rest.get("/api/v1/links/mcp-bulk-one")).status).toBe(200);

    expect(await ok(a.client, "delete_link", { slug: "mcp-flow" })).toEqual({ deleted: true, slug: "mcp-flow" });
    expect((await rest.get("/api/v1/links/mcp-flow")).status).toBe(404);
    expect((await visit({ "user-agent": DESKTOP_UA })).status).toBe(404);
  });

  test("tool failures are isError results carrying the problem object, and the session goes on", async () => {
    await ok(a.client, "create_link", { url: "https://example.com/taken", slug: "mcp-taken" });

    expect(await problem(a.client, "create_link", { url: "not a url" })).toMatchObject({
      status: 400,
      code: "invalid_input",
      errors: [{ path: "/url" }],
    });
    expect(await problem(a.client, "create_link", { url: "https://example.com", bogus: 1 })).toMatchObject({
      code: "invalid_input",
      errors: [{ path: "/bogus", message: "unknown field" }],
    });

    expect(await problem(a.client, "get_link", {})).toMatchObject({ code: "invalid_input", errors: [{ path: "/slug" }] });
    expect(await problem(a.client, "update_link", { slug: "mcp-taken", url: "https://example.com" })).toMatchObject({
      code: "invalid_input",
      errors: [{ path: "/url", message: "unknown field" }],
    });
    expect(await problem(a.client, "set_ab_test", { slug: "mcp-taken", abUrls: [{ url: "https://example.com", weight: -1 }] }))
      .toMatchObject({ code: "invalid_input" });
    expect(await problem(a.client, "list_links", { limit: 0 })).toMatchObject({ code: "invalid_input" });
    expect(await problem(a.client, "get_link", { slug: "mcp-no-such-link" })).toMatchObject({ status: 404, code: "not_found" });
    expect(await problem(a.client, "create_link", { url: "https://example.com/again", slug: "mcp-taken" })).toMatchObject({
      status: 409,
      code: "slug_taken",
    });
    expect(await problem(a.client, "create_link", { url: "https://example.com", slug: "dashboard" })).toMatchObject({ code: "slug_reserved" });

    // An unknown tool is a JSON-RPC error (MCP spec), not a crash: the next call on the same session works.
    await expect(a.client.callTool({ name: "drop_database", arguments: {} })).rejects.toThrow(/Unknown tool/);
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
      expect(await problem(b.client, name, args)).toMatchObject({ status: 404, code: "not_found" });
    }
    const listedByB = await ok(b.client, "list_links", {});
    expect(listedByB.links.map((l: any) => l.slug)).not.toContain("mcp-isolated");
    const bulkByB = await ok(b.client, "bulk_create_links", { links: [{ url: "https://example.com/x", slug: "mcp-isolated" }] });
    expect(bulkByB.results[0].error.code).toBe("slug_taken");

    expect((await api(server, keyA).get("/api/v1/links/mcp-isolated")).body).toEqual(original);
  });

  test("sessions: opened by initialize, bound to the account, ended by DELETE", async () => {
    const sessionId = a.transport.sessionId!;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);

    const own = await rpc(server, TOOLS_LIST, { authorization: `Bearer ${keyA}`, "mcp-session-id": sessionId });
    expect(own.status).toBe(200);
    expect((await own.json()).result.tools).toHaveLength(10);

    // Another account's key with this session id: the session does not exist for it.
    const foreign = await rpc(server, TOOLS_LIST, { authorization: `Bearer ${keyB}`, "mcp-session-id": sessionId });
    expect(foreign.status).toBe(404);
    expect((await foreign.json()).code).toBe("not_found");
    const unknown = await rpc(server, TOOLS_LIST, { authorization: `Bearer ${keyA}`, "mcp-session-id": crypto.randomUUID() });
    expect(unknown.status).toBe(404);

    // A session of its own, ended with DELETE (what the SDK's terminateSession sends).
    const c = await connect(server, keyA);
    const id = c.transport.sessionId!;
    expect(id).not.toBe(sessionId);
    await c.transport.terminateSession();
    const ended = await rpc(server, TOOLS_LIST, { authorization: `Bearer ${keyA}`, "mcp-session-id": id });
    expect(ended.status).toBe(404);
    await c.client.close();

    // The first session is untouched.
    expect((await ok(a.client, "list_links", { limit: 1 })).links.length).toBeLessThanOrEqual(1);
  });

  test("stateless: a plain JSON-RPC POST without a session works and opens none", async () => {
    const list = await rpc(server, TOOLS_LIST, { authorization: `Bearer ${keyA}` });
    expect(list.status).toBe(200);
    expect(list.headers.get("content-type")).toContain("application/json");
    expect(list.headers.get("mcp-session-id")).toBeNull();
    expect(list.headers.get("ratelimit-limit")).toBe("10000");
    const tools = (await list.json()).result.tools.map((t: any) => t.name).sort();
    expect(tools).toEqual(TOOL_NAMES);

    const created = await rpc(
      server,
      { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "create_link", arguments: { url: "https://example.com/raw", slug: "mcp-raw" } } },
      { authorization: `Bearer ${keyA}` },
    );
    const body = await created.json();
    expect(body).toMatchObject({ jsonrpc: "2.0", id: 7, result: { structuredContent: { slug: "mcp-raw" } } });
    expect((await api(server, keyA).get("/api/v1/links/mcp-raw")).status).toBe(200);

    // initialize without a session header opens one: the answer names it.
    const init = await rpc(server, INITIALIZE, { authorization: `Bearer ${keyA}` });
    expect(init.status).toBe(200);
    expect(init.headers.get("mcp-session-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect((await init.json()).result.serverInfo.name).toBe("clink");
  });

  test("malformed tools/call params answer JSON-RPC -32602 Invalid params, naming the field, and change nothing", async () => {
    const malformed: [unknown, string][] = [
      [{ name: 5, arguments: {} }, "name"],
      [{ name: "create_link", arguments: "url=https://example.com/x" }, "arguments"],
      [{ name: "create_link", arguments: [{ url: "https://example.com/x" }] }, "arguments"],
      [{ arguments: { url: "https://example.com/x" } }, "name"],
      [undefined, "params"],
    ];
    // Stateless, and inside the session the SDK client opened.
    const headerSets: Record<string, string>[] = [
      { authorization: `Bearer ${keyA}` },
      { authorization: `Bearer ${keyA}`, "mcp-session-id": a.transport.sessionId! },
    ];
    for (const [params, field] of malformed) {
      for (const headers of headerSets) {
        const res = await rpc(server, { jsonrpc: "2.0", id: 9, method: "tools/call", ...(params === undefined ? {} : { params }) }, headers);
        expect(res.status).toBe(200);
        const body = await res.json();
        expect(body).toMatchObject({ jsonrpc: "2.0", id: 9, error: { code: -32602 } });
        expect(body.error.message).toContain("Invalid tools/call request");
        expect(body.error.message).toContain(`"${field}"`);
        expect(body.result).toBeUndefined();
      }
    }
    // Nothing was created, and the session still serves well-formed calls.
    expect((await api(server, keyA).get("/api/v1/links?q=example.com/x")).body).toMatchObject({ links: [] });
    expect((await ok(a.client, "list_links", { limit: 1 })).links.length).toBeLessThanOrEqual(1);
  });

  test("401 problem+json with WWW-Authenticate without a valid key; keys in the query string are ignored", async () => {
    const attempts: Record<string, string>[] = [{}, { authorization: "Bearer ck_not_a_real_key_000000000000000000" }, { authorization: keyA }];
    for (const headers of attempts) {
      const res = await rpc(server, TOOLS_LIST, headers);
      expect(res.status).toBe(401);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect((await res.json()).code).toBe("unauthorized");
    }
    for (const query of [`access_token=${keyA}`, `key=${keyA}`, `token=${keyA}`]) {
      const res = await fetch(`${server.url}/mcp?${query}`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify(TOOLS_LIST),
      });
      expect(res.status).toBe(401);
    }
    // The SDK Client surfaces the 401 as a failed connect.
    const client = new Client({ name: "clink-e2e", version: "1.0.0" });
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)))).rejects.toThrow();
  });

  test("403 problem+json for a foreign Origin (DNS rebinding), even with a valid key; own origin passes", async () => {
    for (const origin of ["https://evil.example", "http://localhost:1", "null", `${server.url}.evil.example`]) {
      const res = await rpc(server, TOOLS_LIST, { authorization: `Bearer ${keyA}`, origin });
      expect(res.status).toBe(403);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect((await res.json()).code).toBe("forbidden");
    }
    const same = await rpc(server, TOOLS_LIST, { authorization: `Bearer ${keyA}`, origin: server.url });
    expect(same.status).toBe(200);
  });

  test("GET answers 405 (no server-initiated stream); other edge cases answer problem+json", async () => {
    const auth = { authorization: `Bearer ${keyA}` };
    const get = await fetch(`${server.url}/mcp`, { headers: { ...auth, accept: "text/event-stream" } });
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST, DELETE");

    const put = await fetch(`${server.url}/mcp`, { method: "PUT", headers: auth });
    expect(put.status).toBe(405);

    const noSession = await fetch(`${server.url}/mcp`, { method: "DELETE", headers: auth });
    expect(noSession.status).toBe(400);

    const notJson = await fetch(`${server.url}/mcp`, { method: "POST", headers: { ...auth, "content-type": "text/plain" }, body: "hi" });
    expect(notJson.status).toBe(415);
    const broken = await rpc(server, undefined, auth);
    expect(broken.status).toBe(400);
    const badJson = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: "{",
    });
    expect([badJson.status, (await badJson.json()).code]).toEqual([400, "invalid_json"]);
  });
});

describe("MCP and REST share one rate-limit budget per key", () => {
  let server: TestServer;

  /** The limiter counts per clock minute: start a budget test early in one, so it cannot straddle a reset. */
  async function freshMinute(): Promise<void> {
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 5_000) await Bun.sleep(left + 100);
  }

  beforeAll(async () => {
    server = await startServer({ env: { RATE_LIMIT_PER_MINUTE: "5" } });
  });

  afterAll(async () => {
    await server?.stop();
  });

  test("MCP requests use up the budget REST then finds exhausted, and MCP gets 429 with Retry-After", async () => {
    const key = await createKey(server, "mcp-limit@example.com");
    await freshMinute();
    const rest = api(server, key);
    expect((await rest.get("/api/v1/links")).status).toBe(200);
    expect((await rest.get("/api/v1/links")).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const res = await rpc(server, TOOLS_LIST, { authorization: `Bearer ${key}` });
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit-remaining")).toBe(String(2 - i));
    }
    const limitedRest = await rest.get("/api/v1/links");
    expect(limitedRest.status).toBe(429);
    expect(limitedRest.headers.get("retry-after")).toMatch(/^\d+$/);

    const limitedMcp = await rpc(server, TOOLS_LIST, { authorization: `Bearer ${key}` });
    expect(limitedMcp.status).toBe(429);
    expect(Number(limitedMcp.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await limitedMcp.json()).code).toBe("rate_limited");
  }, 20_000);

  test("a JSON-RPC batch counts as many requests as it holds messages, and one over the budget runs nothing", async () => {
    const key = await createKey(server, "mcp-limit-batch@example.com");
    await freshMinute();
    const auth = { authorization: `Bearer ${key}` };
    const create = (i: number) => ({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "create_link", arguments: { url: "https://example.com/", slug: `batch-limit-${i}` } } });
    const three = await rpc(server, [create(1), create(2), create(3)], auth);
    expect(three.status).toBe(200);
    expect(three.headers.get("ratelimit-remaining")).toBe("2");
    expect((await three.json()).map((r: any) => r.result.isError ?? false)).toEqual([false, false, false]);
    // 2 left, a batch of 3: refused as a whole, before any of its calls runs.
    const over = await rpc(server, [create(4), create(5), create(6)], auth);
    expect(over.status).toBe(429);
    expect((await over.json()).code).toBe("rate_limited");
    expect(over.headers.get("retry-after")).toMatch(/^\d+$/);
    const again = await rpc(server, TOOLS_LIST, auth);
    expect(again.status).toBe(429);
    // A second key of the same account (its own budget) sees the first batch's links and none of the second's.
    const owner = api(server, await createKey(server, "mcp-limit-batch@example.com"));
    expect((await owner.get("/api/v1/links/batch-limit-3")).status).toBe(200);
    expect((await owner.get("/api/v1/links/batch-limit-4")).status).toBe(404);
  }, 20_000);

  test("tool calls through the SDK Client count too: the client sees the 429, then REST does", async () => {
    const key = await createKey(server, "mcp-limit-client@example.com");
    await freshMinute();
    const { client } = await connect(server, key);
    let failure: unknown = null;
    let calls = 0;
    while (failure === null && calls < 10) {
      calls++;
      await client.callTool({ name: "list_links", arguments: {} }).catch((e) => (failure = e));
    }
    // initialize and notifications/initialized (and the client's GET probe) took part of the 5.
    expect(calls).toBeLessThanOrEqual(4);
    expect(String(failure)).toContain("429");
    expect((await api(server, key).get("/api/v1/links")).status).toBe(429);
    await client.close();
  }, 20_000);
});

describe("MCP session store (in process, with a test clock)", () => {
  const MINUTE = 60_000;
  let now = 0;
  const limits = { maxSessions: 3, maxPerAccount: 2, idleMs: 30 * MINUTE };

  /** Opens a session the way the route does: a real server and transport answering a real initialize request. */
  async function open(sessions: McpSessions, accountId: string): Promise<string> {
    const caller = { accountId, keyId: null };
    const server = getServer({} as Deps, caller);
    const transport = sessions.open(caller, server);
    await server.connect(transport);
    const res = await transport.handleRequest(
      new Request("http://clink.test/mcp", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify(INITIALIZE),
      }),
    );
    expect(res.status).toBe(200);
    return res.headers.get("mcp-session-id")!;
  }

  test("a session expires after 30 idle minutes; each use restarts the clock", async () => {
    now = 0;
    const sessions = new McpSessions(() => now, limits);
    const id = await open(sessions, "acct-a");
    now = 29 * MINUTE;
    expect(sessions.get(id, "acct-a")).toBeDefined();
    now = 58 * MINUTE;
    expect(sessions.get(id, "acct-a")).toBeDefined();
    now = 88 * MINUTE + 1;
    expect(sessions.get(id, "acct-a")).toBeUndefined();
    expect(sessions.size).toBe(0);
  });

  test("a session is invisible to other accounts and stays usable by its own", async () => {
    now = 0;
    const sessions = new McpSessions(() => now, limits);
    const id = await open(sessions, "acct-a");
    expect(sessions.get(id, "acct-b")).toBeUndefined();
    expect(sessions.get(id, "acct-a")).toBeDefined();
  });

  test("bounded: an account's least recently used session goes first, then the process's", async () => {
    now = 0;
    const sessions = new McpSessions(() => now, limits);
    const a1 = await open(sessions, "acct-a");
    const a2 = await open(sessions, "acct-a");
    expect(sessions.get(a1, "acct-a")).toBeDefined(); // a2 is now the account's least recently used
    const a3 = await open(sessions, "acct-a");
    expect([!!sessions.get(a1, "acct-a"), !!sessions.get(a2, "acct-a"), !!sessions.get(a3, "acct-a")]).toEqual([true, false, true]);

    const b1 = await open(sessions, "acct-b"); // 3 sessions: the process limit
    const c1 = await open(sessions, "acct-c"); // evicts the least recently used of all: a1
    expect(sessions.size).toBe(3);
    expect(sessions.get(a1, "acct-a")).toBeUndefined();
    for (const [id, acct] of [[a3, "acct-a"], [b1, "acct-b"], [c1, "acct-c"]]) expect(sessions.get(id, acct)).toBeDefined();
    await sessions.closeAll();
    expect(sessions.size).toBe(0);
  });
});

/**
 * The MCP server (design §5) against the real embedded server, driven by the SDK's own Client over Streamable HTTP:
 * every tool's effect checked over REST and on the short address the redirector serves. The tools' schemas, tool
 * errors, account isolation, sessions, the HTTP edge and the shared rate limit are tested in process in
 * test/app/mcp.test.ts, test/app/api-edge.test.ts and test/app/e2e-ported.test.ts. The session store's tests at the
 * end run in process too (a test clock, no server); they stay in this file.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ALL_SCOPES } from "../../control/auth/scopes.ts";
import type { Deps } from "../../control/deps.ts";
import { getServer } from "../../control/mcp/server.ts";
import { McpSessions } from "../../control/mcp/sessions.ts";
import { api, createKey, startServer, type TestServer } from "../helpers/server.ts";

const DESKTOP_UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
const IPHONE_UA =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
const CRAWLER_UA = "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)";

async function connect(server: TestServer, key: string): Promise<Client> {
  const client = new Client({ name: "clink-e2e", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  }));
  return client;
}

type ToolResult = { isError?: boolean; structuredContent?: any; content: { type: string; text?: string }[] };

/** The structured result of a successful call, after checking the text item carries the same JSON. */
async function ok(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  if (r.isError) throw new Error(`${name} failed: ${r.content[0]?.text}`);
  expect(r.content[0].type).toBe("text");
  expect(JSON.parse(r.content[0].text!)).toEqual(r.structuredContent);
  return r.structuredContent;
}

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
};

describe("MCP server over Streamable HTTP", () => {
  let server: TestServer;
  let keyA: string;
  let a: Client;

  beforeAll(async () => {
    server = await startServer({ env: { RATE_LIMIT_PER_MINUTE: "10000", COUNTRY_HEADER: "x-test-country" } });
    keyA = await createKey(server, "mcp-a@example.com");
    a = await connect(server, keyA);
  });

  afterAll(async () => {
    await a?.close();
    await server?.stop();
  });

  test("every tool works, and its effect shows over REST and on the short address", async () => {
    const rest = api(server, keyA);

    const created = await ok(a, "create_link", { url: "https://example.com/landing", slug: "mcp-flow", tags: ["launch"] });
    expect(created).toMatchObject({ slug: "mcp-flow", shortUrl: `${server.url}/mcp-flow`, target: "https://example.com/landing", tags: ["launch"] });
    expect((await rest.get("/api/v1/links/mcp-flow")).body).toEqual(created);

    expect(await ok(a, "get_link", { slug: "mcp-flow" })).toEqual(created);

    const listed = await ok(a, "list_links", { tag: "launch", limit: 10 });
    expect(listed.links.map((l: any) => l.slug)).toEqual(["mcp-flow"]);
    expect(listed.nextCursor).toBeNull();

    const updated = await ok(a, "update_link", { slug: "mcp-flow", targetUrl: "https://example.org/new", folder: "campaigns" });
    expect(updated).toMatchObject({ target: "https://example.org/new", folder: "campaigns" });
    expect((await rest.get("/api/v1/links/mcp-flow")).body).toMatchObject({ target: "https://example.org/new", folder: "campaigns" });

    const rules = [
      { kind: "country", match: "DE", url: "https://example.de/" },
      { kind: "device", match: "ios", url: "https://apps.example.com/ios" },
    ];
    expect((await ok(a, "set_targeting_rules", { slug: "mcp-flow", rules })).rules).toEqual(rules);
    expect((await rest.get("/api/v1/links/mcp-flow")).body.rules).toEqual(rules);

    const abUrls = [{ url: "https://b.example.com/variant", weight: 3 }];
    expect((await ok(a, "set_ab_test", { slug: "mcp-flow", abUrls })).abUrls).toEqual(abUrls);
    expect((await rest.get("/api/v1/links/mcp-flow")).body.abUrls).toEqual(abUrls);

    const preview = await ok(a, "set_link_preview", {
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
      stats = await ok(a, "get_link_stats", { slug: "mcp-flow" });
      if (stats.totalClicks >= 3) break;
      await Bun.sleep(100);
    }
    expect(stats).toMatchObject({ slug: "mcp-flow", totalClicks: 3, byVariant: { "0": 1 } });
    expect(stats.last24h).toHaveLength(24);
    expect(stats).toEqual((await rest.get("/api/v1/links/mcp-flow/stats")).body);

    const bulk = await ok(a, "bulk_create_links", {
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

    expect(await ok(a, "delete_link", { slug: "mcp-flow" })).toEqual({ deleted: true, slug: "mcp-flow" });
    expect((await rest.get("/api/v1/links/mcp-flow")).status).toBe(404);
    expect((await visit({ "user-agent": DESKTOP_UA })).status).toBe(404);
  });
});

describe("MCP session store (in process, with a test clock)", () => {
  const MINUTE = 60_000;
  let now = 0;
  const limits = { maxSessions: 3, maxPerAccount: 2, idleMs: 30 * MINUTE };

  /** Opens a session the way the route does: a real server and transport answering a real initialize request. */
  async function open(sessions: McpSessions, accountId: string): Promise<string> {
    const caller = { accountId, keyId: null, scopes: ALL_SCOPES };
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

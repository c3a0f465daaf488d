/**
 * The MCP server (design §5) against the real embedded server, driven by the SDK's own Client over Streamable HTTP:
 * every tool's effect checked over REST and on the short address the redirector serves. The tools' schemas, tool
 * errors, account isolation, sessions, the HTTP edge and the shared rate limit are tested in process in
 * test/app/mcp.test.ts, test/app/api-edge.test.ts and test/app/e2e-ported.test.ts. The sessions' tests at the end
 * run in process too (a test clock, no server); they stay in this file.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpSessions } from "../../control/mcp/sessions.ts";
import { MemoryMcpSessions } from "../../shared/adapters/memory/mcp-sessions.ts";
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

describe("MCP sessions (in process, with a test clock; the store's contract is test/contract/hot-state-mcp-sessions)", () => {
  const MINUTE = 60_000;
  let now = 0;
  const limits = { maxPerAccount: 2, idleMs: 30 * MINUTE };
  const fresh = () => new McpSessions(new MemoryMcpSessions(() => now), limits);

  test("a session expires after 30 idle minutes; each use restarts the clock", async () => {
    now = 0;
    const sessions = fresh();
    const id = await sessions.open("acct-a");
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    now = 29 * MINUTE;
    expect(await sessions.use(id, "acct-a")).toBe(true);
    now = 58 * MINUTE;
    expect(await sessions.use(id, "acct-a")).toBe(true);
    now = 88 * MINUTE + 1;
    expect(await sessions.use(id, "acct-a")).toBe(false);
  });

  test("a session is invisible to other accounts, stays usable by its own, and ends once", async () => {
    now = 0;
    const sessions = fresh();
    const id = await sessions.open("acct-a");
    expect([await sessions.use(id, "acct-b"), await sessions.end(id, "acct-b")]).toEqual([false, false]);
    expect(await sessions.use(id, "acct-a")).toBe(true);
    expect([await sessions.end(id, "acct-a"), await sessions.end(id, "acct-a"), await sessions.use(id, "acct-a")]).toEqual([true, false, false]);
  });

  test("bounded per account: its least recently used session goes first; ids it never issued are no session", async () => {
    now = 0;
    const sessions = fresh();
    const a1 = await sessions.open("acct-a");
    const a2 = await sessions.open("acct-a");
    const b1 = await sessions.open("acct-b");
    expect(await sessions.use(a1, "acct-a")).toBe(true); // a2 is now the account's least recently used
    const a3 = await sessions.open("acct-a");
    expect([await sessions.use(a1, "acct-a"), await sessions.use(a2, "acct-a"), await sessions.use(a3, "acct-a")]).toEqual([true, false, true]);
    expect(await sessions.use(b1, "acct-b")).toBe(true);
    for (const bogus of ["", "x".repeat(10_000), a1.toUpperCase(), `${a1} `]) expect(await sessions.use(bogus, "acct-a")).toBe(false);
  });
});

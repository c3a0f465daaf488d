/**
 * The MCP server with the clients people connect it with, headless, against a spawned embedded server (issue #23):
 * the MCP Inspector's CLI with a `ck_` key, on both its protocol eras (2025-11-25 in a session, the stateless
 * 2026-07-28), and mcp-remote (the stdio bridge of Claude Desktop, Cursor and others, here on 2025-06-18) with a
 * wrong key; mcp-remote signing in with OAuth, its browser step (sign-in, consent) driven in Chromium, then listing and
 * calling tools, and starting again later without a browser, also once its access token has expired (refreshed);
 * the Inspector with the access token it got; the account holder disconnecting it in the dashboard ends both. The
 * documents' connection examples, mcp-remote with a key and the Inspector signing in by itself among them, are run
 * in test/e2e/mcp-clients-docs.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { authorizationUrlOf, authorizeInBrowser, clientSandbox, disconnectInBrowser, inspectorCli, mcpRemoteCommand, newAccount, type ClientSandbox } from "../helpers/mcp-clients.ts";
import { initialize, spawnStdio, type StdioPeer } from "../helpers/mcp-stdio.ts";
import { freePort, startServer, type TestServer } from "../helpers/server.ts";

/** The ten tools, as every client must list them. */
const TOOLS = [
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
const FLOW_MS = 120_000;

let server: TestServer;

const toolNames = (listed: { tools: { name: string }[] }) => listed.tools.map((t) => t.name).sort();

/** A tools/call's structured result, after checking it is not an error. */
function structured(result: { isError?: boolean; structuredContent?: any; content?: { text?: string }[] }): any {
  if (result.isError) throw new Error(`the tool failed: ${result.content?.[0]?.text}`);
  return result.structuredContent;
}

/** What a client sent through a recordingProxy: each request's MCP-Protocol-Version header and JSON-RPC method. */
interface Seen {
  version: string | null;
  method?: string;
  session: boolean;
}

/** A pass-through in front of the server that notes what each request says of its protocol revision. */
function recordingProxy(target: string): { url: string; seen: Seen[]; stop(): void } {
  const seen: Seen[] = [];
  const proxy = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const body = request.method === "POST" ? await request.text() : undefined;
      const method = body?.startsWith("{") ? (JSON.parse(body) as { method?: string }).method : undefined;
      seen.push({ version: request.headers.get("mcp-protocol-version"), method, session: request.headers.has("mcp-session-id") });
      const { pathname, search } = new URL(request.url);
      const answer = await fetch(`${target}${pathname}${search}`, { method: request.method, headers: request.headers, body, redirect: "manual" });
      return new Response(await answer.arrayBuffer(), { status: answer.status, headers: answer.headers });
    },
  });
  return { url: `http://127.0.0.1:${proxy.port}`, seen, stop: () => void proxy.stop(true) };
}

beforeAll(async () => {
  server = await startServer({ env: { RATE_LIMIT_PER_MINUTE: "10000" } });
});
afterAll(() => server?.stop());

/**
 * Each Inspector run is a Node start of a large package (about a second of CPU), so each runs once per scenario:
 * its tools/call with arguments is run by the eras test (list_links) and the OAuth one (get_link with a slug);
 * creating and reading links through a real client, by mcp-remote's tests.
 */
describe("the MCP Inspector CLI", () => {
  let sandbox: ClientSandbox;
  /** An account of the Inspector's, with no links (the eras test lists them). */
  let key: string;
  beforeAll(async () => {
    sandbox = clientSandbox();
    key = (await newAccount(server, "inspector@example.com")).key;
  });
  afterAll(() => sandbox?.remove());

  test("with a key: lists the ten tools, with no schema error in its portability check", async () => {
    const target = [`${server.url}/mcp`, "--transport", "http", "--header", `Authorization: Bearer ${key}`];
    // --strict: the Inspector's schema portability check exits 6 on a tool schema some model provider would reject.
    expect(toolNames((await inspectorCli([...target, "--method", "tools/list", "--strict"], sandbox.env)).result)).toEqual(TOOLS);
  }, FLOW_MS);

  test("on both protocol eras: 2025-11-25 after an initialize, in a session; 2026-07-28 stateless, no initialize", async () => {
    const proxy = recordingProxy(server.url);
    try {
      const listLinks = async (era: string) => {
        proxy.seen.length = 0;
        const args = ["--transport", "http", "--header", `Authorization: Bearer ${key}`, "--protocol-era", era];
        const answer = await inspectorCli([`${proxy.url}/mcp`, ...args, "--method", "tools/call", "--tool-name", "list_links", "--tool-args-json", "{}"], sandbox.env);
        expect(structured(answer.result)).toEqual({ links: [], nextCursor: null });
        return proxy.seen.filter((r) => r.method !== undefined);
      };

      const legacy = await listLinks("legacy");
      expect(legacy[0]).toEqual({ version: null, method: "initialize", session: false });
      expect(legacy.slice(1).map((r) => [r.version, r.session])).toEqual(legacy.slice(1).map(() => ["2025-11-25", true]));
      expect(legacy.map((r) => r.method)).toContain("tools/call");

      const modern = await listLinks("modern");
      expect(modern.map((r) => r.method)).not.toContain("initialize");
      expect(modern.map((r) => r.method)).toContain("tools/call");
      expect(modern.map((r) => [r.version, r.session])).toEqual(modern.map(() => ["2026-07-28", false]));
    } finally {
      proxy.stop();
    }
  }, FLOW_MS);

  test("without credentials it stops with the server's 401, and never opens a browser to sign in", async () => {
    await expect(
      inspectorCli([`${server.url}/mcp`, "--transport", "http", "--method", "tools/list", "--stored-auth-only"], sandbox.env),
    ).rejects.toThrow(/auth_required[\s\S]*401/);
  }, FLOW_MS);
});

describe("mcp-remote, the stdio bridge", () => {
  const peers: StdioPeer[] = [];
  const sandboxes: ClientSandbox[] = [];
  const sandbox = () => (sandboxes.push(clientSandbox()), sandboxes.at(-1)!);
  const bridge = (command: string[], env: Record<string, string>) => (peers.push(spawnStdio(command, { env })), peers.at(-1)!);
  afterAll(async () => {
    await Promise.all(peers.map((p) => p.close()));
    for (const s of sandboxes) s.remove();
  });

  // With a key in --header from the environment, as the documents' Claude Desktop entry passes it: run with that
  // very command line by test/e2e/mcp-clients-docs.test.ts (initialize, list, call, a tool error).

  test("with a wrong key in --header: it offers the sign-in page instead (as docs/mcp.md warns)", async () => {
    const box = sandbox();
    const peer = bridge(mcpRemoteCommand(`${server.url}/mcp`, "--header", `Authorization: Bearer ck_${"x".repeat(40)}`), box.env);
    const initialized = initialize(peer);
    initialized.catch(() => {}); // it waits for a sign-in that never comes; closed below
    expect(new URL(await authorizationUrlOf(box, initialized)).pathname).toBe("/oauth/authorize");
    await peer.close();
  }, FLOW_MS);

  test("with OAuth: the browser signs in and consents, then the tools work; a restart needs no browser, nor does an expired token (refreshed); the Inspector uses the token; disconnected in the dashboard, it must ask again", async () => {
    const person = await newAccount(server, "bridge-oauth@example.com");
    const box = sandbox();
    const callbackPort = String(await freePort());
    const command = mcpRemoteCommand(`${server.url}/mcp`, callbackPort, "--auth-timeout", "60");
    const peer = bridge(command, box.env);
    const initialized = initialize(peer, FLOW_MS / 2);

    const authorizationUrl = new URL(await authorizationUrlOf(box, initialized));
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${server.url}/oauth/authorize`);
    expect(authorizationUrl.searchParams.get("resource")).toBe(`${server.url}/mcp`);
    expect(authorizationUrl.searchParams.get("redirect_uri")).toBe(`http://localhost:${callbackPort}/oauth/callback`);
    const signIn = await authorizeInBrowser(authorizationUrl.href, person);
    expect(signIn.consent).toContain("MCP CLI Proxy"); // the name mcp-remote registered itself with
    expect(signIn.consent).toContain(person.email);
    expect(signIn.done).toMatch(/success/i);

    expect((await initialized).serverInfo.name).toBe("clink");
    expect(toolNames(await peer.request("tools/list"))).toEqual(TOOLS);
    const created = structured(await peer.request("tools/call", { name: "create_link", arguments: { url: "https://example.com/oauth", slug: "via-oauth" } }));
    expect(created).toMatchObject({ slug: "via-oauth", target: "https://example.com/oauth" });
    await peer.close();

    // The token was stored: a client starting the bridge again connects at once, and no browser opens.
    const first = box.storedTokens()!;
    expect(first.access_token).toStartWith("cla_");
    const again = bridge(command, box.env);
    await initialize(again);
    const listed = structured(await again.request("tools/call", { name: "list_links", arguments: {} }));
    expect(listed.links.map((l: { slug: string }) => l.slug)).toEqual(["via-oauth"]);
    expect(again.stderr).not.toContain("Please authorize");
    await again.close();

    // An hour later the access token has expired: the bridge refreshes it (the refresh token rotates), no browser.
    box.expireStoredTokens();
    const later = bridge(command, box.env);
    await initialize(later);
    expect((await later.request("tools/list")).tools).toHaveLength(TOOLS.length);
    const refreshed = box.storedTokens()!;
    expect(refreshed.access_token).toStartWith("cla_");
    expect(refreshed.access_token).not.toBe(first.access_token);
    expect(refreshed.refresh_token).not.toBe(first.refresh_token);
    expect(later.stderr).not.toContain("Please authorize");

    // The access token, pasted into the Inspector, reaches the same account.
    const token = refreshed.access_token;
    const got = await inspectorCli(
      [`${server.url}/mcp`, "--transport", "http", "--header", `Authorization: Bearer ${token}`, "--method", "tools/call", "--tool-name", "get_link", "--tool-args-json", '{"slug":"via-oauth"}'],
      box.env,
    );
    expect(structured(got.result)).toEqual(created);

    // The account holder disconnects it in the dashboard: the token is refused at once, the bridge must ask again.
    const { before, after } = await disconnectInBrowser(server.url, person, "MCP CLI Proxy");
    expect(before).not.toContain("never"); // its last use is shown
    expect(after).not.toContain("MCP CLI Proxy");
    await expect(
      inspectorCli([`${server.url}/mcp`, "--transport", "http", "--header", `Authorization: Bearer ${token}`, "--stored-auth-only", "--method", "tools/list"], box.env),
    ).rejects.toThrow(/auth_required[\s\S]*401/);
    const refused = later.request("tools/list");
    refused.catch(() => {}); // it waits for a sign-in that never comes; closed below
    expect(new URL(await authorizationUrlOf(box, refused)).pathname).toBe("/oauth/authorize");
    await later.close();
  }, FLOW_MS * 2);
});

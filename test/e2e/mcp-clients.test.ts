/**
 * The MCP server with the clients people connect it with, headless, against a spawned embedded server (issue #23):
 * the MCP Inspector's CLI and mcp-remote (the stdio bridge of Claude Desktop, Cursor and others) with a `ck_` key;
 * mcp-remote signing in with OAuth, its browser step (sign-in, consent) driven in Chromium, then listing and
 * calling tools, and starting again later without a browser; the Inspector with the access token it got. The
 * documents' connection examples, the Inspector signing in by itself among them, are run in
 * test/e2e/mcp-clients-docs.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { authorizationUrlOf, authorizeInBrowser, clientSandbox, inspectorCli, mcpRemoteCommand, newAccount, type ClientSandbox } from "../helpers/mcp-clients.ts";
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

beforeAll(async () => {
  server = await startServer({ env: { RATE_LIMIT_PER_MINUTE: "10000" } });
});
afterAll(() => server?.stop());

describe("the MCP Inspector CLI", () => {
  let sandbox: ClientSandbox;
  beforeAll(() => void (sandbox = clientSandbox()));
  afterAll(() => sandbox?.remove());

  test("with a key: lists the ten tools, creates a link and reads it back", async () => {
    const { key } = await newAccount(server, "inspector@example.com");
    const target = [`${server.url}/mcp`, "--transport", "http", "--header", `Authorization: Bearer ${key}`];

    expect(toolNames((await inspectorCli([...target, "--method", "tools/list"], sandbox.env)).result)).toEqual(TOOLS);

    const call = (name: string, args: object) =>
      inspectorCli([...target, "--method", "tools/call", "--tool-name", name, "--tool-args-json", JSON.stringify(args)], sandbox.env);
    const created = structured((await call("create_link", { url: "https://example.com/inspector", slug: "via-inspector" })).result);
    expect(created).toMatchObject({ slug: "via-inspector", shortUrl: `${server.url}/via-inspector`, target: "https://example.com/inspector" });
    expect(structured((await call("get_link", { slug: "via-inspector" })).result)).toEqual(created);
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

  test("with a key in --header (from the environment, as a client's config passes it): initialize, list, call", async () => {
    const { key } = await newAccount(server, "bridge-key@example.com");
    const box = sandbox();
    const peer = bridge(mcpRemoteCommand(`${server.url}/mcp`, "--header", "Authorization:${CLINK_AUTH}"), { ...box.env, CLINK_AUTH: `Bearer ${key}` });

    expect((await initialize(peer)).serverInfo.name).toBe("clink");
    expect(toolNames(await peer.request("tools/list"))).toEqual(TOOLS);
    const created = structured(await peer.request("tools/call", { name: "create_link", arguments: { url: "https://example.com/bridge", slug: "via-bridge" } }));
    expect(created).toMatchObject({ slug: "via-bridge", target: "https://example.com/bridge" });
    expect(structured(await peer.request("tools/call", { name: "get_link", arguments: { slug: "via-bridge" } }))).toEqual(created);
    // A tool error reaches the assistant as a result it can read, not as a broken bridge.
    const missing = await peer.request("tools/call", { name: "get_link", arguments: { slug: "no-such-link" } });
    expect(missing.isError).toBe(true);
    expect(JSON.parse(missing.content[0].text)).toMatchObject({ status: 404, code: "not_found" });
  }, FLOW_MS);

  test("with OAuth: the browser signs in and consents, then the tools work; a restart needs no browser; the Inspector uses the token", async () => {
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
    const again = bridge(command, box.env);
    await initialize(again);
    const listed = structured(await again.request("tools/call", { name: "list_links", arguments: {} }));
    expect(listed.links.map((l: { slug: string }) => l.slug)).toEqual(["via-oauth"]);
    expect(again.stderr).not.toContain("Please authorize");

    // The same access token, pasted into the Inspector, reaches the same account.
    const token = box.storedAccessToken();
    expect(token).toStartWith("cla_");
    const got = await inspectorCli(
      [`${server.url}/mcp`, "--transport", "http", "--header", `Authorization: Bearer ${token}`, "--method", "tools/call", "--tool-name", "get_link", "--tool-args-json", '{"slug":"via-oauth"}'],
      box.env,
    );
    expect(structured(got.result)).toEqual(created);
  }, FLOW_MS * 2);
});

/**
 * OAuth over real HTTP against a spawned server (issue #23), the way mcp-remote connects: the MCP SDK's own
 * StreamableHTTPClientTransport with an OAuthClientProvider meets a 401, discovers the metadata, registers, sends the
 * person to authorize (here a cookie-keeping visitor signs in and consents), finishes with the code, then lists and
 * calls tools; the same with the SDK's successor package (@modelcontextprotocol/client 2.x); the same person's token
 * for the REST API; revocation ends both.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import * as sdk2 from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError, type OAuthClientProvider, type OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { csrfOf, formFieldsOf } from "../helpers/dashboard-visitor.ts";
import { OAuthTestClient, REDIRECT_URI } from "../helpers/oauth-client.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
const EMAIL = "oauth-e2e@example.com";
const PASSWORD = "correct horse battery staple";

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.stop());

/** What mcp-remote keeps between its steps, in memory. */
class MemoryProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  authorizationUrl?: URL;
  redirectUrl = REDIRECT_URI;
  clientMetadata = { client_name: "E2E assistant", redirect_uris: [REDIRECT_URI], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  state = () => "e2e-state";
  clientInformation = () => this.client;
  saveClientInformation = (c: OAuthClientInformationMixed) => void (this.client = c);
  tokens = () => this.saved;
  saveTokens = (t: OAuthTokens) => void (this.saved = t);
  redirectToAuthorization = (url: URL) => void (this.authorizationUrl = url);
  saveCodeVerifier = (v: string) => void (this.verifier = v);
  codeVerifier = () => this.verifier;
  /** 2.x binds the callback to the authorization server it discovered (SEP-2352); 1.x ignores these. */
  discovery?: OAuthDiscoveryState;
  saveDiscoveryState = (state: OAuthDiscoveryState) => void (this.discovery = state);
  discoveryState = () => this.discovery;
}

test("the MCP SDK's OAuth client connects end to end: discovery, registration, consent, token, tools; revocation ends it", async () => {
  const oauth = new OAuthTestClient(server.url);
  const person = oauth.visitor();
  const signup = await person.get("/dashboard/signup");
  const created = await person.post("/dashboard/signup", { _csrf: csrfOf(signup.html), email: EMAIL, password: PASSWORD });
  expect(created.status).toBe(303);

  const provider = new MemoryProvider();
  const mcpUrl = new URL(`${server.url}/mcp`);
  const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  await expect(new Client({ name: "e2e", version: "1" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
  const url = provider.authorizationUrl!;
  expect(url.origin + url.pathname).toBe(`${server.url}/oauth/authorize`);
  expect(url.searchParams.get("resource")).toBe(`${server.url}/mcp`);
  expect(url.searchParams.get("code_challenge_method")).toBe("S256");
  expect((provider.client as { client_id: string }).client_id).toStartWith("clid_");

  // The browser step: authorize, consent page (already signed in after sign-up), allow.
  const toConsent = await person.get(url.pathname + url.search);
  expect(toConsent.status).toBe(302);
  const consent = await person.get(toConsent.headers.get("location")!);
  expect(consent.html).toContain("E2E assistant");
  const allowed = await person.post("/dashboard/authorize", { ...formFieldsOf(consent.html), decision: "allow" });
  const back = new URL(allowed.headers.get("location")!);
  expect(back.searchParams.get("state")).toBe("e2e-state");
  await first.finishAuth(back.searchParams.get("code")!);
  expect(provider.saved?.access_token).toStartWith("cla_");

  const client = new Client({ name: "e2e", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  expect((await client.listTools()).tools.length).toBeGreaterThan(5);
  const made = await client.callTool({ name: "create_link", arguments: { url: "https://example.com/e2e-oauth", slug: "e2e-oauth" } });
  expect(made.isError).toBeFalsy();
  await client.close();

  // Revoked through RFC 7009: the next call is refused with invalid_token.
  const clientId = (provider.client as { client_id: string }).client_id;
  expect((await oauth.form("/oauth/revoke", { token: provider.saved!.access_token, client_id: clientId })).status).toBe(200);
  const refused = await fetch(mcpUrl, {
    method: "POST",
    headers: { authorization: `Bearer ${provider.saved!.access_token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  expect(refused.status).toBe(401);
  expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
});

test("the 2.x client package (@modelcontextprotocol/client) connects the same way", async () => {
  const oauth = new OAuthTestClient(server.url);
  const person = oauth.visitor();
  await oauth.signIn(person, EMAIL, PASSWORD);
  const provider = new MemoryProvider();
  const mcpUrl = new URL(`${server.url}/mcp`);
  const first = new sdk2.StreamableHTTPClientTransport(mcpUrl, { authProvider: provider as unknown as sdk2.OAuthClientProvider });
  await expect(new sdk2.Client({ name: "e2e-2", version: "1" }).connect(first)).rejects.toBeInstanceOf(sdk2.UnauthorizedError);
  const url = provider.authorizationUrl!;
  const consent = await person.get((await person.get(url.pathname + url.search)).headers.get("location")!);
  const allowed = await person.post("/dashboard/authorize", { ...formFieldsOf(consent.html), decision: "allow" });
  // The callback's parameters as they came: 2.x checks `iss` against the issuer it discovered (RFC 9207) first.
  await first.finishAuth(new URL(allowed.headers.get("location")!).searchParams);
  const client = new sdk2.Client({ name: "e2e-2", version: "1" });
  await client.connect(new sdk2.StreamableHTTPClientTransport(mcpUrl, { authProvider: provider as unknown as sdk2.OAuthClientProvider }));
  expect((await client.listTools()).tools.length).toBeGreaterThan(5);
  await client.close();
});

test("a token for the REST API lists links over HTTP; the well-known and OAuth paths are never the short-link page", async () => {
  const oauth = new OAuthTestClient(server.url);
  const person = oauth.visitor();
  await oauth.signIn(person, EMAIL, PASSWORD);
  const { tokens, status } = await oauth.connect(person, { resource: `${server.url}/api/v1` });
  expect(status).toBe(200);
  const links = await fetch(`${server.url}/api/v1/links`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  expect(links.status).toBe(200);
  expect((await links.json()).links.map((l: { slug: string }) => l.slug)).toContain("e2e-oauth");
  for (const path of ["/.well-known/openid-configuration", "/oauth", "/oauth/unknown", "/.well-known/oauth-protected-resource/other"]) {
    const r = await fetch(`${server.url}${path}`);
    expect([path, r.status, r.headers.get("content-type")]).toEqual([path, 404, "application/problem+json"]);
  }
  // A whole path segment decides: "oauthx" is a short address like any other.
  const slug = await fetch(`${server.url}/oauthx`);
  expect([slug.status, slug.headers.get("content-type")?.startsWith("text/html")]).toEqual([404, true]);
});

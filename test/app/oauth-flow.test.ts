/**
 * The OAuth authorization server in process (issue #23), the whole flow by hand as an MCP client does it: discovery
 * from a 401, registration, authorize, sign-in, consent, code, token, then /mcp tools/list and /api/v1/links with the
 * token, refresh, revoke; and the connected-applications page.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { OAuthMetadataSchema, OAuthProtectedResourceMetadataSchema } from "@modelcontextprotocol/sdk/shared/auth.js";
import { SCOPES } from "../../shared/enums.ts";
import { csrfOf, formFieldsOf } from "../helpers/dashboard-visitor.ts";
import { BASE_URL, jsonOf, passwordOf, problemOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import { OAuthTestClient, REDIRECT_URI } from "../helpers/oauth-client.ts";

let cp: InProcessControlPlane;
let oauth: OAuthTestClient;
const EMAIL = "owner@example.com";
const TOOLS_LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };
const MCP_HEADERS = { accept: "application/json, text/event-stream" };

beforeAll(async () => {
  cp = await startControlPlane();
  oauth = new OAuthTestClient(BASE_URL, cp.handle);
  await cp.account(EMAIL);
});
afterAll(() => cp.close());

async function signedInVisitor(email = EMAIL) {
  await cp.account(email);
  const v = oauth.visitor();
  await oauth.signIn(v, email, passwordOf(email));
  return v;
}

describe("discovery", () => {
  test("a 401 at /mcp names the protected-resource metadata, which names us as authorization server", async () => {
    const res = await cp.request("POST", "/mcp", { json: { jsonrpc: "2.0", id: 1, method: "tools/list" }, headers: { accept: "application/json, text/event-stream" } });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain(`resource_metadata="${BASE_URL}/.well-known/oauth-protected-resource/mcp"`);
    const prm = await jsonOf(await cp.request("GET", "/.well-known/oauth-protected-resource/mcp"));
    expect(OAuthProtectedResourceMetadataSchema.parse(prm)).toMatchObject({ resource: `${BASE_URL}/mcp`, authorization_servers: [BASE_URL] });
    expect(await jsonOf(await cp.request("GET", "/.well-known/oauth-protected-resource"))).toEqual(prm);
    const api = await jsonOf(await cp.request("GET", "/.well-known/oauth-protected-resource/api/v1"));
    expect(api.resource).toBe(`${BASE_URL}/api/v1`);
    const as = OAuthMetadataSchema.parse(await jsonOf(await cp.request("GET", "/.well-known/oauth-authorization-server")));
    expect(as).toMatchObject({
      issuer: BASE_URL, authorization_endpoint: `${BASE_URL}/oauth/authorize`, token_endpoint: `${BASE_URL}/oauth/token`,
      registration_endpoint: `${BASE_URL}/oauth/register`, code_challenge_methods_supported: ["S256"], scopes_supported: [...SCOPES],
    });
  });

  test("metadata answers any origin (CORS), preflight included; other well-known and oauth paths are problem+json 404s", async () => {
    const res = await cp.request("GET", "/.well-known/oauth-authorization-server", { headers: { origin: "https://app.example" } });
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const pre = await cp.request("OPTIONS", "/oauth/token", { headers: { origin: "https://app.example", "access-control-request-method": "POST" } });
    expect([pre.status, pre.headers.get("access-control-allow-methods")]).toEqual([204, "GET, POST, OPTIONS"]);
    for (const path of ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server/mcp", "/oauth/nothing", "/.well-known/x"]) {
      const r = await cp.request("GET", path);
      expect([path, r.status, r.headers.get("content-type")]).toEqual([path, 404, "application/problem+json"]);
    }
  });
});

describe("reserved words", () => {
  test("oauth and .well-known are never a slug", async () => {
    const { key } = await cp.createKey(EMAIL);
    for (const slug of ["oauth", "OAuth", ".well-known"]) {
      const res = await cp.request("POST", "/api/v1/links", { key, json: { url: "https://example.com/x", slug } });
      await problemOf(res, 400, "slug_reserved");
    }
  });
});

describe("the authorization code flow", () => {
  test("register, sign in, consent, code, token; the token lists MCP tools; refresh rotates; revoke ends it", async () => {
    const reg = await oauth.register();
    expect(reg.status).toBe(201);
    expect(reg.body).toMatchObject({ client_name: "Test assistant", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none" });
    const clientId = reg.body.client_id as string;

    // Not signed in: the consent page sends the person to sign in first, then back.
    const v = oauth.visitor();
    const { params, verifier } = oauth.authorizationParams(clientId);
    const first = await v.get(`/oauth/authorize?${new URLSearchParams(params)}`);
    expect(first.status).toBe(302);
    const consentPath = first.headers.get("location")!;
    expect(consentPath).toStartWith("/dashboard/authorize?");
    const toSignIn = await v.get(consentPath);
    expect(toSignIn.headers.get("location")).toBe(`/dashboard/signin?next=${encodeURIComponent(consentPath)}`);
    const signinPage = await v.get(toSignIn.headers.get("location")!);
    const signedIn = await v.post("/dashboard/signin", { _csrf: csrfOf(signinPage.html), email: EMAIL, password: passwordOf(EMAIL), next: consentPath });
    expect(signedIn.headers.get("location")).toBe(consentPath);

    const consent = await v.get(consentPath);
    expect(consent.status).toBe(200);
    expect(consent.html).toContain("Connect “Test assistant”?");
    expect(consent.html).toContain("127.0.0.1:33418");
    expect(consent.html).toContain("See your links, their settings and import jobs");
    expect(consent.html).not.toContain("click statistics");
    expect(consent.headers.get("content-security-policy")).toContain("form-action 'self' http://127.0.0.1:33418");

    const { location } = await oauth.authorize(v, params);
    const back = new URL(location!);
    expect(back.origin + back.pathname).toBe(REDIRECT_URI);
    expect(back.searchParams.get("state")).toBe("state-123");
    expect(back.searchParams.get("iss")).toBe(BASE_URL);
    const code = back.searchParams.get("code")!;
    expect(code).toStartWith("clc_");

    const tokens = await oauth.form("/oauth/token", {
      grant_type: "authorization_code", code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT_URI, resource: `${BASE_URL}/mcp`,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.headers.get("cache-control")).toBe("no-store");
    expect(tokens.body).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "links:read links:write" });
    expect(tokens.body.access_token).toStartWith("cla_");
    expect(tokens.body.refresh_token).toStartWith("clr_");

    // The SDK's own client on /mcp with the access token.
    const client = new Client({ name: "oauth-test", version: "1" });
    const transport = new StreamableHTTPClientTransport(new URL(`${BASE_URL}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${tokens.body.access_token}` } },
      fetch: (url, init) => cp.handle(new Request(url, init)),
    });
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(5);
    const created = await client.callTool({ name: "create_link", arguments: { url: "https://example.com/oauth", slug: "via-oauth" } });
    expect(created.isError).toBeFalsy();
    await client.close();

    // Refresh: a new pair; the old refresh token is spent.
    const refreshed = await oauth.form("/oauth/token", { grant_type: "refresh_token", refresh_token: tokens.body.refresh_token, client_id: clientId });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(tokens.body.refresh_token);
    expect(refreshed.body.access_token).not.toBe(tokens.body.access_token);

    // The connected application is listed, with its last use.
    const apps = await v.get("/dashboard/apps");
    expect(apps.html).toContain("Test assistant");
    expect(apps.html).toContain("links:write");

    // Revoke (RFC 7009): 200, and every token of the grant is refused from then on.
    const revoked = await oauth.form("/oauth/revoke", { token: refreshed.body.refresh_token, client_id: clientId });
    expect(revoked.status).toBe(200);
    const after = await cp.request("POST", "/mcp", {
      key: refreshed.body.access_token, json: { jsonrpc: "2.0", id: 1, method: "tools/list" }, headers: { accept: "application/json, text/event-stream" },
    });
    expect(after.status).toBe(401);
    expect(after.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect((await v.get("/dashboard/apps")).html).not.toContain("Test assistant");
  });

  test("a token for the API works at /api/v1 and not at /mcp, and the other way round", async () => {
    const v = await signedInVisitor();
    const api = (await oauth.connect(v, { resource: `${BASE_URL}/api/v1` })).tokens.access_token;
    const mcp = (await oauth.connect(v)).tokens.access_token;
    expect((await cp.request("GET", "/api/v1/links", { key: api })).status).toBe(200);
    const wrongApi = await cp.request("GET", "/api/v1/links", { key: mcp });
    expect(wrongApi.status).toBe(401);
    expect(wrongApi.headers.get("www-authenticate")).toContain('error="invalid_token"');
    const wrongMcp = await cp.request("POST", "/mcp", { key: api, json: TOOLS_LIST, headers: MCP_HEADERS });
    expect(wrongMcp.status).toBe(401);
    expect(wrongMcp.headers.get("www-authenticate")).toContain(`resource_metadata="${BASE_URL}/.well-known/oauth-protected-resource/mcp"`);
  });

  test("a token's scopes limit it on the REST API: 403 insufficient_scope, problem+json and a challenge naming the scope", async () => {
    const v = await signedInVisitor();
    const { tokens } = await oauth.connect(v, { resource: `${BASE_URL}/api/v1`, scope: "links:read" });
    expect((await cp.request("GET", "/api/v1/links", { key: tokens.access_token })).status).toBe(200);
    const write = await cp.request("POST", "/api/v1/links", { key: tokens.access_token, json: { url: "https://example.com/x" } });
    expect(write.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
    expect(write.headers.get("www-authenticate")).toContain('scope="links:write"');
    await problemOf(write, 403, "insufficient_scope");
  });

  test("a token's scopes limit it: tools/list lists every tool, a write tool is 403 insufficient_scope naming the scope", async () => {
    const v = await signedInVisitor();
    const { tokens } = await oauth.connect(v, { scope: "links:read" });
    expect(tokens.scope).toBe("links:read");
    const list = await cp.request("POST", "/mcp", { key: tokens.access_token, json: TOOLS_LIST, headers: MCP_HEADERS });
    expect(list.status).toBe(200);
    const call = { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "create_link", arguments: { url: "https://example.com/s" } } };
    const write = await cp.request("POST", "/mcp", { key: tokens.access_token, json: call, headers: MCP_HEADERS });
    expect(write.status).toBe(403);
    expect(write.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
    expect(write.headers.get("www-authenticate")).toContain('scope="links:write"');
  });

  test("stepping up: a client asking for the scope it lacked keeps the ones it holds (no back and forth after a 403)", async () => {
    const v = await signedInVisitor();
    const clientId = (await oauth.register()).body.client_id;
    const exchange = async (scope: string) => {
      const { params, verifier } = oauth.authorizationParams(clientId, { scope });
      const consent = await v.get((await v.get(`/oauth/authorize?${new URLSearchParams(params)}`)).headers.get("location")!);
      const { location } = await oauth.authorize(v, params);
      const code = new URL(location!).searchParams.get("code")!;
      const t = await oauth.form("/oauth/token", { grant_type: "authorization_code", code, code_verifier: verifier, client_id: clientId });
      return { consent: consent.html, scope: t.body.scope as string };
    };
    expect((await exchange("links:read")).scope).toBe("links:read");
    const stepUp = await exchange("links:write");
    expect(stepUp.scope).toBe("links:read links:write");
    expect(stepUp.consent).toMatch(/See your links, their settings and import jobs<\/strong> <code class="small">links:read<\/code> <span class="small muted">\(already allowed\)/);
    // Another client of the same account gains nothing from it.
    const other = await oauth.connect(v, { scope: "stats:read" });
    expect(other.tokens.scope).toBe("stats:read");
  });

  test("someone without an account signs up from the sign-in page and comes back to the consent page", async () => {
    const client = (await oauth.register()).body;
    const { params } = oauth.authorizationParams(client.client_id);
    const v = oauth.visitor();
    const consentPath = (await v.get(`/oauth/authorize?${new URLSearchParams(params)}`)).headers.get("location")!;
    const signinPath = (await v.get(consentPath)).headers.get("location")!;
    const signin = await v.get(signinPath);
    const signupPath = /href="(\/dashboard\/signup[^"]*)"/.exec(signin.html)![1]!.replaceAll("&amp;", "&");
    expect(signupPath).toBe(`/dashboard/signup?next=${encodeURIComponent(consentPath)}`);
    const signup = await v.get(signupPath);
    // The form as the browser posts it: its hidden next field carries the consent page on.
    const done = await v.post("/dashboard/signup", { ...formFieldsOf(signup.html), email: "newcomer@example.com", password: "a good long password" });
    expect([done.status, done.headers.get("location")]).toEqual([303, consentPath]);
    expect((await v.get(consentPath)).html).toContain("Connect “Test assistant”?");
  });

  test("deny sends access_denied with the state to the client; nothing is issued", async () => {
    const v = await signedInVisitor();
    const client = (await oauth.register()).body;
    const { params } = oauth.authorizationParams(client.client_id);
    const { location } = await oauth.authorize(v, params, "deny");
    const back = new URL(location!);
    expect([back.searchParams.get("error"), back.searchParams.get("state"), back.searchParams.get("code")]).toEqual(["access_denied", "state-123", null]);
  });

  test("a loopback redirect URI matches on any port (RFC 8252)", async () => {
    const v = await signedInVisitor();
    const client = (await oauth.register()).body;
    const { params } = oauth.authorizationParams(client.client_id, { redirect_uri: "http://127.0.0.1:40001/callback" });
    const { location } = await oauth.authorize(v, params);
    expect(location).toStartWith("http://127.0.0.1:40001/callback?code=clc_");
  });
});

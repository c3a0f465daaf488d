/**
 * The authorization server against hostile and broken clients (issue #23): wrong, reused and expired codes, PKCE
 * mismatch and plain PKCE, unregistered redirect URIs and open redirects, tokens for another resource, expired and
 * revoked tokens, refresh replay after rotation, CSRF on consent, client metadata documents at private addresses,
 * another account's grants. Each answers the right OAuth error or page; nothing is a 500.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { csrfOf, type Visitor } from "../helpers/dashboard-visitor.ts";
import { BASE_URL, jsonOf, passwordOf, problemOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import { OAuthTestClient, REDIRECT_URI } from "../helpers/oauth-client.ts";

let cp: InProcessControlPlane;
let oauth: OAuthTestClient;
let owner: Visitor;
const MCP_HEADERS = { accept: "application/json, text/event-stream" };
const TOOLS_LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };

beforeAll(async () => {
  cp = await startControlPlane();
  oauth = new OAuthTestClient(BASE_URL, cp.handle);
  owner = await visitorOf("owner@example.com");
});
afterAll(() => cp.close());

async function visitorOf(email: string) {
  await cp.account(email);
  const v = oauth.visitor();
  await oauth.signIn(v, email, passwordOf(email));
  return v;
}

const mcpStatus = async (token: string) => (await cp.request("POST", "/mcp", { key: token, json: TOOLS_LIST, headers: MCP_HEADERS })).status;

/** A consented code not yet exchanged, with what exchanging it takes. */
async function freshCode(extra: Record<string, string> = {}) {
  const clientId = (await oauth.register()).body.client_id as string;
  const { params, verifier } = oauth.authorizationParams(clientId, extra);
  const { location } = await oauth.authorize(owner, params);
  const code = new URL(location!).searchParams.get("code")!;
  const exchange = (over: Record<string, string> = {}) =>
    oauth.form("/oauth/token", { grant_type: "authorization_code", code, code_verifier: verifier, client_id: clientId, redirect_uri: params.redirect_uri, ...over });
  return { clientId, code, verifier, exchange };
}

describe("authorization codes", () => {
  test("an unknown code is invalid_grant", async () => {
    const { exchange } = await freshCode();
    const r = await exchange({ code: "clc_wrong" });
    expect([r.status, r.body.error]).toEqual([400, "invalid_grant"]);
  });

  test("a reused code is invalid_grant, and the tokens issued from it are revoked", async () => {
    const { clientId, exchange } = await freshCode();
    const first = await exchange();
    expect(first.status).toBe(200);
    expect(await mcpStatus(first.body.access_token)).toBe(200);
    const again = await exchange();
    expect([again.status, again.body.error]).toEqual([400, "invalid_grant"]);
    expect(again.body.error_description).toContain("already used");
    expect(await mcpStatus(first.body.access_token)).toBe(401);
    const refresh = await oauth.form("/oauth/token", { grant_type: "refresh_token", refresh_token: first.body.refresh_token, client_id: clientId });
    expect([refresh.body.error, refresh.body.error_description]).toEqual(["invalid_grant", "The refresh token's grant was revoked"]);
  });

  test("a PKCE verifier that does not match is invalid_grant, and spends the code", async () => {
    const { exchange } = await freshCode();
    const wrong = await exchange({ code_verifier: "x".repeat(43) });
    expect([wrong.status, wrong.body.error]).toEqual([400, "invalid_grant"]);
    expect(wrong.body.error_description).toContain("code_verifier");
    expect((await exchange()).body.error).toBe("invalid_grant");
  });

  test("an expired code is invalid_grant", async () => {
    const { exchange } = await freshCode();
    cp.clock.advance(5 * 60_000 + 1);
    expect((await exchange()).body.error_description).toContain("expired");
  });

  test("a code is only for its client, its redirect URI and its resource", async () => {
    const other = (await oauth.register()).body.client_id;
    expect((await (await freshCode()).exchange({ client_id: other })).body.error).toBe("invalid_grant");
    expect((await (await freshCode()).exchange({ redirect_uri: "http://127.0.0.1:33418/other" })).body.error).toBe("invalid_grant");
    expect((await (await freshCode()).exchange({ resource: `${BASE_URL}/api/v1` })).body.error).toBe("invalid_target");
  });
});

describe("the authorization request", () => {
  const location = async (params: Record<string, string>) => {
    const r = await owner.get(`/oauth/authorize?${new URLSearchParams(params)}`);
    return { status: r.status, location: r.headers.get("location"), html: r.html };
  };

  test("plain PKCE, no PKCE, another response type, an unknown resource or scope: an error at the redirect URI, with the state", async () => {
    const clientId = (await oauth.register()).body.client_id;
    const cases: [Record<string, string>, string][] = [
      [{ code_challenge_method: "plain" }, "invalid_request"],
      [{ code_challenge: "" }, "invalid_request"],
      [{ code_challenge: "short" }, "invalid_request"],
      [{ response_type: "token" }, "unsupported_response_type"],
      [{ resource: "https://evil.example/mcp" }, "invalid_target"],
      [{ scope: "openid profile" }, "invalid_scope"],
    ];
    for (const [over, error] of cases) {
      const { params } = oauth.authorizationParams(clientId, over);
      const r = await location(params);
      const back = new URL(r.location!);
      expect([JSON.stringify(over), r.status, back.origin + back.pathname, back.searchParams.get("error"), back.searchParams.get("state")])
        .toEqual([JSON.stringify(over), 302, REDIRECT_URI, error, "state-123"]);
    }
  });

  test("an unregistered redirect URI is never redirected to (no open redirect): an error page, also on the consent page and its form", async () => {
    const clientId = (await oauth.register()).body.client_id;
    for (const uri of ["https://evil.example/cb", "http://127.0.0.1:33418/callback/../evil", "http://evil.example:33418/callback", "javascript:alert(1)"]) {
      const { params } = oauth.authorizationParams(clientId, { redirect_uri: uri });
      for (const path of ["/oauth/authorize", "/dashboard/authorize"]) {
        const r = await owner.get(`${path}?${new URLSearchParams(params)}`);
        expect([uri, path, r.status, r.headers.get("location")]).toEqual([uri, path, 400, null]);
        expect(r.html).toContain("did not register");
      }
      const posted = await owner.post("/dashboard/authorize", { ...params, _csrf: csrfOf((await owner.get("/dashboard/apps")).html), decision: "allow" });
      expect([posted.status, posted.headers.get("location")]).toEqual([400, null]);
    }
  });

  test("an unknown client_id or none at all: an error page, nothing sent to the redirect URI", async () => {
    for (const clientId of ["clid_unknown", "", "not-a-client"]) {
      const { params } = oauth.authorizationParams(clientId);
      const r = await location(params);
      expect([r.status, r.location]).toEqual([400, null]);
    }
    // Two client_ids or two redirect URIs: which one would be meant is unknown, so nothing is sent anywhere.
    const clientId = (await oauth.register()).body.client_id;
    const { params } = oauth.authorizationParams(clientId);
    for (const extra of [`&client_id=${clientId}`, `&redirect_uri=${encodeURIComponent("https://evil.example/cb")}`]) {
      const r = await owner.get(`/oauth/authorize?${new URLSearchParams(params)}${extra}`);
      expect([extra, r.status, r.headers.get("location")]).toEqual([extra, 400, null]);
    }
  });

  test("the consent form needs the session's CSRF token and our origin: a forged post issues no code", async () => {
    const clientId = (await oauth.register()).body.client_id;
    const { params } = oauth.authorizationParams(clientId);
    const csrf = csrfOf((await owner.get("/dashboard/apps")).html);
    const forged: { fields: Record<string, string>; headers: Record<string, string> }[] = [
      { fields: { ...params, decision: "allow" }, headers: {} },
      { fields: { ...params, decision: "allow", _csrf: "x".repeat(32) }, headers: {} },
      { fields: { ...params, decision: "allow", _csrf: csrf }, headers: { origin: "https://evil.example" } },
      { fields: { ...params, decision: "allow", _csrf: csrf }, headers: { "sec-fetch-site": "cross-site" } },
    ];
    for (const f of forged) {
      const r = await owner.post("/dashboard/authorize", f.fields, f.headers);
      expect([r.status, r.headers.get("location")]).toEqual([403, null]);
    }
    // Not signed in at all: sent to sign in, nothing issued.
    const anonymous = oauth.visitor();
    const r = await anonymous.post("/dashboard/authorize", { ...params, decision: "allow", _csrf: csrf });
    expect(r.headers.get("location")).toStartWith("/dashboard/signin");
  });
});

describe("client metadata documents", () => {
  test("a client_id URL that resolves to a private address is refused before any request (SSRF), as webhooks are", async () => {
    const seen: string[] = [];
    cp.deps.resolveHost = async (host) => {
      seen.push(host);
      return ["10.0.0.5"];
    };
    try {
      for (const clientId of ["https://internal.example/client.json", "https://127.0.0.1/client.json", "https://[::1]/client.json", "https://169.254.169.254/latest/meta-data"]) {
        const { params } = oauth.authorizationParams(clientId);
        const r = await owner.get(`/oauth/authorize?${new URLSearchParams(params)}`);
        expect([clientId, r.status, r.headers.get("location")]).toEqual([clientId, 400, null]);
        expect(r.html).toMatch(/not a public address|metadata address/);
      }
      expect(seen).toEqual(["internal.example"]);
    } finally {
      cp.deps.resolveHost = undefined;
    }
  });

  test("a client_id URL without a path, with a fragment or over http is refused", async () => {
    for (const clientId of ["https://client.example", "https://client.example/#x", "http://client.example/client.json"]) {
      const { params } = oauth.authorizationParams(clientId);
      const r = await owner.get(`/oauth/authorize?${new URLSearchParams(params)}`);
      expect([clientId, r.status, r.headers.get("location")]).toEqual([clientId, 400, null]);
    }
  });
});

describe("tokens", () => {
  test("an access token expires after an hour: 401 invalid_token; the refresh token still gives a new one", async () => {
    const { clientId, exchange } = await freshCode();
    const t = (await exchange()).body;
    cp.clock.advance(3_600_000);
    const res = await cp.request("POST", "/mcp", { key: t.access_token, json: TOOLS_LIST, headers: MCP_HEADERS });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect((await problemOf(res, 401, "unauthorized")).detail).toContain("expired");
    const again = await oauth.form("/oauth/token", { grant_type: "refresh_token", refresh_token: t.refresh_token, client_id: clientId });
    expect(await mcpStatus(again.body.access_token)).toBe(200);
  });

  test("a refresh token replayed after rotation revokes the whole family: the new tokens stop working too", async () => {
    const { clientId, exchange } = await freshCode();
    const t = (await exchange()).body;
    const rotated = (await oauth.form("/oauth/token", { grant_type: "refresh_token", refresh_token: t.refresh_token, client_id: clientId })).body;
    expect(await mcpStatus(rotated.access_token)).toBe(200);
    const replay = await oauth.form("/oauth/token", { grant_type: "refresh_token", refresh_token: t.refresh_token, client_id: clientId });
    expect([replay.status, replay.body.error]).toEqual([400, "invalid_grant"]);
    expect(await mcpStatus(rotated.access_token)).toBe(401);
    const next = await oauth.form("/oauth/token", { grant_type: "refresh_token", refresh_token: rotated.refresh_token, client_id: clientId });
    expect(next.body.error).toBe("invalid_grant");
  });

  test("the token endpoint prunes expired codes and tokens (at most hourly): a token long expired is gone from the store", async () => {
    const { exchange } = await freshCode();
    const old = (await exchange()).body;
    const hashOfOld = new Bun.CryptoHasher("sha256").update(old.access_token).digest("hex");
    expect(await cp.deps.store.findAccessToken(hashOfOld)).not.toBeNull();
    cp.clock.advance(2 * 3_600_000);
    await (await freshCode()).exchange();
    expect(await cp.deps.store.findAccessToken(hashOfOld)).toBeNull();
  });

  test("a refresh may narrow the scopes, never widen them; it is only for its client and resource", async () => {
    const { clientId, exchange } = await freshCode({ scope: "links:read" });
    const t = (await exchange()).body;
    const wider = await oauth.form("/oauth/token", { grant_type: "refresh_token", refresh_token: t.refresh_token, client_id: clientId, scope: "links:write" });
    expect(wider.body.error).toBe("invalid_scope");
    const other = await oauth.form("/oauth/token", { grant_type: "refresh_token", refresh_token: t.refresh_token, client_id: "clid_other" });
    expect(other.body.error).toBe("invalid_grant");
    const api = await oauth.form("/oauth/token", { grant_type: "refresh_token", refresh_token: t.refresh_token, client_id: clientId, resource: `${BASE_URL}/api/v1` });
    expect(api.body.error).toBe("invalid_target");
  });

  test("the token endpoint's own errors: right OAuth error and status, never a 500", async () => {
    const cases: [Record<string, string>, Record<string, string>, number, string][] = [
      [{ client_id: "clid_x" }, {}, 400, "invalid_request"],
      [{ client_id: "clid_x", grant_type: "password" }, {}, 400, "unsupported_grant_type"],
      [{ client_id: "clid_x", grant_type: "client_credentials" }, {}, 400, "unsupported_grant_type"],
      [{ grant_type: "authorization_code", code: "c", code_verifier: "v" }, {}, 401, "invalid_client"],
      [{ grant_type: "authorization_code", code: "c", code_verifier: "v" }, { authorization: `Basic ${btoa("clid_x:secret")}` }, 401, "invalid_client"],
      [{ grant_type: "authorization_code", client_id: "clid_x", code_verifier: "v" }, {}, 400, "invalid_request"],
      [{ grant_type: "authorization_code", code: "c", code_verifier: "v" }, { authorization: `Basic ${btoa("%E0%A4%A:")}` }, 401, "invalid_client"],
      [{ grant_type: "authorization_code", client_id: "clid_x", code: "c" }, {}, 400, "invalid_request"],
      [{ grant_type: "refresh_token", client_id: "clid_x" }, {}, 400, "invalid_request"],
      [{ grant_type: "refresh_token", client_id: "clid_x", refresh_token: "clr_nope" }, {}, 400, "invalid_grant"],
    ];
    for (const [fields, headers, status, error] of cases) {
      const r = await oauth.form("/oauth/token", fields, headers);
      expect([JSON.stringify(fields), r.status, r.body.error, typeof r.body.error_description]).toEqual([JSON.stringify(fields), status, error, "string"]);
    }
    const json = await cp.request("POST", "/oauth/token", { json: { grant_type: "authorization_code" } });
    expect([json.status, (await jsonOf(json)).error]).toEqual([400, "invalid_request"]);
    const twice = await cp.request("POST", "/oauth/token", { body: "grant_type=refresh_token&grant_type=refresh_token&client_id=x", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect((await jsonOf(twice)).error).toBe("invalid_request");
    for (const [method, path, allow] of [["GET", "/oauth/token", "POST"], ["PUT", "/oauth/register", "POST"], ["POST", "/oauth/authorize", "GET"], ["GET", "/oauth/revoke", "POST"]]) {
      const r = await cp.request(method!, path!);
      expect([method, path, r.headers.get("allow")]).toEqual([method, path, allow]);
      await problemOf(r, 405, "method_not_allowed");
    }
    const big = await cp.request("POST", "/oauth/token", { body: "x=".padEnd(70_000, "a"), headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(((await problemOf(big, 413, "payload_too_large")) as { error?: string }).error).toBe("invalid_request");
  });

  test("revocation: unknown tokens are fine (RFC 7009), another client's token is invalid_client and stays valid", async () => {
    const { exchange } = await freshCode();
    const t = (await exchange()).body;
    expect((await oauth.form("/oauth/revoke", { token: "cla_unknown", client_id: "clid_x" })).status).toBe(200);
    const other = await oauth.form("/oauth/revoke", { token: t.access_token, client_id: "clid_other" });
    expect([other.status, other.body.error]).toEqual([401, "invalid_client"]);
    expect(await mcpStatus(t.access_token)).toBe(200);
    expect((await oauth.form("/oauth/revoke", { client_id: "clid_x" })).body.error).toBe("invalid_request");
  });
});

describe("registration", () => {
  test("bad metadata: the right RFC 7591 error", async () => {
    const cases: [unknown, string][] = [
      [{ redirect_uris: [] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["javascript:alert(1)"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["http://evil.example/cb"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["https://app.example/cb#frag"] }, "invalid_redirect_uri"],
      [{ redirect_uris: [`https://clink.test/some-link`] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["https://app.example/cb"], grant_types: ["client_credentials"] }, "invalid_client_metadata"],
      [{ redirect_uris: ["https://app.example/cb"], client_name: 5 }, "invalid_client_metadata"],
    ];
    for (const [body, error] of cases) {
      const r = await cp.request("POST", "/oauth/register", { json: body });
      expect([JSON.stringify(body), r.status, (await jsonOf(r)).error]).toEqual([JSON.stringify(body), 400, error]);
    }
    const notJson = await cp.request("POST", "/oauth/register", { body: "{", headers: { "content-type": "application/json" } });
    expect((await jsonOf(notJson)).error).toBe("invalid_client_metadata");
  });

  test("at most 60 registrations per address and hour: then 429 problem+json carrying OAuth's error, with Retry-After", async () => {
    const own = await startControlPlane();
    try {
      const client = new OAuthTestClient(BASE_URL, own.handle);
      for (let i = 0; i < 60; i++) expect((await client.register()).status).toBe(201);
      const res = await own.request("POST", "/oauth/register", { json: { redirect_uris: [REDIRECT_URI] } });
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(((await problemOf(res, 429, "rate_limited")) as { error?: string }).error).toBe("temporarily_unavailable");
    } finally {
      await own.close();
    }
  });

  test("a client asking for a secret is registered as a public client, and told so", async () => {
    const r = await oauth.register({ token_endpoint_auth_method: "client_secret_basic", redirect_uris: ["com.example.app:/cb"] });
    expect([r.status, r.body.token_endpoint_auth_method, r.body.client_secret]).toEqual([201, "none", undefined]);
  });
});

describe("connected applications", () => {
  test("another account neither sees nor revokes a grant; the owner's revoke is effective at once", async () => {
    const { exchange } = await freshCode();
    const t = (await exchange()).body;
    const ownerId = (await cp.account("owner@example.com")).id;
    const [grant] = await cp.deps.store.listOAuthGrants(ownerId, cp.clock.now());
    const other = await visitorOf("other@example.com");
    expect((await other.get("/dashboard/apps")).html).not.toContain(grant!.id);
    const csrf = csrfOf((await other.get("/dashboard/apps")).html);
    const r = await other.post(`/dashboard/apps/${grant!.id}/revoke`, { _csrf: csrf });
    expect(r.status).toBe(404);
    expect(await mcpStatus(t.access_token)).toBe(200);

    const page = await owner.get("/dashboard/apps");
    expect(page.html).toContain(`/dashboard/apps/${encodeURIComponent(grant!.id)}/revoke`);
    const done = await owner.post(`/dashboard/apps/${grant!.id}/revoke`, { _csrf: csrfOf(page.html) });
    expect([done.status, done.headers.get("location")]).toEqual([303, "/dashboard/apps?flash=disconnected"]);
    expect(await mcpStatus(t.access_token)).toBe(401);
  });
});

/**
 * What every API request meets before and around the link logic, through the Elysia app in process: API-key
 * authentication (401), the per-key rate limit and its headers (§3.3), unknown routes, the OpenAPI document and
 * docs page, and inputs that must never produce a 500.
 */
import { SCOPES } from "../../shared/enums.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { newApiKey } from "../../shared/ids.ts";
import { BASE_URL, jsonOf, problemOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

describe("authentication", () => {
  let cp: InProcessControlPlane;
  let key: string;
  beforeAll(async () => {
    cp = await startControlPlane();
    key = (await cp.createKey("alice@example.com")).key;
  });
  afterAll(() => cp?.close());

  const cases: [string, Record<string, string>, string][] = [
    ["no Authorization header", {}, "Send an API key as Authorization: Bearer ck_…"],
    ["a Basic credential", { authorization: "Basic dXNlcjpwYXNz" }, "Send an API key as Authorization: Bearer ck_…"],
    ["Bearer without a key", { authorization: "Bearer " }, "Send an API key as Authorization: Bearer ck_…"],
    ["a key that is not ck_…", { authorization: "Bearer not-a-key" }, "The API key is malformed"],
    ["a key with a wrong checksum", { authorization: "Bearer ck_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }, "The API key is malformed"],
    ["a well-formed key nobody created", { authorization: `Bearer ${newApiKey()}` }, "The API key is unknown or revoked"],
  ];
  for (const [name, headers, detail] of cases) {
    test(`${name} answers 401 unauthorized with WWW-Authenticate: Bearer`, async () => {
      const res = await cp.request("GET", "/api/v1/links", { headers });
      expect(res.headers.get("www-authenticate")).toBe(`Bearer realm="api", resource_metadata="${BASE_URL}/.well-known/oauth-protected-resource/api/v1", scope="${SCOPES.join(" ")}"`);
      expect((await problemOf(res, 401, "unauthorized")).detail).toBe(detail);
      expect(res.headers.get("ratelimit-limit")).toBeNull();
    });
  }

  test("the scheme is case-insensitive: bearer works as Bearer", async () => {
    expect((await cp.request("GET", "/api/v1/links", { headers: { authorization: `bearer ${key}` } })).status).toBe(200);
  });

  test("the key is checked before the body and the query: 401, not 400 or 415", async () => {
    await problemOf(await cp.request("POST", "/api/v1/links", { json: { nonsense: true } }), 401, "unauthorized");
    await problemOf(await cp.request("POST", "/api/v1/links", { body: "{", headers: { "content-type": "text/plain" } }), 401, "unauthorized");
    await problemOf(await cp.request("GET", "/api/v1/links?limit=abc&bogus=1"), 401, "unauthorized");
    await problemOf(await cp.request("GET", "/api/v1/links/x/stats"), 401, "unauthorized");
  });

  test("a revoked key answers 401 at once, though it was just used and cached", async () => {
    const k = await cp.createKey("revoked@example.com");
    expect((await cp.request("GET", "/api/v1/links", { key: k.key })).status).toBe(200);
    await cp.auth.revoke(k.account.id, k.caller.keyId!);
    expect((await problemOf(await cp.request("GET", "/api/v1/links", { key: k.key }), 401, "unauthorized")).detail).toBe("The API key is unknown or revoked");
  });
});

describe("rate limit (3 per minute per key, on the test clock)", () => {
  let cp: InProcessControlPlane;
  beforeAll(async () => {
    cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "3" } });
  });
  afterAll(() => cp?.close());

  const headersOf = (res: Response) => ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "retry-after"].map((h) => res.headers.get(h));

  test("every answer carries RateLimit headers; over the limit 429 rate_limited with Retry-After until the window ends", async () => {
    const { key } = await cp.createKey("limited@example.com");
    const call = () => cp.request("GET", "/api/v1/links", { key });
    const seen = [];
    for (let i = 0; i < 3; i++) {
      const res = await call();
      seen.push([res.status, ...headersOf(res)]);
    }
    expect(seen).toEqual([[200, "3", "2", "60", null], [200, "3", "1", "60", null], [200, "3", "0", "60", null]]);
    const limited = await call();
    expect(headersOf(limited)).toEqual(["3", "0", "60", "60"]);
    expect((await problemOf(limited, 429, "rate_limited")).detail).toBe("Rate limit exceeded: 3 requests per minute per key");
    cp.clock.advance(45_000);
    expect(headersOf(await call())).toEqual(["3", "0", "15", "15"]);
    cp.clock.advance(15_000);
    const fresh = await call();
    expect([fresh.status, ...headersOf(fresh)]).toEqual([200, "3", "2", "60", null]);
  });

  test("errors after authentication carry the headers too, and count", async () => {
    const { key } = await cp.createKey("bad-query@example.com");
    const bad = await cp.request("GET", "/api/v1/links?limit=abc", { key });
    expect(headersOf(bad)).toEqual(["3", "2", "60", null]);
    await problemOf(bad, 400, "invalid_input");
    expect(headersOf(await cp.request("GET", "/api/v1/links/none", { key }))).toEqual(["3", "1", "60", null]);
  });

  test("each key has its own budget, also two keys of one account", async () => {
    const first = await cp.createKey("two-keys@example.com");
    for (let i = 0; i < 4; i++) await cp.request("GET", "/api/v1/links", { key: first.key });
    const second = await cp.createKey("two-keys@example.com");
    expect((await cp.request("GET", "/api/v1/links", { key: second.key })).headers.get("ratelimit-remaining")).toBe("2");
  });

  test("REST and MCP share one budget", async () => {
    const { key } = await cp.createKey("shared@example.com");
    await cp.request("GET", "/api/v1/links", { key });
    const mcp = await cp.request("POST", "/mcp", {
      key, json: { jsonrpc: "2.0", id: 1, method: "tools/list" }, headers: { accept: "application/json, text/event-stream" },
    });
    expect([mcp.status, mcp.headers.get("ratelimit-remaining")]).toEqual([200, "1"]);
    expect((await cp.request("GET", "/api/v1/links", { key })).headers.get("ratelimit-remaining")).toBe("0");
  });
});

describe("the limit under concurrency", () => {
  test("200 parallel calls with one key: exactly 120 pass, each remaining count once, the other 80 answer 429", async () => {
    const cp = await startControlPlane();
    try {
      const { key } = await cp.createKey("burst@example.com");
      const results = await Promise.all(Array.from({ length: 200 }, () => cp.request("GET", "/api/v1/links?limit=1", { key })));
      const ok = results.filter((r) => r.status === 200);
      expect([ok.length, results.filter((r) => r.status === 429).length]).toEqual([120, 80]);
      expect(ok.map((r) => Number(r.headers.get("ratelimit-remaining"))).sort((x, y) => x - y)).toEqual([...Array(120).keys()]);
    } finally {
      await cp.close();
    }
  });
});

describe("routes, documents and hostile input", () => {
  let cp: InProcessControlPlane;
  let key: string;
  beforeAll(async () => {
    cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
    key = (await cp.createKey("alice@example.com")).key;
    await cp.request("POST", "/api/v1/links", { key, json: { url: "https://example.com", slug: "first-link" } });
  });
  afterAll(() => cp?.close());

  test("an unknown path under /api/v1 answers 404 not_found as problem+json", async () => {
    expect((await problemOf(await cp.request("GET", "/api/v1/nothing", { key }), 404, "not_found")).detail).toBe("No such resource");
  });

  test("/ redirects to the dashboard", async () => {
    const res = await cp.request("GET", "/");
    expect([res.status, res.headers.get("location")]).toEqual([302, "/dashboard"]);
  });

  test("GET /api/v1/openapi.json needs no key and documents every route with the shared schemas", async () => {
    const res = await cp.request("GET", "/api/v1/openapi.json");
    expect(res.status).toBe(200);
    const doc = await jsonOf(res);
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.servers).toEqual([{ url: BASE_URL }]);
    expect(Object.keys(doc.paths).sort()).toEqual([
      "/api/v1/audit", "/api/v1/bulk", "/api/v1/clicks.csv", "/api/v1/domains", "/api/v1/domains/{id}", "/api/v1/domains/{id}/verify", "/api/v1/imports", "/api/v1/imports/{id}", "/api/v1/links", "/api/v1/links/bulk", "/api/v1/links/bulk-delete", "/api/v1/links/export", "/api/v1/links/{slug}", "/api/v1/links/{slug}/clicks.csv", "/api/v1/links/{slug}/qr", "/api/v1/links/{slug}/stats", "/api/v1/stats",
      "/api/v1/webhooks", "/api/v1/webhooks/{id}", "/api/v1/webhooks/{id}/deliveries", "/api/v1/webhooks/{id}/deliveries/{deliveryId}/retry",
      "/api/v1/workspace", "/api/v1/workspace/invitations", "/api/v1/workspace/invitations/{id}", "/api/v1/workspace/members", "/api/v1/workspace/members/{accountId}",
    ]);
    expect(Object.keys(doc.paths["/api/v1/links/{slug}"]).sort()).toEqual(["delete", "get", "patch"]);
    const create = doc.paths["/api/v1/links"].post;
    expect(create.requestBody.content["application/json"].schema.required).toEqual(["url"]);
    expect(create.responses["201"].content["application/json"].schema.properties.shortUrl).toEqual({ type: "string", format: "uri" });
    expect(create.responses["409"].content["application/problem+json"].schema.required).toEqual(["type", "title", "status", "detail", "code"]);
    expect(doc.paths["/api/v1/links/{slug}"].patch.requestBody.content["application/json"].schema.properties.targetUrl.maxLength).toBe(2048);
    const limit = doc.paths["/api/v1/links"].get.parameters.find((p: { name: string }) => p.name === "limit");
    expect(limit).toMatchObject({ in: "query", required: false, schema: { type: "integer", minimum: 1, maximum: 500 } });
    expect(doc.components.securitySchemes.bearer).toEqual({ type: "http", scheme: "bearer", bearerFormat: "ck_ API key" });
    // OAuth clients find the authorization server and the scopes in the document too.
    expect(doc.components.securitySchemes.oauth2.flows.authorizationCode).toMatchObject({
      authorizationUrl: `${BASE_URL}/oauth/authorize`, tokenUrl: `${BASE_URL}/oauth/token`,
    });
    expect(Object.keys(doc.components.securitySchemes.oauth2.flows.authorizationCode.scopes)).toEqual([...SCOPES]);
    expect(create.security).toEqual([{ bearer: [] }, { oauth2: [] }]);
    // Every operation names its 403s: a scope the key lacks, a role that does not allow it.
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, { description: string }> }>>)) {
      for (const [method, op] of Object.entries(ops)) expect(op.responses["403"]?.description, `${method} ${path}`).toContain("forbidden_role");
    }
    expect(JSON.stringify(doc)).not.toContain('"$id"');
  });

  test("the docs page pins its script and fences it with a CSP: fetches only under /api/v1/, no forms, no frames", async () => {
    const res = await cp.request("GET", "/api/v1/docs");
    expect([res.status, res.headers.get("x-content-type-options")]).toEqual([200, "nosniff"]);
    expect(await res.text()).toMatch(/<script src="https:\/\/cdn\.jsdelivr\.net\/npm\/@scalar\/api-reference@\d+\.\d+\.\d+\//);
    const csp = res.headers.get("content-security-policy")!.split("; ");
    for (const directive of ["default-src 'none'", `connect-src ${BASE_URL}/api/v1/`, "form-action 'none'", "frame-src 'none'", "frame-ancestors 'none'"]) {
      expect(csp).toContain(directive);
    }
  });

  test("no body on any write route, and no path, answers 500", async () => {
    const bodies = ["null", "1", "true", '"x"', "[]", "{}", '{"url":null}', '{"url":{"$ne":1}}', '{"__proto__":{"admin":true},"url":"https://e.com"}',
      '{"url":"https://e.com","tags":[1,2]}', '{"url":"https://e.com","rules":"x"}', '{"url":"https://e.com","abUrls":[{}]}', "\u0000", '{"url":"\\ud800"}',
      '{"constructor":{"prototype":{"x":1}},"url":"https://e.com"}', `[${'{"url":"https://e.com","rules":[{}]},'.repeat(20)}{}]`];
    const statuses = new Set<number>();
    for (const body of bodies) {
      for (const [method, path] of [["POST", "/api/v1/links"], ["PATCH", "/api/v1/links/first-link"], ["POST", "/api/v1/bulk"]]) {
        statuses.add((await cp.request(method, path, { key, body, headers: { "content-type": "application/json" } })).status);
      }
    }
    for (const path of ["/api/v1/links/%00", "/api/v1/links/..%2F..", "/api/v1/links/a/b/c", "/api/v1/links/x/stats/y", "/api/v1/links?limit=1e3&cursor[]=1",
      `/api/v1/links/${"x".repeat(5000)}`, "/api/v1/links/%E0%A4%A", "/api/v1/links?tag=%FF"]) {
      statuses.add((await cp.request("GET", path, { key })).status);
    }
    expect([...statuses].filter((s) => s >= 500)).toEqual([]);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});

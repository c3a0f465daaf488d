/** REST contract of design §3 over real HTTP against the embedded server process. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { api, createKey, startServer, type ApiClient, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let a: ApiClient;
let b: ApiClient;

beforeAll(async () => {
  server = await startServer();
  a = api(server, await createKey(server, "alice@example.com"));
  b = api(server, await createKey(server, "bob@example.com"));
});
afterAll(() => server?.stop());

function expectProblem(res: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  expect(res.body).toMatchObject({ status, code });
  expect(typeof res.body.type).toBe("string");
  expect(typeof res.body.title).toBe("string");
  expect(typeof res.body.detail).toBe("string");
}

/** Waits until the click consumer has written `n` clicks for the slug. */
async function waitForClicks(client: ApiClient, slug: string, n: number) {
  for (let i = 0; i < 100; i++) {
    const s = await client.get(`/api/v1/links/${slug}/stats`);
    if (s.body.totalClicks >= n) return s.body;
    await Bun.sleep(50);
  }
  throw new Error(`stats never reached ${n} clicks`);
}

describe("create", () => {
  test("201 with the full link object; absent values are null or []", async () => {
    const res = await a.post("/api/v1/links", { url: "https://example.com/page", slug: "first-link", tags: "x, y" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      slug: "first-link", shortUrl: `${server.url}/first-link`, target: "https://example.com/page", status: "active",
      expiresAt: null, startsAt: null, maxHits: null, hits: 0, hasPassword: false, tags: ["x", "y"], folder: null,
      utmSource: null, rules: [], abUrls: [], webhookUrl: null, serveOg: false, ogTitle: null, webhookSecret: null,
    });
    expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt);
    expect(res.body).not.toHaveProperty("password");
    expect(res.body).not.toHaveProperty("passwordHash");
  });

  test("random slugs are 7 characters of the URL alphabet", async () => {
    const res = await a.post("/api/v1/links", { url: "https://example.com/r" });
    expect(res.status).toBe(201);
    expect(res.body.slug).toMatch(/^[A-Za-z0-9_-]{7}$/);
  });

  test("password is stored but never returned; hasPassword tells", async () => {
    const res = await a.post("/api/v1/links", { url: "https://example.com/p", password: "s3cret-pass" });
    expect(res.body.hasPassword).toBe(true);
    expect(JSON.stringify(res.body)).not.toContain("s3cret-pass");
    expect(JSON.stringify(res.body)).not.toContain("argon2");
  });

  test("slug taken → 409 slug_taken, also across accounts", async () => {
    await a.post("/api/v1/links", { url: "https://example.com", slug: "taken-one" });
    expectProblem(await a.post("/api/v1/links", { url: "https://example.com", slug: "taken-one" }), 409, "slug_taken");
    expectProblem(await b.post("/api/v1/links", { url: "https://example.com", slug: "taken-one" }), 409, "slug_taken");
  });

  test("slugs are case-sensitive", async () => {
    expect((await a.post("/api/v1/links", { url: "https://example.com/1", slug: "CaseSlug" })).status).toBe(201);
    expect((await a.post("/api/v1/links", { url: "https://example.com/2", slug: "caseslug" })).status).toBe(201);
  });

  test("reserved slug → 400 slug_reserved", async () => {
    for (const slug of ["api", "dashboard", "healthz", "MCP", "favicon.ico", "robots.txt"]) {
      expectProblem(await a.post("/api/v1/links", { url: "https://example.com", slug }), 400, "slug_reserved");
    }
  });

  const invalid: [string, unknown, string][] = [
    ["missing url", {}, "/url"],
    ["unknown field", { url: "https://example.com", colour: "red" }, "/colour"],
    ["url of the wrong type", { url: 12 }, "/url"],
    ["javascript: url", { url: "javascript:alert(1)" }, "/url"],
    ["data: url", { url: "data:text/html,<script>alert(1)</script>" }, "/url"],
    ["file: url", { url: "file:///etc/passwd" }, "/url"],
    ["relative url", { url: "/just/a/path" }, "/url"],
    ["url over 2048 characters", { url: `https://example.com/${"a".repeat(2040)}` }, "/url"],
    ["own short address", { url: "http://127.0.0.1:PORT/first-link" }, "/url"],
    ["url with a NUL", { url: "https://example.com/\u0000x" }, "/url"],
    ["url with a line break (header injection)", { url: "https://example.com/\r\nSet-Cookie: x=1" }, "/url"],
    ["rule url with a tab", { url: "https://example.com", rules: [{ kind: "device", match: "ios", url: "https://e.com/\tx" }] }, "/rules/0/url"],
    ["A/B url with DEL", { url: "https://example.com", abUrls: [{ url: "https://e.com/\u007f", weight: 1 }] }, "/abUrls/0/url"],
    ["slug too short", { url: "https://example.com", slug: "ab" }, "/slug"],
    ["slug with a slash", { url: "https://example.com", slug: "a/b/c" }, "/slug"],
    ["slug with dot-dot", { url: "https://example.com", slug: "..%2f.." }, "/slug"],
    ["slug with unicode", { url: "https://example.com", slug: "café-link" }, "/slug"],
    ["slug with emoji", { url: "https://example.com", slug: "🔥🔥🔥" }, "/slug"],
    ["maxHits zero", { url: "https://example.com", maxHits: 0 }, "/maxHits"],
    ["maxHits string", { url: "https://example.com", maxHits: "10" }, "/maxHits"],
    ["expiresAt not a date", { url: "https://example.com", expiresAt: "soon" }, "/expiresAt"],
    ["startsAt after expiresAt", { url: "https://example.com", startsAt: "2031-01-01T00:00:00Z", expiresAt: "2030-01-01T00:00:00Z" }, "/startsAt"],
    ["21 tags", { url: "https://example.com", tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, "/tags"],
    ["folder too long", { url: "https://example.com", folder: "f".repeat(81) }, "/folder"],
    ["bad rule country", { url: "https://example.com", rules: [{ kind: "country", match: "USA", url: "https://e.com" }] }, "/rules/0/match"],
    ["rule country not assigned (XX)", { url: "https://example.com", rules: [{ kind: "country", match: "XX", url: "https://e.com" }] }, "/rules/0/match"],
    ["bad rule kind", { url: "https://example.com", rules: [{ kind: "weather", match: "rain", url: "https://e.com" }] }, "/rules/0/kind"],
    ["A/B weight zero", { url: "https://example.com", abUrls: [{ url: "https://e.com", weight: 0 }] }, "/abUrls/0/weight"],
    ["webhook not http", { url: "https://example.com", webhookUrl: "ftp://hooks.example.com" }, "/webhookUrl"],
    ["body is an array", [], "/"],
    ["body is a string", "hello", "/"],
  ];
  for (const [name, body, path] of invalid) {
    test(`${name} → 400 invalid_input at ${path}`, async () => {
      const payload = JSON.parse(JSON.stringify(body).replace("PORT", String(server.port)));
      const res = await a.post("/api/v1/links", payload);
      expectProblem(res, 400, "invalid_input");
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    });
  }

  test("spaces and non-ASCII in addresses are stored percent-encoded (punycode host), and redirect as such", async () => {
    const c = api(server, await createKey(server, "encoded@example.com")); // its own account: "%" in targets
    const res = await c.post("/api/v1/links", {
      url: "https://bücher.example/a b?q=ü", slug: "encoded-target",
      abUrls: [{ url: "https://example.com/x y", weight: 1 }],
    });
    expect(res.status).toBe(201);
    expect(res.body.target).toBe("https://xn--bcher-kva.example/a%20b?q=%C3%BC");
    expect(res.body.abUrls).toEqual([{ url: "https://example.com/x%20y", weight: 1 }]);
    // Visible ASCII is kept exactly as typed.
    expect((await c.post("/api/v1/links", { url: "https://example.com", slug: "as-typed" })).body.target).toBe("https://example.com");
    const hop = await fetch(`${server.url}/encoded-target`, { redirect: "manual" });
    expect(hop.status).toBe(302);
    expect(hop.headers.get("location")).toBe("https://example.com/x%20y");
  });

  test("one answer names every invalid field, those the schema refuses and those the field rules refuse", async () => {
    const res = await a.post("/api/v1/links", {
      url: "javascript:alert(1)", maxHits: 0, folder: "f".repeat(81), tags: ["t".repeat(41)], expiresAt: "soon",
      rules: [{ kind: "country", match: "ZZ", url: "https://e.com/" }], abUrls: [{ url: "https://a.example.com/", weight: -1 }], colour: "red",
    });
    expectProblem(res, 400, "invalid_input");
    expect(res.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(
      ["/abUrls/0/weight", "/colour", "/expiresAt", "/folder", "/maxHits", "/rules/0/match", "/tags", "/url"],
    );
  });

  test("malformed JSON → 400 invalid_json", async () => {
    const res = await a.raw("/api/v1/links", { method: "POST", headers: { "content-type": "application/json" }, body: '{"url": "https://e.com",' });
    expectProblem(res, 400, "invalid_json");
  });

  test("empty body → 400 invalid_json", async () => {
    expectProblem(await a.raw("/api/v1/links", { method: "POST", headers: { "content-type": "application/json" }, body: "" }), 400, "invalid_json");
  });

  test("wrong content type → 415 unsupported_media_type", async () => {
    const res = await a.raw("/api/v1/links", { method: "POST", headers: { "content-type": "text/plain" }, body: '{"url":"https://e.com"}' });
    expectProblem(res, 415, "unsupported_media_type");
    expectProblem(await a.raw("/api/v1/links", { method: "POST", body: "url=https://e.com" }), 415, "unsupported_media_type");
  });

  test("body over 1 MiB → 413 payload_too_large", async () => {
    const res = await a.raw("/api/v1/links", {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ url: "https://e.com", folder: "x".repeat(1_100_000) }),
    });
    expectProblem(res, 413, "payload_too_large");
  });
});

describe("authentication", () => {
  const cases: [string, Record<string, string>][] = [
    ["missing key", {}],
    ["not Bearer", { authorization: "Basic dXNlcjpwYXNz" }],
    ["malformed key", { authorization: "Bearer not-a-key" }],
    ["bad checksum", { authorization: "Bearer ck_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }],
  ];
  for (const [name, headers] of cases) {
    test(`${name} → 401 unauthorized with WWW-Authenticate`, async () => {
      const res = await api(server).get("/api/v1/links", { headers });
      expectProblem(res, 401, "unauthorized");
      expect(res.headers.get("www-authenticate")).toContain("Bearer");
    });
  }

  test("well-formed but unknown key → 401", async () => {
    const { newApiKey } = await import("../../shared/ids.ts");
    expectProblem(await api(server, newApiKey()).get("/api/v1/links"), 401, "unauthorized");
  });

  test("auth is checked before the body: no key and a bad body → 401", async () => {
    expectProblem(await api(server).post("/api/v1/links", { nonsense: true }), 401, "unauthorized");
  });
});

describe("read, list, update, delete", () => {
  beforeAll(async () => {
    for (let i = 0; i < 7; i++) {
      await a.post("/api/v1/links", { url: `https://shop.example.com/item/${i}`, slug: `item-${i}`, tags: i % 2 ? ["odd", "shop"] : ["even"], folder: i < 3 ? "spring" : "summer" });
    }
  });

  test("GET one link", async () => {
    const res = await a.get("/api/v1/links/item-1");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ slug: "item-1", tags: ["odd", "shop"], folder: "spring" });
  });

  test("unknown slug and another account's slug answer identically (404, no data)", async () => {
    const unknown = await b.get("/api/v1/links/no-such-link");
    const foreign = await b.get("/api/v1/links/item-1");
    expectProblem(foreign, 404, "not_found");
    expectProblem(unknown, 404, "not_found");
    expect(JSON.stringify(foreign.body)).not.toContain("shop.example.com");
    expectProblem(await b.patch("/api/v1/links/item-1", { folder: "stolen" }), 404, "not_found");
    expectProblem(await b.del("/api/v1/links/item-1"), 404, "not_found");
    expectProblem(await b.get("/api/v1/links/item-1/stats"), 404, "not_found");
    expect((await a.get("/api/v1/links/item-1")).body.folder).toBe("spring");
  });

  test("list filters by tag, folder, status and q; only own links", async () => {
    const byTag = await a.get("/api/v1/links?tag=odd&limit=500");
    expect(byTag.body.links.map((l: { slug: string }) => l.slug).sort()).toEqual(["item-1", "item-3", "item-5"]);
    const byFolder = await a.get("/api/v1/links?folder=spring&limit=500");
    expect(byFolder.body.links.map((l: { slug: string }) => l.slug).sort()).toEqual(["item-0", "item-1", "item-2"]);
    const byQ = await a.get("/api/v1/links?q=ITEM/4");
    expect(byQ.body.links.map((l: { slug: string }) => l.slug)).toEqual(["item-4"]);
    const wild = await a.get("/api/v1/links?q=%25");
    expect(wild.body.links).toEqual([]);
    expect((await b.get("/api/v1/links")).body.links).toEqual([]);
    await a.patch("/api/v1/links/item-6", { status: "paused" });
    const paused = await a.get("/api/v1/links?status=paused");
    expect(paused.body.links.map((l: { slug: string }) => l.slug)).toEqual(["item-6"]);
  });

  test("cursor pagination walks every link once, newest first", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: any = await a.get(`/api/v1/links?tag=odd&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.links.map((l: { slug: string }) => l.slug));
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect([...seen].sort()).toEqual(["item-1", "item-3", "item-5"]);
    expect(pages).toBe(2);
    const all = (await a.get("/api/v1/links?tag=odd")).body.links.map((l: { createdAt: string }) => Date.parse(l.createdAt));
    expect(all).toEqual([...all].sort((x, y) => y - x));
  });

  const badQueries: [string, string][] = [
    ["limit=0", "/limit"], ["limit=501", "/limit"], ["limit=abc", "/limit"], ["limit=0x10", "/limit"], ["limit=1e2", "/limit"], ["status=deleted", "/status"], ["cursor=%%%garbage", "/cursor"],
  ];
  for (const [q, path] of badQueries) {
    test(`list with ${q} → 400 invalid_input`, async () => {
      const res = await a.get(`/api/v1/links?${q}`);
      expectProblem(res, 400, "invalid_input");
      expect(res.body.errors[0].path).toBe(path);
    });
  }

  test("the key is checked before the query: a bad query without a key is 401; with one, the 400 carries RateLimit headers", async () => {
    const anonymous = await api(server).get("/api/v1/links?limit=abc&bogus=1");
    expectProblem(anonymous, 401, "unauthorized");
    expect(anonymous.headers.get("www-authenticate")).toContain("Bearer");
    const bad = await a.get("/api/v1/links?limit=abc");
    expectProblem(bad, 400, "invalid_input");
    expect(bad.headers.get("ratelimit-remaining")).toMatch(/^\d+$/);
  });

  test("PATCH changes only the fields present; null and \"\" clear", async () => {
    await a.post("/api/v1/links", { url: "https://example.com/before", slug: "patch-me", folder: "f", utmSource: "nl", tags: ["t"] });
    const res = await a.patch("/api/v1/links/patch-me", { targetUrl: "https://example.com/after", folder: null, utmSource: "", maxHits: 10 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ target: "https://example.com/after", folder: null, utmSource: null, maxHits: 10, tags: ["t"] });
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(res.body.createdAt));
    const r = await api(server).get("/patch-me");
    expect(r.headers.get("location")).toBe("https://example.com/after");
  });

  test("\"\" clears every clearable field, the limit, rules and A/B destinations included", async () => {
    const a = api(server, await createKey(server, "clear-all@example.com")); // its own rate-limit budget
    const rich = {
      url: "https://example.com/rich", slug: "clear-all", maxHits: 5, folder: "f", tags: "a,b", utmCampaign: "c",
      rules: [{ kind: "country", match: "de", url: "https://example.de/" }], abUrls: [{ url: "https://a.example.com/", weight: 1 }],
      webhookUrl: "https://93.184.216.34/hook", ogTitle: "t", ogDescription: "d", ogImageUrl: "https://img.example.com/i.png",
      expiresAt: "2099-01-01T00:00:00Z", startsAt: "2020-01-01T00:00:00Z", password: "pw-to-clear",
    };
    expect((await a.post("/api/v1/links", rich)).status).toBe(201);
    const fields = ["maxHits", "folder", "tags", "utmCampaign", "rules", "abUrls", "webhookUrl", "ogTitle", "ogDescription", "ogImageUrl", "expiresAt", "startsAt", "password"];
    const res = await a.patch("/api/v1/links/clear-all", Object.fromEntries(fields.map((f) => [f, ""])));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      maxHits: null, folder: null, tags: [], utmCampaign: null, rules: [], abUrls: [], webhookUrl: null, ogTitle: null,
      ogDescription: null, ogImageUrl: null, expiresAt: null, startsAt: null, hasPassword: false,
    });
  });

  test("dates: without a zone they are UTC; a day that does not exist is refused", async () => {
    const a = api(server, await createKey(server, "dates@example.com")); // its own rate-limit budget
    const res = await a.post("/api/v1/links", { url: "https://example.com/d", expiresAt: "2030-01-01T10:00", startsAt: "2029-12-31" });
    expect(res.status).toBe(201);
    expect({ expiresAt: res.body.expiresAt, startsAt: res.body.startsAt }).toEqual({ expiresAt: "2030-01-01T10:00:00.000Z", startsAt: "2029-12-31T00:00:00.000Z" });
    for (const expiresAt of ["2030-02-30T00:00:00Z", "2030-01-01T24:00:00Z", "2030-01-01T10:00:00+15:00"]) {
      const bad = await a.post("/api/v1/links", { url: "https://example.com/d", expiresAt });
      expectProblem(bad, 400, "invalid_input");
      expect(bad.body.errors[0].path).toBe("/expiresAt");
    }
  });

  test("PATCH with unknown field, `url` instead of targetUrl, or bad values → 400", async () => {
    expectProblem(await a.patch("/api/v1/links/patch-me", { url: "https://e.com" }), 400, "invalid_input");
    const status = await a.patch("/api/v1/links/patch-me", { status: "deleted" });
    expectProblem(status, 400, "invalid_input");
    expect(status.body.errors).toEqual([{ path: "/status", message: 'must be one of "active", "paused", "archived"' }]);
    const flag = await a.patch("/api/v1/links/patch-me", { serveOg: "maybe" });
    expect(flag.body.errors[0].message).toStartWith("must be one of true, false, ");
    expectProblem(await a.patch("/api/v1/links/patch-me", { targetUrl: "javascript:alert(1)" }), 400, "invalid_input");
    expectProblem(await a.raw("/api/v1/links/patch-me", { method: "PATCH", headers: { "content-type": "application/json" }, body: "{" }), 400, "invalid_json");
    expectProblem(await a.patch("/api/v1/links/no-such", { folder: "x" }), 404, "not_found");
  });

  test("webhookUrl gets a whsec_ secret when first set", async () => {
    const res = await a.post("/api/v1/links", { url: "https://example.com", webhookUrl: "https://93.184.216.34/hook" });
    expect(res.status).toBe(201);
    expect(res.body.webhookSecret).toMatch(/^whsec_/);
  });

  test("DELETE → 204, then the API and the short address answer 404", async () => {
    await a.post("/api/v1/links", { url: "https://example.com/del", slug: "delete-me" });
    expect((await api(server).get("/delete-me")).status).toBe(302);
    const res = await a.del("/api/v1/links/delete-me");
    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
    expectProblem(await a.get("/api/v1/links/delete-me"), 404, "not_found");
    expect((await api(server).get("/delete-me")).status).toBe(404);
  });

  test("concurrent PATCHes of different fields both land (the slow one, hashing a password, is re-applied)", async () => {
    const a = api(server, await createKey(server, "concurrent@example.com")); // its own rate-limit budget
    for (let i = 0; i < 3; i++) {
      const slug = `concurrent-${i}`;
      await a.post("/api/v1/links", { url: "https://example.com/c", slug });
      const [pw, folder] = await Promise.all([
        a.patch(`/api/v1/links/${slug}`, { password: "secret-pw" }),
        Bun.sleep(2).then(() => a.patch(`/api/v1/links/${slug}`, { folder: "kept", tags: "one,two" })),
      ]);
      expect([pw.status, folder.status]).toEqual([200, 200]);
      const link = (await a.get(`/api/v1/links/${slug}`)).body;
      expect({ hasPassword: link.hasPassword, folder: link.folder, tags: link.tags }).toEqual({ hasPassword: true, folder: "kept", tags: ["one", "two"] });
    }
  });

  test("a PATCH racing a DELETE never brings the link back: the short address answers 404", async () => {
    const a = api(server, await createKey(server, "race@example.com")); // its own rate-limit budget
    for (let i = 0; i < 3; i++) {
      const slug = `race-delete-${i}`;
      await a.post("/api/v1/links", { url: "https://example.com/r", slug });
      expect((await api(server).get(`/${slug}`)).status).toBe(302); // cached by the redirector
      const [patched, deleted] = await Promise.all([a.patch(`/api/v1/links/${slug}`, { password: "secret-pw" }), Bun.sleep(2).then(() => a.del(`/api/v1/links/${slug}`))]);
      expect(deleted.status).toBe(204);
      expect([200, 404]).toContain(patched.status);
      expectProblem(await a.get(`/api/v1/links/${slug}`), 404, "not_found");
      expect((await api(server).get(`/${slug}`)).status).toBe(404);
    }
  });
});

describe("bulk", () => {
  test("500 rows: good rows created, bad rows fail alone, same order", async () => {
    const rows: unknown[] = Array.from({ length: 500 }, (_, i) => ({ url: `https://bulk.example.com/${i}` }));
    rows[3] = { url: "javascript:alert(1)" };
    rows[10] = { url: "https://e.com", slug: "bulk-dup" };
    rows[11] = { url: "https://e.com", slug: "bulk-dup" };
    rows[12] = { url: "https://e.com", slug: "api" };
    rows[13] = { nope: 1 };
    const res = await a.post("/api/v1/bulk", rows);
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(500);
    expect(res.body.created).toBe(496);
    expect(res.body.failed).toBe(4);
    expect(res.body.results.map((r: { index: number }) => r.index)).toEqual([...Array(500).keys()]);
    expect(res.body.results[0]).toMatchObject({ ok: true, target: "https://bulk.example.com/0" });
    expect(res.body.results[0].shortUrl).toBe(`${server.url}/${res.body.results[0].slug}`);
    expect(res.body.results[3]).toMatchObject({ ok: false, error: { code: "invalid_input", status: 400 } });
    expect(res.body.results[10]).toMatchObject({ ok: true, slug: "bulk-dup" });
    expect(res.body.results[11]).toMatchObject({ ok: false, error: { code: "slug_taken" } });
    expect(res.body.results[12]).toMatchObject({ ok: false, error: { code: "slug_reserved" } });
    expect(res.body.results[13]).toMatchObject({ ok: false, error: { code: "invalid_input" } });
    expect((await api(server).get(`/${res.body.results[499].slug}`)).headers.get("location")).toBe("https://bulk.example.com/499");
  });

  test("{ links: [...] } envelope is accepted", async () => {
    const res = await a.post("/api/v1/bulk", { links: [{ url: "https://e.com/env" }] });
    expect(res.body).toMatchObject({ created: 1, failed: 0 });
  });

  test("more than 500 rows → 400 invalid_input, nothing created", async () => {
    const before = (await a.get("/api/v1/links?q=too-many.example&limit=500")).body.links.length;
    const res = await a.post("/api/v1/bulk", Array.from({ length: 501 }, () => ({ url: "https://too-many.example.com" })));
    expectProblem(res, 400, "invalid_input");
    expect((await a.get("/api/v1/links?q=too-many.example&limit=500")).body.links.length).toBe(before);
  });

  test("not an array → 400", async () => {
    expectProblem(await a.post("/api/v1/bulk", { url: "https://e.com" }), 400, "invalid_input");
  });
});

const BROWSER_OF_IPHONE = "Safari";

describe("redirects and stats", () => {
  test("302 with UTM parameters and Cache-Control: private, max-age=0", async () => {
    await a.post("/api/v1/links", { url: "https://example.com/land?x=1", slug: "utm-link", utmSource: "news letter", utmMedium: "email", utmCampaign: "c1" });
    const res = await api(server).get("/utm-link");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("https://example.com/land?x=1&utm_source=news+letter&utm_medium=email&utm_campaign=c1");
    expect(res.headers.get("cache-control")).toBe("private, max-age=0");
  });

  const tricks = ["/no-such-slug", "/..%2F..%2Fetc%2Fpasswd", "/first-link/extra", "/%F0%9F%94%A5", "/first-link%00", "/FIRST-LINK", "/ab", `/${"x".repeat(41)}`, "/a%20b"];
  for (const path of tricks) {
    test(`${path.slice(0, 30)} → 404 HTML`, async () => {
      const res = await api(server).get(path);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toContain("text/html");
    });
  }

  test("stats count clicks by device and browser from rollups, 24 hourly buckets", async () => {
    await a.post("/api/v1/links", { url: "https://example.com/s", slug: "stats-link" });
    const iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
    const chrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";
    for (let i = 0; i < 3; i++) await api(server).get("/stats-link", { headers: { "user-agent": iphone } });
    for (let i = 0; i < 2; i++) await api(server).get("/stats-link", { headers: { "user-agent": chrome } });
    await api(server).raw("/stats-link", { method: "HEAD" });
    const stats = await waitForClicks(a, "stats-link", 5);
    await Bun.sleep(300);
    const s = (await a.get("/api/v1/links/stats-link/stats")).body;
    expect(s.totalClicks).toBe(5);
    expect(s.slug).toBe("stats-link");
    expect(s.byDevice).toEqual({ mobile: 3, desktop: 2 });
    expect(s.byBrowser).toEqual({ [BROWSER_OF_IPHONE]: 3, Chrome: 2 });
    expect(s.last24h).toHaveLength(24);
    const current = new Date();
    current.setUTCMinutes(0, 0, 0);
    expect(s.last24h[23]).toEqual({ hour: current.toISOString(), clicks: 5 });
    expect(s.last24h.slice(0, 23).every((h: { clicks: number }) => h.clicks === 0)).toBe(true);
    expect(Date.parse(s.last24h[1].hour) - Date.parse(s.last24h[0].hour)).toBe(3_600_000);
    expect((await a.get("/api/v1/links/stats-link")).body.hits).toBe(5);
    expect(stats.totalClicks).toBeGreaterThanOrEqual(5);
  });
});

describe("rate limit", () => {
  test("200 parallel calls with one key: exactly 120 pass, the rest 429 with Retry-After", async () => {
    const c = api(server, await createKey(server, "burst@example.com"));
    const results = await Promise.all(Array.from({ length: 200 }, () => c.get("/api/v1/links?limit=1")));
    const ok = results.filter((r) => r.status === 200);
    const limited = results.filter((r) => r.status === 429);
    expect(ok).toHaveLength(120);
    expect(limited).toHaveLength(80);
    expectProblem(limited[0], 429, "rate_limited");
    expect(Number(limited[0].headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited[0].headers.get("ratelimit-remaining")).toBe("0");
    const remaining = ok.map((r) => Number(r.headers.get("ratelimit-remaining"))).sort((x, y) => x - y);
    expect(remaining[0]).toBe(0);
    expect(remaining[119]).toBe(119);
    expect(ok[0].headers.get("ratelimit-limit")).toBe("120");
    expect(Number(ok[0].headers.get("ratelimit-reset"))).toBeGreaterThan(0);
  });

  test("another key has its own budget", async () => {
    expect((await b.get("/api/v1/links")).status).toBe(200);
  });
});

describe("methods", () => {
  test("a known path asked with another method → 405 method_not_allowed with Allow", async () => {
    const cases: [string, string, string][] = [
      ["PUT", "/api/v1/links/first-link", "GET, PATCH, DELETE"],
      ["DELETE", "/api/v1/links", "GET, POST"],
      ["GET", "/api/v1/bulk", "POST"],
      ["POST", "/api/v1/links/first-link/stats", "GET"],
    ];
    for (const [method, path, allow] of cases) {
      const res = await a.raw(path, { method });
      expectProblem(res, 405, "method_not_allowed");
      expect(res.headers.get("allow")).toBe(allow);
    }
    expect((await a.get("/api/v1/links/first-link")).status).toBe(200); // the routes themselves still answer
  });
});

describe("OpenAPI", () => {
  test("the docs page pins its script and fences it with a CSP: fetches only under /api/v1/, no forms, no frames", async () => {
    const res = await fetch(`${server.url}/api/v1/docs`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toMatch(/<script src="https:\/\/cdn\.jsdelivr\.net\/npm\/@scalar\/api-reference@\d+\.\d+\.\d+\//);
    expect(html).toContain("/api/v1/openapi.json");
    const csp = res.headers.get("content-security-policy") ?? "";
    for (const directive of ["default-src 'none'", `connect-src ${server.url}/api/v1/`, "form-action 'none'", "frame-src 'none'", "frame-ancestors 'none'"]) {
      expect(csp).toContain(directive);
    }
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });

  test("GET /api/v1/openapi.json without auth documents every route with the same schemas", async () => {
    const res = await api(server).get("/api/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\./);
    const paths = Object.keys(res.body.paths);
    for (const p of ["/api/v1/links", "/api/v1/links/{slug}", "/api/v1/bulk", "/api/v1/links/{slug}/stats"]) expect(paths).toContain(p);
    const create = res.body.paths["/api/v1/links"].post;
    expect(create.requestBody.content["application/json"].schema.properties.url).toBeDefined();
    expect(create.responses["201"].content["application/json"].schema.properties.shortUrl).toBeDefined();
    expect(res.body.paths["/api/v1/links/{slug}"].patch.requestBody.content["application/json"].schema.properties.targetUrl).toBeDefined();
    // Query parameters are documented (not validated before auth), limit as an integer.
    const limit = res.body.paths["/api/v1/links"].get.parameters.find((p: { name: string }) => p.name === "limit");
    expect(limit).toMatchObject({ in: "query", required: false, schema: { type: "integer", minimum: 1, maximum: 500 } });
    // No schema identifier repeats (a validator such as Ajv refuses a document where one does).
    expect(JSON.stringify(res.body)).not.toContain('"$id"');
  });
});

describe("no input yields a 500", () => {
  test("random garbage bodies and paths", async () => {
    const bodies = ["null", "1", "true", '"x"', "[]", "{}", '{"url":null}', '{"url":{"$ne":1}}', '{"__proto__":{"admin":true},"url":"https://e.com"}',
      '{"url":"https://e.com","tags":[1,2]}', '{"url":"https://e.com","rules":"x"}', '{"url":"https://e.com","abUrls":[{}]}', "\u0000", "{\"url\":\"\\ud800\"}"];
    for (const body of bodies) {
      for (const [method, path] of [["POST", "/api/v1/links"], ["PATCH", "/api/v1/links/first-link"], ["POST", "/api/v1/bulk"]]) {
        const res = await a.raw(path, { method, headers: { "content-type": "application/json" }, body });
        expect(res.status).toBeLessThan(500);
      }
    }
    for (const path of ["/api/v1/links/%00", "/api/v1/links/..%2F..", "/api/v1/links/a/b/c", "/api/v1/nothing", "/api/v1/links/x/stats/y", "/api/v1/links?limit=1e3&cursor[]=1"]) {
      expect((await a.get(path)).status).toBeLessThan(500);
    }
  });
});

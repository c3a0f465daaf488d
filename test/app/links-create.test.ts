/** POST /api/v1/links through the Elysia app in process: the link object (§3.1), input rules (§3.2) and errors (§3.3). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BASE_URL, jsonOf, linkObject, problemOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import { MESSAGES } from "../../shared/messages.ts";

let cp: InProcessControlPlane;
let keyA: string;
let keyB: string;

const create = (json: unknown, key = keyA) => cp.request("POST", "/api/v1/links", { key, json });

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  keyA = (await cp.createKey("alice@example.com")).key;
  keyB = (await cp.createKey("bob@example.com")).key;
});
afterAll(() => cp?.close());

describe("success", () => {
  test("201 with the whole link object: given fields set, absent values null or [], dates ISO at the clock's time", async () => {
    const res = await create({ url: "https://example.com/page", slug: "first-link", tags: " x, y,,x ", folder: " spring ", utmSource: "nl" });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toStartWith("application/json");
    expect(await jsonOf(res)).toEqual(linkObject("first-link", "https://example.com/page", { tags: ["x", "y"], folder: "spring", utmSource: "nl" }));
  });

  test("without a slug, a random one of 7 URL-alphabet characters is chosen", async () => {
    const body = await jsonOf(await create({ url: "https://example.com/r" }));
    expect(body.slug).toMatch(/^[A-Za-z0-9_-]{7}$/);
    expect(body.shortUrl).toBe(`${BASE_URL}/${body.slug}`);
  });

  test("slugs are case-sensitive: CaseSlug and caseslug are two links", async () => {
    expect((await create({ url: "https://example.com/1", slug: "CaseSlug" })).status).toBe(201);
    expect((await create({ url: "https://example.com/2", slug: "caseslug" })).status).toBe(201);
  });

  test("a password is stored as Argon2id and never returned: only hasPassword tells", async () => {
    const res = await create({ url: "https://example.com/p", slug: "with-password", password: "s3cret-pass" });
    const text = await res.text();
    expect(res.status).toBe(201);
    expect(JSON.parse(text)).toEqual(linkObject("with-password", "https://example.com/p", { hasPassword: true }));
    expect(text).not.toContain("s3cret-pass");
    expect(text).not.toContain("argon2");
    const stored = await cp.deps.store.getLink(cp.deps.config.defaultDomain, "with-password");
    expect(stored!.passwordHash).toStartWith("$argon2id$");
    expect(await Bun.password.verify("s3cret-pass", stored!.passwordHash!)).toBe(true);
  });

  test("a webhookUrl gets a whsec_ secret at creation; a link without one has webhookSecret null", async () => {
    const hooked = await jsonOf(await create({ url: "https://example.com", slug: "hooked", webhookUrl: "https://93.184.216.34/hook" }));
    expect(hooked.webhookUrl).toBe("https://93.184.216.34/hook");
    expect(hooked.webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/=_-]{20,}$/);
    expect((await jsonOf(await create({ url: "https://example.com", slug: "not-hooked" }))).webhookSecret).toBeNull();
  });

  test("spaces and non-ASCII in addresses are stored percent-encoded with a punycode host; visible ASCII as typed", async () => {
    const body = await jsonOf(await create({ url: "https://bücher.example/a b?q=ü", slug: "encoded", abUrls: [{ url: "https://example.com/x y", weight: 1 }] }));
    expect(body.target).toBe("https://xn--bcher-kva.example/a%20b?q=%C3%BC");
    expect(body.abUrls).toEqual([{ url: "https://example.com/x%20y", weight: 1 }]);
    expect((await jsonOf(await create({ url: "https://example.com/a?b=%20c&d", slug: "as-typed" }))).target).toBe("https://example.com/a?b=%20c&d");
  });

  test("dates without a zone are UTC, a bare date is midnight UTC", async () => {
    const body = await jsonOf(await create({ url: "https://example.com/d", slug: "dated", expiresAt: "2030-01-01T10:00", startsAt: "2029-12-31" }));
    expect([body.startsAt, body.expiresAt]).toEqual(["2029-12-31T00:00:00.000Z", "2030-01-01T10:00:00.000Z"]);
  });

  test("country rule matches are upper-cased, device matches lower-cased", async () => {
    const rules = [{ kind: "country", match: "de", url: "https://example.de/" }, { kind: "device", match: "IOS", url: "https://apps.example.com/" }];
    const body = await jsonOf(await create({ url: "https://example.com", slug: "ruled", rules }));
    expect(body.rules).toEqual([{ kind: "country", match: "DE", url: "https://example.de/" }, { kind: "device", match: "ios", url: "https://apps.example.com/" }]);
  });
});

describe("refusals", () => {
  test("a slug already taken answers 409 slug_taken, also for another account", async () => {
    await create({ url: "https://example.com", slug: "taken-one" });
    expect((await problemOf(await create({ url: "https://example.com", slug: "taken-one" }), 409, "slug_taken")).detail).toBe('"taken-one" is already taken');
    await problemOf(await create({ url: "https://example.com", slug: "taken-one" }, keyB), 409, "slug_taken");
  });

  test("reserved slugs answer 400 slug_reserved at /slug, whatever their case", async () => {
    for (const slug of ["api", "dashboard", "healthz", "MCP", "favicon.ico", "robots.txt", "Static"]) {
      const problem = await problemOf(await create({ url: "https://example.com", slug }), 400, "slug_reserved");
      expect(problem.errors).toEqual([{ path: "/slug", message: MESSAGES.reserved }]);
    }
  });

  test("an unknown field answers 400 invalid_input naming it as an unknown field", async () => {
    const problem = await problemOf(await create({ url: "https://example.com", colour: "red" }), 400, "invalid_input");
    expect(problem.errors).toEqual([{ path: "/colour", message: "unknown field" }]);
  });

  const invalid: [string, unknown, string][] = [
    ["missing url", {}, "/url"],
    ["url of the wrong type", { url: 12 }, "/url"],
    ["javascript: url", { url: "javascript:alert(1)" }, "/url"],
    ["data: url", { url: "data:text/html,<script>alert(1)</script>" }, "/url"],
    ["file: url", { url: "file:///etc/passwd" }, "/url"],
    ["relative url", { url: "/just/a/path" }, "/url"],
    ["url over 2048 characters", { url: `https://example.com/${"a".repeat(2040)}` }, "/url"],
    ["this service's own short address", { url: `${BASE_URL}/first-link` }, "/url"],
    ["url with a NUL", { url: "https://example.com/\u0000x" }, "/url"],
    ["url with a line break (header injection)", { url: "https://example.com/\r\nSet-Cookie: x=1" }, "/url"],
    ["rule url with a tab", { url: "https://example.com", rules: [{ kind: "device", match: "ios", url: "https://e.com/\tx" }] }, "/rules/0/url"],
    ["A/B url with DEL", { url: "https://example.com", abUrls: [{ url: "https://e.com/\u007f", weight: 1 }] }, "/abUrls/0/url"],
    ["slug too short", { url: "https://example.com", slug: "ab" }, "/slug"],
    ["slug too long", { url: "https://example.com", slug: "x".repeat(41) }, "/slug"],
    ["slug with a slash", { url: "https://example.com", slug: "a/b/c" }, "/slug"],
    ["slug with unicode", { url: "https://example.com", slug: "café-link" }, "/slug"],
    ["maxHits zero", { url: "https://example.com", maxHits: 0 }, "/maxHits"],
    ["maxHits over a million", { url: "https://example.com", maxHits: 1_000_001 }, "/maxHits"],
    ["maxHits as a string", { url: "https://example.com", maxHits: "10" }, "/maxHits"],
    ["expiresAt not a date", { url: "https://example.com", expiresAt: "soon" }, "/expiresAt"],
    ["expiresAt on February 30", { url: "https://example.com", expiresAt: "2030-02-30T00:00:00Z" }, "/expiresAt"],
    ["expiresAt at 24:00", { url: "https://example.com", expiresAt: "2030-01-01T24:00:00Z" }, "/expiresAt"],
    ["expiresAt with an offset beyond 14 hours", { url: "https://example.com", expiresAt: "2030-01-01T10:00:00+15:00" }, "/expiresAt"],
    ["21 tags", { url: "https://example.com", tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, "/tags"],
    ["a tag over 40 characters", { url: "https://example.com", tags: ["t".repeat(41)] }, "/tags/0"],
    ["folder over 80 characters", { url: "https://example.com", folder: "f".repeat(81) }, "/folder"],
    ["rule country of three letters", { url: "https://example.com", rules: [{ kind: "country", match: "USA", url: "https://e.com" }] }, "/rules/0/match"],
    ["rule country not assigned (XX)", { url: "https://example.com", rules: [{ kind: "country", match: "XX", url: "https://e.com" }] }, "/rules/0/match"],
    ["rule device unknown", { url: "https://example.com", rules: [{ kind: "device", match: "fridge", url: "https://e.com" }] }, "/rules/0/match"],
    ["rule kind unknown", { url: "https://example.com", rules: [{ kind: "weather", match: "rain", url: "https://e.com" }] }, "/rules/0/kind"],
    ["A/B weight zero", { url: "https://example.com", abUrls: [{ url: "https://e.com", weight: 0 }] }, "/abUrls/0/weight"],
    ["webhook not http", { url: "https://example.com", webhookUrl: "ftp://hooks.example.com" }, "/webhookUrl"],
    ["webhook to a private address", { url: "https://example.com", webhookUrl: "http://10.0.0.1/hook" }, "/webhookUrl"],
    ["body is an array", [], "/"],
    ["body is a string", "hello", "/"],
  ];
  for (const [name, body, path] of invalid) {
    test(`${name} → 400 invalid_input at ${path}`, async () => {
      const problem = await problemOf(await create(body), 400, "invalid_input");
      expect(problem.errors!.map((e) => e.path)).toEqual([path]);
    });
  }

  test("one answer names every invalid field, those the schema refuses and those the field rules refuse", async () => {
    const problem = await problemOf(await create({
      url: "javascript:alert(1)", maxHits: 0, folder: "f".repeat(81), tags: ["t".repeat(41)], expiresAt: "soon", slug: "no spaces",
      rules: [{ kind: "country", match: "ZZ", url: "https://e.com/" }], abUrls: [{ url: "https://a.example.com/", weight: -1 }], colour: "red",
    }), 400, "invalid_input");
    expect(problem.errors!.map((e) => e.path).sort())
      .toEqual(["/abUrls/0/weight", "/colour", "/expiresAt", "/folder", "/maxHits", "/rules/0/match", "/slug", "/tags/0", "/url"]);
    expect(problem.errors!.find((e) => e.path === "/slug")!.message).toBe(MESSAGES.slug);
  });

  test("startsAt at or after expiresAt answers 400 invalid_input at /startsAt", async () => {
    for (const startsAt of ["2030-01-01T00:00:00Z", "2031-01-01T00:00:00Z"]) {
      const problem = await problemOf(await create({ url: "https://example.com", startsAt, expiresAt: "2030-01-01T00:00:00Z" }), 400, "invalid_input");
      expect(problem.errors).toEqual([{ path: "/startsAt", message: "must be before expiresAt" }]);
    }
  });

  test("a refused create stores nothing", async () => {
    await create({ url: "https://example.com", slug: "never-stored", maxHits: 0 });
    expect(await cp.deps.store.getLink(cp.deps.config.defaultDomain, "never-stored")).toBeNull();
  });
});

describe("bodies", () => {
  const raw = (body: string | undefined, headers: Record<string, string> = { "content-type": "application/json" }) =>
    cp.request("POST", "/api/v1/links", { key: keyA, body, headers });

  test("malformed JSON answers 400 invalid_json", async () => {
    expect((await problemOf(await raw('{"url": "https://e.com",'), 400, "invalid_json")).detail).toBe("The body is not valid JSON");
  });

  test("an empty body answers 400 invalid_json", async () => {
    await problemOf(await raw(""), 400, "invalid_json");
  });

  test("bytes that are not UTF-8 answer 400 invalid_json", async () => {
    const res = await cp.handle(new Request(`${BASE_URL}/api/v1/links`, {
      method: "POST", headers: { authorization: `Bearer ${keyA}`, "content-type": "application/json" }, body: new Uint8Array([0x7b, 0xff, 0x7d]),
    }));
    expect((await problemOf(res, 400, "invalid_json")).detail).toBe("The body is not valid UTF-8");
  });

  test("a content type other than JSON answers 415 unsupported_media_type, as does none", async () => {
    await problemOf(await raw('{"url":"https://e.com"}', { "content-type": "text/plain" }), 415, "unsupported_media_type");
    await problemOf(await raw("url=https://e.com", {}), 415, "unsupported_media_type");
  });

  test("a +json content type with parameters is accepted", async () => {
    expect((await raw('{"url":"https://e.com/vnd","slug":"vendor-json"}', { "content-type": "application/vnd.api+json; charset=utf-8" })).status).toBe(201);
  });

  test("a body over 1 MiB answers 413 payload_too_large", async () => {
    await problemOf(await raw(JSON.stringify({ url: "https://e.com", folder: "x".repeat(1_100_000) })), 413, "payload_too_large");
  });
});

import { describe, expect, test } from "bun:test";
import { AppError } from "../../shared/errors.ts";
import { checkSlug, normaliseChanges, parseFlag } from "../../shared/link-input.ts";
import { CreateLinkInput } from "../../shared/schemas.ts";
import { schemaErrors } from "../../shared/validation.ts";

const ctx = { ownHosts: ["s.test"] };

function errorOf(fn: () => unknown): AppError {
  try {
    fn();
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error("expected an AppError");
}

describe("checkSlug", () => {
  const cases: [string, string | null][] = [
    ["abc", null], ["A-b_9", null], ["x".repeat(40), null],
    ["ab", "invalid_input"], ["x".repeat(41), "invalid_input"], ["a/b", "invalid_input"], ["a b", "invalid_input"],
    ["../etc", "invalid_input"], ["ünï", "invalid_input"], ["a%2Fb", "invalid_input"], ["abc\n", "invalid_input"],
    ["api", "slug_reserved"], ["Dashboard", "slug_reserved"], ["healthz", "slug_reserved"], ["mcp", "slug_reserved"],
  ];
  for (const [slug, code] of cases) {
    test(`${JSON.stringify(slug)} → ${code ?? "ok"}`, () => {
      if (code === null) expect(checkSlug(slug)).toBe(slug);
      else expect(errorOf(() => checkSlug(slug)).code).toBe(code as never);
    });
  }
});

describe("normaliseChanges: addresses", () => {
  const cases: [string, boolean][] = [
    ["https://example.com/a?b=c#d", true], ["http://example.com", true],
    ["javascript:alert(1)", false], ["data:text/html,hi", false], ["file:///etc/passwd", false], ["ftp://x.y/", false],
    ["example.com", false], ["https://s.test/abc", false], [`https://e.com/${"a".repeat(2040)}`, false], ["http://", false],
  ];
  for (const [url, ok] of cases) {
    test(`${url.slice(0, 40)} → ${ok ? "accepted" : "refused"}`, () => {
      if (ok) expect(normaliseChanges({ url }, ctx, "create").target).toBe(url);
      else expect(errorOf(() => normaliseChanges({ url }, ctx, "create")).errors?.[0].path).toBe("/url");
    });
  }
});

describe("normaliseChanges: fields", () => {
  test("tags from a comma string are trimmed, de-duplicated, empties dropped", () => {
    expect(normaliseChanges({ url: "https://e.com", tags: " a, b,,a , c " }, ctx, "create").tags).toEqual(["a", "b", "c"]);
  });
  test("more than 20 tags or a tag over 40 characters is refused", () => {
    expect(errorOf(() => normaliseChanges({ url: "https://e.com", tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, ctx, "create")).code).toBe("invalid_input");
    expect(errorOf(() => normaliseChanges({ url: "https://e.com", tags: ["x".repeat(41)] }, ctx, "create")).errors?.[0].path).toBe("/tags");
  });
  test("null and empty string clear fields", () => {
    const c = normaliseChanges({ targetUrl: undefined, folder: "", utmSource: null, tags: null, rules: null, password: "", expiresAt: "" }, ctx, "update");
    expect(c).toEqual({ folder: null, utmSource: null, tags: [], rules: [], password: null, expiresAt: null });
  });
  test("dates must be ISO 8601", () => {
    expect(normaliseChanges({ url: "https://e.com", expiresAt: "2030-01-02T03:04:05Z" }, ctx, "create").expiresAt).toBe(Date.parse("2030-01-02T03:04:05Z"));
    expect(errorOf(() => normaliseChanges({ url: "https://e.com", expiresAt: "tomorrow" }, ctx, "create")).errors?.[0].path).toBe("/expiresAt");
    expect(errorOf(() => normaliseChanges({ url: "https://e.com", startsAt: "2030-13-45T00:00:00Z" }, ctx, "create")).errors?.[0].path).toBe("/startsAt");
  });
  test("rules: country codes upper-cased, devices checked, every bad field reported", () => {
    const c = normaliseChanges({ url: "https://e.com", rules: [{ kind: "country", match: "de", url: "https://e.de" }] }, ctx, "create");
    expect(c.rules).toEqual([{ kind: "country", match: "DE", url: "https://e.de" }]);
    const e = errorOf(() => normaliseChanges({ url: "https://e.com", rules: [
      { kind: "country", match: "Germany", url: "https://e.de" },
      { kind: "device", match: "fridge", url: "javascript:x" },
    ] }, ctx, "create"));
    expect(e.errors?.map((x) => x.path)).toEqual(["/rules/0/match", "/rules/1/match", "/rules/1/url"]);
  });
  test("serveOg accepts the documented spellings", () => {
    expect([true, "true", 1, "1", "on"].map((v) => parseFlag(v))).toEqual([true, true, true, true, true]);
    expect([false, "false", 0, "0", "off"].map((v) => parseFlag(v))).toEqual([false, false, false, false, false]);
  });
});

describe("CreateLinkInput schema", () => {
  const cases: [string, unknown, string][] = [
    ["missing url", {}, "/url"],
    ["unknown field", { url: "https://e.com", slugg: "x" }, "/slugg"],
    ["wrong type", { url: 42 }, "/url"],
    ["maxHits too big", { url: "https://e.com", maxHits: 1_000_001 }, "/maxHits"],
    ["maxHits not an integer", { url: "https://e.com", maxHits: 1.5 }, "/maxHits"],
    ["bad status", { url: "https://e.com", status: "deleted" }, "/status"],
    ["too many rules", { url: "https://e.com", rules: Array.from({ length: 51 }, () => ({ kind: "device", match: "ios", url: "https://e.com" })) }, "/rules"],
    ["negative A/B weight", { url: "https://e.com", abUrls: [{ url: "https://e.com", weight: -1 }] }, "/abUrls/0/weight"],
    ["serveOg nonsense", { url: "https://e.com", serveOg: "maybe" }, "/serveOg"],
    ["password too long", { url: "https://e.com", password: "x".repeat(201) }, "/password"],
    ["folder too long", { url: "https://e.com", folder: "x".repeat(81) }, "/folder"],
  ];
  for (const [name, body, path] of cases) {
    test(`${name} → error at ${path}`, () => {
      expect(schemaErrors(CreateLinkInput, body).map((e) => e.path)).toContain(path);
    });
  }
});

import { describe, expect, test } from "bun:test";
import { AppError } from "../../shared/errors.ts";
import { checkSlug, isOwnHost, normaliseChanges, ownHostsOf, parseFlag, type InputContext } from "../../shared/link-input.ts";
import { CreateLinkInput } from "../../shared/schemas.ts";
import { schemaErrors } from "../../shared/validation.ts";

const ctx: InputContext = { ownHosts: ownHostsOf(["http://s.test"], 3000) };

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

/** The message a create with this `url` is refused with at /url, or null when it is accepted. */
function refusalOf(url: string, c: InputContext = ctx): string | null {
  try {
    normaliseChanges({ url }, c, "create");
    return null;
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    expect(e.code).toBe("invalid_input");
    expect(e.errors?.map((x) => x.path)).toEqual(["/url"]);
    return e.errors![0].message;
  }
}

describe("addresses as a browser resolves them", () => {
  // A browser resolves these against the short address it was sent from: `http:/abc` on http://s.test/abc is
  // http://s.test/abc again, a link that redirects to itself.
  const relative = ["http:/s-slug", "http:s-slug", "HTTP:/s-slug", "https:s-slug", "http:\\\\x.example/a", "https:\\\\x.example", "http:/\\x.example", "http:///x.example/a", "https:////x.example"];
  for (const url of relative) {
    test(`${url} is refused: not scheme://host`, () => {
      expect(refusalOf(url)).toBe("must be an absolute http or https URL with a host (https://host/...)");
    });
  }
  test("a backslash before the query is refused (browsers read it as /); after it, kept", () => {
    expect(refusalOf("https://x.example\\@s.test/")).toBe("must not contain a backslash before its query (browsers read it as /)");
    expect(refusalOf("https://x.example/a\\b")).toBe("must not contain a backslash before its query (browsers read it as /)");
    expect(refusalOf("https://x.example/a?q=a\\b")).toBeNull();
  });
  test("spaces around a rule's address are not a relative spelling: it is stored as the address it spells", () => {
    const c = normaliseChanges({ url: "https://e.com", rules: [{ kind: "device", match: "ios", url: " https://x.example/a " }] }, ctx, "create");
    expect(c.rules?.[0].url).toBe("https://x.example/a");
  });
  test("tabs and line breaks inside are refused (browsers drop them)", () => {
    for (const url of ["https://x.exa\tmple/", "http:/\t/s.test/x", "https://x.example/\na"]) expect(refusalOf(url)).toBe("must not contain control characters");
  });

  const own = "must not point to this service's short addresses";
  const ownSpellings = [
    "http://s.test/abc", "http://S.TEST/abc", "http://s.test./abc", "http://s.test:80/abc", "https://s.test/abc",
    "http://%73.test/abc", "http://user@s.test/abc", "http://ｓ.test/abc",
  ];
  for (const url of ownSpellings) test(`${url} is this service`, () => expect(refusalOf(url)).toBe(own));
  test("another port or name of the host is not this service", () => {
    for (const url of ["http://s.test:3000/abc", "http://s.test:8080/abc", "http://a.s.test/abc", "https://s.test.example/abc"]) expect(refusalOf(url)).toBeNull();
  });
  test("an internationalised base is compared in punycode, whichever way the address spells it", () => {
    const idn: InputContext = { ownHosts: ownHostsOf(["https://bücher.test"], 3000) };
    for (const url of ["https://xn--bcher-kva.test/x", "https://BÜCHER.test/x", "https://bücher.test./x"]) expect(refusalOf(url, idn)).toBe(own);
  });

  describe("a local base: every loopback name at its port is this service", () => {
    const local: InputContext = { ownHosts: ownHostsOf(["http://localhost:3000"], 3000) };
    const loopback = [
      "http://localhost:3000/x", "http://localhost.:3000/x", "http://LOCALHOST:3000/x", "http://app.localhost:3000/x",
      "http://127.0.0.1:3000/x", "http://127.0.0.2:3000/x", "http://127.1:3000/x", "http://0x7f000001:3000/x",
      "http://[::1]:3000/x", "http://[0:0::1]:3000/x", "http://[::ffff:127.0.0.1]:3000/x", "http://0.0.0.0:3000/x",
    ];
    for (const url of loopback) test(`${url} is refused`, () => expect(refusalOf(url, local)).toBe(own));
    test("other ports of the machine, and other hosts, are not", () => {
      for (const url of ["http://localhost:3001/x", "http://127.0.0.1:8080/x", "http://[::1]/x", "https://example.com/x"]) expect(refusalOf(url, local)).toBeNull();
    });
    test("the port the process listens on counts too when the base names another (a proxy in front)", () => {
      const proxied: InputContext = { ownHosts: ownHostsOf(["http://localhost:8080"], 3000) };
      expect([refusalOf("http://127.0.0.1:8080/x", proxied), refusalOf("http://127.0.0.1:3000/x", proxied)]).toEqual([own, own]);
    });
  });
  test("with a public base, a visitor's own loopback addresses are somewhere else", () => {
    const pub: InputContext = { ownHosts: ownHostsOf(["https://s.example"], 3000) };
    expect([refusalOf("http://localhost:3000/x", pub), refusalOf("http://s.example/x", pub)]).toEqual([null, own]);
  });
  test("every address field is checked the same way, at its own path", () => {
    const e = (() => {
      try {
        normaliseChanges({ url: "http:/a", rules: [{ kind: "device", match: "ios", url: "http://s.test./x" }], abUrls: [{ url: "https:x", weight: 1 }], expiredUrl: "HTTP://S.TEST/y", webhookUrl: "http:\\\\s.test", ogImageUrl: "http://s.test:80/i.png" }, ctx, "create");
      } catch (err) {
        return err as AppError;
      }
      throw new Error("accepted");
    })();
    expect(e.code).toBe("invalid_input");
    expect(e.errors!.map((x) => x.path).sort()).toEqual(["/abUrls/0/url", "/expiredUrl", "/ogImageUrl", "/rules/0/url", "/url", "/webhookUrl"]);
  });
  test("isOwnHost compares parsed addresses", () => {
    expect(isOwnHost(new URL("http://S.Test.:80/"), ctx.ownHosts)).toBe(true);
    expect(isOwnHost(new URL("http://s.test:81/"), ctx.ownHosts)).toBe(false);
  });
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

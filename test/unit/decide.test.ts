import { describe, expect, test } from "bun:test";
import { decide, goneOutcome, pickDestination, type RequestFacts } from "../../shared/decide.ts";
import { compileLink, type CompiledLink, type LinkRecord } from "../../shared/link.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const HOUR = 3_600_000;

function link(over: Partial<LinkRecord> = {}): LinkRecord {
  return {
    id: "l1", accountId: "a1", domain: "s.test", slug: "abc", target: "https://example.com/landing", status: "active",
    createdAt: NOW - HOUR, updatedAt: NOW - HOUR, expiresAt: null, startsAt: null, maxHits: null, hits: 0, passwordHash: null,
    tags: [], folder: null, utmSource: null, utmMedium: null, utmCampaign: null, rules: [], abUrls: [], webhookUrl: null,
    webhookSecret: null, serveOg: false, ogTitle: null, ogDescription: null, ogImageUrl: null, expiredUrl: null, externalId: null,
    webhookPausedAt: null, webhookPausedReason: null,
    ...over,
  };
}

function facts(over: Partial<RequestFacts> = {}): RequestFacts {
  return {
    method: "GET", unlocked: false, draw: 0.5, isCrawler: () => false, country: () => null,
    device: () => ({ type: "desktop", os: "other" }), ...over,
  };
}

const EX = "https://example.com/landing";

describe("decide: the order of design §4", () => {
  const cases: [string, LinkRecord | null, Partial<RequestFacts>, number, object][] = [
    ["unknown slug → not_found", null, {}, 0, { kind: "not_found" }],
    ["paused → not_found", link({ status: "paused" }), {}, 0, { kind: "not_found" }],
    ["archived → gone", link({ status: "archived" }), {}, 0, { kind: "gone", reason: "archived" }],
    ["expired → gone", link({ expiresAt: NOW - 1 }), {}, 0, { kind: "gone", reason: "expired" }],
    ["expiry exactly now → gone", link({ expiresAt: NOW }), {}, 0, { kind: "gone", reason: "expired" }],
    ["not yet expired → redirect", link({ expiresAt: NOW + 1 }), {}, 0, { kind: "redirect", url: EX, variant: null, rule: null, count: true }],
    ["before startsAt → too_early", link({ startsAt: NOW + HOUR }), {}, 0, { kind: "too_early", startsAt: NOW + HOUR }],
    ["after startsAt → redirect", link({ startsAt: NOW - 1 }), {}, 0, { kind: "redirect", url: EX, variant: null, rule: null, count: true }],
    ["expired beats too early", link({ startsAt: NOW + HOUR, expiresAt: NOW - 1 }), {}, 0, { kind: "gone", reason: "expired" }],
    ["maxHits reached → gone", link({ maxHits: 3 }), {}, 3, { kind: "gone", reason: "limit" }],
    ["below maxHits → redirect", link({ maxHits: 3 }), {}, 2, { kind: "redirect", url: EX, variant: null, rule: null, count: true }],
    ["password → form", link({ passwordHash: "h" }), {}, 0, { kind: "password" }],
    ["password + crawler + OG → form, no destination", link({ passwordHash: "h", serveOg: true }), { isCrawler: () => true }, 0, { kind: "password" }],
    ["password unlocked by cookie → redirect", link({ passwordHash: "h" }), { unlocked: true }, 0, { kind: "redirect", url: EX, variant: null, rule: null, count: true }],
    ["password unlocked, HEAD → redirect not counted", link({ passwordHash: "h" }), { unlocked: true, method: "HEAD" }, 0, { kind: "redirect", url: EX, variant: null, rule: null, count: false }],
    ["form POST → unlock with the destination", link({ passwordHash: "h" }), { method: "POST" }, 0, { kind: "unlock", url: EX, variant: null, rule: null }],
    ["form POST with a cookie too → unlock (the posted password decides)", link({ passwordHash: "h" }), { method: "POST", unlocked: true }, 0, { kind: "unlock", url: EX, variant: null, rule: null }],
    ["form POST by a crawler on an OG link → unlock, no preview", link({ passwordHash: "h", serveOg: true }), { method: "POST", isCrawler: () => true }, 0, { kind: "unlock", url: EX, variant: null, rule: null }],
    ["form POST on an expired link → gone", link({ passwordHash: "h", expiresAt: NOW - 1 }), { method: "POST" }, 0, { kind: "gone", reason: "expired" }],
    ["form POST at the limit → gone", link({ passwordHash: "h", maxHits: 2 }), { method: "POST" }, 2, { kind: "gone", reason: "limit" }],
    ["POST without a password → method_not_allowed", link(), { method: "POST" }, 0, { kind: "method_not_allowed" }],
    ["POST by a crawler on an OG link → method_not_allowed", link({ serveOg: true }), { method: "POST", isCrawler: () => true }, 0, { kind: "method_not_allowed" }],
    ["POST on an unknown slug → not_found", null, { method: "POST" }, 0, { kind: "not_found" }],
    ["expired beats password", link({ passwordHash: "h", expiresAt: NOW - 1 }), {}, 0, { kind: "gone", reason: "expired" }],
    ["limit beats password", link({ passwordHash: "h", maxHits: 1 }), {}, 1, { kind: "gone", reason: "limit" }],
    ["OG + crawler → preview", link({ serveOg: true }), { isCrawler: () => true }, 0, { kind: "preview", destination: EX }],
    ["OG + human → redirect", link({ serveOg: true }), {}, 0, { kind: "redirect", url: EX, variant: null, rule: null, count: true }],
    ["crawler without OG → counted redirect", link(), { isCrawler: () => true }, 0, { kind: "redirect", url: EX, variant: null, rule: null, count: true }],
    ["HEAD → redirect not counted", link(), { method: "HEAD" }, 0, { kind: "redirect", url: EX, variant: null, rule: null, count: false }],
    ["UTM applied to target", link({ utmSource: "nl", utmCampaign: "spring sale" }), {}, 0,
      { kind: "redirect", url: "https://example.com/landing?utm_source=nl&utm_campaign=spring+sale", variant: null, rule: null, count: true }],
  ];
  for (const [name, l, f, hits, expected] of cases) {
    test(name, () => {
      expect(decide(l ? compileLink(l) : null, facts(f), NOW, hits)).toEqual(expected as never);
    });
  }
});

describe("decide: expiredUrl sends a gone link's visitors on (302, not a click)", () => {
  const OUT = "https://example.com/ended";
  const cases: [string, LinkRecord, Partial<RequestFacts>, number, object][] = [
    ["archived", link({ status: "archived", expiredUrl: OUT }), {}, 0, { kind: "gone_redirect", reason: "archived", url: OUT }],
    ["expired", link({ expiresAt: NOW - 1, expiredUrl: OUT }), {}, 0, { kind: "gone_redirect", reason: "expired", url: OUT }],
    ["limit reached", link({ maxHits: 3, expiredUrl: OUT }), {}, 3, { kind: "gone_redirect", reason: "limit", url: OUT }],
    ["HEAD on an expired link: the same", link({ expiresAt: NOW - 1, expiredUrl: OUT }), { method: "HEAD" }, 0, { kind: "gone_redirect", reason: "expired", url: OUT }],
    ["form POST on an expired link: the same", link({ expiresAt: NOW - 1, passwordHash: "h", expiredUrl: OUT }), { method: "POST" }, 0, { kind: "gone_redirect", reason: "expired", url: OUT }],
    ["expired password link: no form", link({ expiresAt: NOW - 1, passwordHash: "h", expiredUrl: OUT }), {}, 0, { kind: "gone_redirect", reason: "expired", url: OUT }],
    ["paused stays hidden", link({ status: "paused", expiredUrl: OUT }), {}, 0, { kind: "not_found" }],
    ["not yet started is unaffected", link({ startsAt: NOW + HOUR, expiredUrl: OUT }), {}, 0, { kind: "too_early", startsAt: NOW + HOUR }],
    ["a live link still redirects to its destination", link({ expiresAt: NOW + 1, maxHits: 3, expiredUrl: OUT }), {}, 2, { kind: "redirect", url: EX, variant: null, rule: null, count: true }],
  ];
  for (const [name, l, f, hits, expected] of cases) {
    test(name, () => {
      expect(decide(compileLink(l), facts(f), NOW, hits)).toEqual(expected as never);
    });
  }

  test("a compiled link cached by a version without expiredUrl (undefined) answers its 410", () => {
    const old: Partial<CompiledLink> = compileLink(link({ status: "archived" }));
    delete old.expiredUrl;
    expect(decide(old as CompiledLink, facts(), NOW, 0)).toEqual({ kind: "gone", reason: "archived" });
  });

  test("goneOutcome is what the maxHits step answers once a hit cannot be taken", () => {
    expect(goneOutcome(compileLink(link({ expiredUrl: OUT })), "limit")).toEqual({ kind: "gone_redirect", reason: "limit", url: OUT });
    expect(goneOutcome(compileLink(link()), "limit")).toEqual({ kind: "gone", reason: "limit" });
  });
});

describe("pickDestination: rules, then weighted A/B, then target", () => {
  const rules = [
    { kind: "country" as const, match: "de", url: "https://example.de/" },
    { kind: "device" as const, match: "ios", url: "https://apps.apple.com/x" },
    { kind: "device" as const, match: "MOBILE", url: "https://m.example.com/" },
  ];
  const ab = [
    { url: "https://a.example.com/", weight: 1 },
    { url: "https://b.example.com/", weight: 3 },
  ];
  const cases: [string, Partial<LinkRecord>, Partial<RequestFacts>, string, number | null, number | null][] = [
    ["country rule matches (case-insensitive code)", { rules }, { country: () => "DE" }, "https://example.de/", null, 0],
    ["device os rule", { rules }, { device: () => ({ type: "mobile", os: "ios" }) }, "https://apps.apple.com/x", null, 1],
    ["device type rule", { rules }, { device: () => ({ type: "mobile", os: "android" }) }, "https://m.example.com/", null, 2],
    ["first matching rule wins", { rules }, { country: () => "DE", device: () => ({ type: "mobile", os: "ios" }) }, "https://example.de/", null, 0],
    ["no rule matches → target", { rules }, {}, EX, null, null],
    ["unknown country never matches", { rules }, { country: () => null }, EX, null, null],
    ["A/B low draw → first variant", { abUrls: ab }, { draw: 0.1 }, "https://a.example.com/", 0, null],
    ["A/B draw at boundary → second variant", { abUrls: ab }, { draw: 0.25 }, "https://b.example.com/", 1, null],
    ["A/B high draw → last variant", { abUrls: ab }, { draw: 0.999999 }, "https://b.example.com/", 1, null],
    ["rule beats A/B", { rules, abUrls: ab }, { country: () => "DE", draw: 0.1 }, "https://example.de/", null, 0],
    ["A/B when no rule matches", { rules, abUrls: ab }, { draw: 0.1 }, "https://a.example.com/", 0, null],
    ["UTM applied to rule destination", { rules, utmMedium: "email" }, { country: () => "DE" }, "https://example.de/?utm_medium=email", null, 0],
    ["UTM applied to A/B destination", { abUrls: ab, utmSource: "x" }, { draw: 0.9 }, "https://b.example.com/?utm_source=x", 1, null],
  ];
  for (const [name, over, f, url, variant, rule] of cases) {
    test(name, () => {
      expect(pickDestination(compileLink(link(over)), facts(f))).toEqual({ url, variant, rule });
    });
  }

  test("costly facts are not computed for links that do not need them", () => {
    let asked = 0;
    const spy = facts({ country: () => (asked++, "US"), device: () => (asked++, { type: "desktop", os: "other" }), isCrawler: () => (asked++, false) });
    decide(compileLink(link({ abUrls: ab })), spy, NOW, 0);
    expect(asked).toBe(0);
  });

  test("A/B weights are honoured over many draws", () => {
    const c = compileLink(link({ abUrls: ab }));
    let b = 0;
    for (let i = 0; i < 4000; i++) if (pickDestination(c, facts({ draw: i / 4000 })).variant === 1) b++;
    expect(b).toBe(3000);
  });
});

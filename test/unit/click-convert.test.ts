/** toStoredClick (control/clicks/convert.ts): every dimension of a click, from a queued ClickEvent. */
import { describe, expect, test } from "bun:test";
import { batchLookups, toStoredClick } from "../../control/clicks/convert.ts";
import type { Place } from "../../shared/facts/geo.ts";
import type { ClickEvent } from "../../shared/ports.ts";

const UA = {
  iphone: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
  desktop: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
  facebook: "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
};
const base: ClickEvent = { id: "c1", linkId: "L1", ts: 1_893_499_200_000, ua: UA.desktop, ip: null, country: null, referrer: null, variant: null, rule: null, qr: false };
const munich: Place = { country: "DE", region: "DE-BY", city: "Munich" };
const places: Record<string, Place> = { "203.0.113.1": munich, "203.0.113.2": { country: "FR", region: null, city: null } };
const lookups = () => batchLookups((ip) => places[ip] ?? { country: null, region: null, city: null });
const convert = (over: Partial<ClickEvent>) => toStoredClick({ ...base, ...over }, "b1", lookups());

describe("toStoredClick", () => {
  test("records every dimension, the bot flag and the batch; never the address", () => {
    const s = convert({ ua: UA.iphone, ip: "203.0.113.1", referrer: "https://News.Example.org/item?id=1", variant: 1, rule: 0, qr: true });
    expect(s).toEqual({
      batch: "b1", linkId: "L1", ts: base.ts, bot: false, firstVisit: false, referrerUrl: "https://News.Example.org/item?id=1",
      dims: { country: "DE", region: "DE-BY", city: "Munich", device: "mobile", browser: "Safari", os: "iOS", referrer: "news.example.org", variant: "1", rule: "0", via: "qr" },
    });
    expect(JSON.stringify(s)).not.toContain("203.0.113.1");
  });

  test("a click with the same facts as the one before shares its dimensions; any differing fact makes new ones", () => {
    const l = lookups();
    const first = toStoredClick({ ...base, ip: "203.0.113.1" }, "b1", l);
    const again = toStoredClick({ ...base, id: "c2", ts: base.ts + 5, linkId: "L2", ip: "203.0.113.1" }, "b2", l);
    expect(again.dims).toBe(first.dims);
    expect([again.ts - base.ts, again.linkId, again.batch]).toEqual([5, "L2", "b2"]);
    const differing: Partial<ClickEvent>[] = [
      { ua: UA.iphone }, { ip: "203.0.113.2" }, { country: "FR" }, { referrer: "https://r.example/" }, { variant: 1 }, { rule: 0 }, { qr: true },
    ];
    for (const over of differing) {
      const before = toStoredClick({ ...base, ip: "203.0.113.1" }, "b1", l);
      const other = toStoredClick({ ...base, ip: "203.0.113.1", ...over }, "b1", l);
      expect(other.dims).not.toBe(before.dims);
      expect(other.dims).toEqual(toStoredClick({ ...base, ip: "203.0.113.1", ...over }, "b1", lookups()).dims);
    }
  });

  test("a click with nothing known: every nullable dimension null, via link", () => {
    expect(convert({ ua: "" }).dims).toEqual({
      country: null, region: null, city: null, device: "other", browser: "Other", os: "Other", referrer: null, variant: null, rule: null, via: "link",
    });
  });

  test("the country comes from the trusted header when it names one, else from the address", () => {
    expect(convert({ country: "fr", ip: "203.0.113.2" }).dims.country).toBe("FR");
    expect(convert({ country: "XX", ip: "203.0.113.1" }).dims).toMatchObject({ country: "DE", region: "DE-BY", city: "Munich" });
    // A header naming another country than the database's: its region and city would contradict it.
    expect(convert({ country: "FR", ip: "203.0.113.1" }).dims).toMatchObject({ country: "FR", region: null, city: null });
    expect(toStoredClick({ ...base, ip: "203.0.113.1" }, "b1", batchLookups(null)).dims.country).toBeNull();
  });

  test("bots are flagged, and keep their dimensions", () => {
    const s = convert({ ua: UA.facebook, referrer: "https://facebook.com/" });
    expect([s.bot, s.dims.referrer]).toEqual([true, "facebook.com"]);
    expect(convert({ ua: "curl/8.5.0" }).bot).toBe(true);
  });

  test("events queued before rules and QR codes were recorded have neither", () => {
    const { rule: _r, qr: _q, ...old } = base;
    const s = toStoredClick(old as ClickEvent, "b1", lookups());
    expect([s.dims.rule, s.dims.via]).toEqual([null, "link"]);
  });

  const hostile: [string, string, string | null][] = [
    ["a script address", "javascript:alert(document.cookie)", null],
    ["not an address at all", "not a url", null],
    ["an empty host", "file:///etc/passwd", null],
    ["credentials and a port", "https://user:secret@Evil.Example:8443/x", "evil.example"],
    ["an internationalised host (punycode)", "https://BÜCHER.example/", "xn--bcher-kva.example"],
    ["tabs and newlines inside the host (dropped by the URL parser)", "https://ex\tample.\ncom/", "example.com"],
    ["a formula for spreadsheets", "=HYPERLINK(\"https://x\")", null],
    ["an IPv6 literal", "http://[2001:DB8::1]:80/", "[2001:db8::1]"],
  ];
  test.each(hostile)("a hostile referrer: %s", (_name, referrer, host) => {
    const s = convert({ referrer });
    expect(s.dims.referrer).toBe(host);
    expect(s.referrerUrl).toBe(referrer);
  });

  test("the whole Referer is kept up to 1,024 characters; the host up to 200, without control characters", () => {
    const long = `https://example.com/${"a".repeat(5_000)}`;
    expect(convert({ referrer: long }).referrerUrl).toBe(long.slice(0, 1_024));
    const longHost = `https://${"a".repeat(60)}.${"b".repeat(60)}.${"c".repeat(60)}.${"d".repeat(60)}.example/`;
    expect(convert({ referrer: longHost }).dims.referrer).toHaveLength(200);
    expect(convert({ referrer: "" })).toMatchObject({ referrerUrl: null, dims: { referrer: null } });
  });

  test("a place with control characters is stored without them", () => {
    const s = toStoredClick({ ...base, ip: "198.51.100.1" }, "b1", batchLookups(() => ({ country: "DE", region: "DE-\u0001BY", city: "Mün\nchen\u0000" })));
    expect(s.dims).toMatchObject({ region: "DE-BY", city: "München" });
  });
});

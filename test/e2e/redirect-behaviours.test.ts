/**
 * The short address of design §4 over real HTTP: status and schedule, country and device rules (trusted header,
 * GeoIP on the client address, X-Forwarded-For only from trusted proxies), weighted A/B with byVariant stats, HEAD,
 * Cache-Control, UTM on every kind of destination, the OG preview card for crawlers, and their combinations.
 * Password and maxHits have their own files.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openCountryLookup } from "../../shared/facts/geo.ts";
import { api, createKey, startServer, type ApiClient, type ApiResponse, type TestServer } from "../helpers/server.ts";

const UA = {
  iphone: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
  android: "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36",
  ipad: "Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
  desktop: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
  facebook: "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
  twitter: "Twitterbot/1.0",
  slack: "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
};

/** Public addresses whose countries the shipped database knows; the test picks two that differ. */
const CANDIDATE_IPS = ["8.8.8.8", "81.169.145.1", "133.11.0.1", "193.0.6.139", "1.1.1.1", "5.9.0.1"];

let server: TestServer;
let owner: ApiClient;
let visitor: ApiClient;
/** Two public addresses in two different countries, according to the shipped database. */
let ipA: { ip: string; country: string };
let ipB: { ip: string; country: string };

beforeAll(async () => {
  // The socket peer of every test request is 127.0.0.1, so X-Forwarded-For stands in for real visitors.
  server = await startServer({ env: { TRUSTED_PROXIES: "127.0.0.1", COUNTRY_HEADER: "CF-IPCountry", RATE_LIMIT_PER_MINUTE: "100000" } });
  owner = api(server, await createKey(server, "owner@example.com"));
  visitor = api(server);
  const lookup = await openCountryLookup();
  const known = CANDIDATE_IPS.map((ip) => ({ ip, country: lookup(ip) })).filter((x): x is { ip: string; country: string } => x.country !== null);
  ipA = known[0];
  ipB = known.find((x) => x.country !== ipA.country)!;
  expect(ipA && ipB).toBeTruthy();
});
afterAll(() => server?.stop());

let slugSeq = 0;
/** Creates a link and returns its slug; fails the test on anything but 201. */
async function createLink(body: Record<string, unknown>): Promise<string> {
  const res = await owner.post("/api/v1/links", { slug: `rb-${++slugSeq}-${Date.now().toString(36)}`, ...body });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.slug;
}

function visit(slug: string, headers: Record<string, string> = {}, method = "GET"): Promise<ApiResponse> {
  return visitor.raw(`/${slug}`, { method, headers: { "user-agent": UA.desktop, ...headers } });
}

/** Waits until the click consumer has written at least `n` clicks, then a little longer to catch extras. */
async function settledStats(slug: string, n: number) {
  for (let i = 0; i < 200; i++) {
    const s = await owner.get(`/api/v1/links/${slug}/stats`);
    if (s.body.totalClicks >= n) break;
    await Bun.sleep(25);
  }
  await Bun.sleep(250);
  return (await owner.get(`/api/v1/links/${slug}/stats`)).body;
}

function expectHtmlPage(res: ApiResponse, status: number) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("text/html");
  expect(res.headers.get("location")).toBeNull();
  expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
}

function expectRedirect(res: ApiResponse, location: string) {
  expect(res.status).toBe(302);
  expect(res.headers.get("location")).toBe(location);
  expect(res.headers.get("cache-control")).toBe("private, max-age=0");
}

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe("status and schedule", () => {
  test("paused → 404 page, archived → 410 page, active again → 302 (changes reach the redirector at once)", async () => {
    const slug = await createLink({ url: "https://example.com/status" });
    expectRedirect(await visit(slug), "https://example.com/status");
    await owner.patch(`/api/v1/links/${slug}`, { status: "paused" });
    expectHtmlPage(await visit(slug), 404);
    await owner.patch(`/api/v1/links/${slug}`, { status: "archived" });
    expectHtmlPage(await visit(slug), 410);
    await owner.patch(`/api/v1/links/${slug}`, { status: "active" });
    expectRedirect(await visit(slug), "https://example.com/status");
  });

  test("one trailing slash reaches the link and is counted; two, or a further segment, are 404", async () => {
    const slug = await createLink({ url: "https://example.com/slash", utmSource: "mail" });
    expectRedirect(await visit(`${slug}/`), "https://example.com/slash?utm_source=mail");
    expectRedirect(await visit(`${slug}/?ref=x`), "https://example.com/slash?utm_source=mail");
    expectHtmlPage(await visit(`${slug}//`), 404);
    expectHtmlPage(await visit(`${slug}/more`), 404);
    expectHtmlPage(await visit(`${slug}/more/`), 404);
    expect((await settledStats(slug, 2)).totalClicks).toBe(2);
  });

  test("expiresAt passed → 410; still ahead → 302", async () => {
    const gone = await createLink({ url: "https://example.com/e", expiresAt: iso(Date.now() - 1000) });
    const res = await visit(gone);
    expectHtmlPage(res, 410);
    expect(res.body).toContain("expired");
    expectRedirect(await visit(await createLink({ url: "https://example.com/e", expiresAt: iso(Date.now() + HOUR) })), "https://example.com/e");
  });

  test("expiry is checked on every request, not when the link was cached", async () => {
    const slug = await createLink({ url: "https://example.com/soon", expiresAt: iso(Date.now() + 700) });
    expectRedirect(await visit(slug), "https://example.com/soon");
    await Bun.sleep(800);
    expectHtmlPage(await visit(slug), 410);
  });

  test("before startsAt → 425 naming the start; after it → 302", async () => {
    const startsAt = Date.now() + HOUR;
    const res = await visit(await createLink({ url: "https://example.com/s", startsAt: iso(startsAt) }));
    expectHtmlPage(res, 425);
    expect(res.body).toContain(new Date(startsAt).toISOString());
    expectRedirect(await visit(await createLink({ url: "https://example.com/s", startsAt: iso(Date.now() - HOUR) })), "https://example.com/s");
  });

  test("error pages are never cached; HEAD gets the same status", async () => {
    const archived = await createLink({ url: "https://example.com/a", status: "archived" });
    const early = await createLink({ url: "https://example.com/a", startsAt: iso(Date.now() + HOUR) });
    for (const [slug, status] of [[archived, 410], [early, 425], ["no-such-link", 404]] as const) {
      const get = await visit(slug);
      expect(get.status).toBe(status);
      expect(get.headers.get("cache-control")).toBe("no-store");
      const head = await visit(slug, {}, "HEAD");
      expect(head.status).toBe(status);
      expect(head.headers.get("location")).toBeNull();
    }
  });

  test("archived beats too early, paused beats expired, a window in the past is expired", async () => {
    const past = iso(Date.now() - HOUR);
    const future = iso(Date.now() + HOUR);
    expect((await visit(await createLink({ url: "https://example.com/x", status: "archived", expiresAt: iso(Date.now() + 2 * HOUR), startsAt: future }))).status).toBe(410);
    expect((await visit(await createLink({ url: "https://example.com/x", status: "paused", expiresAt: past }))).status).toBe(404);
    // startsAt must precede expiresAt, so "expired and not yet started" can only be reached through a window in the past.
    expect((await visit(await createLink({ url: "https://example.com/x", startsAt: iso(Date.now() - 2 * HOUR), expiresAt: past }))).status).toBe(410);
  });
});

describe("country and device rules", () => {
  const rules = (a: string, b: string) => [
    { kind: "country", match: a.toLowerCase(), url: "https://a.example.com/" },
    { kind: "country", match: b, url: "https://b.example.com/" },
  ];

  test("country from the trusted header (case-insensitive); no header and no address → target", async () => {
    const slug = await createLink({ url: "https://example.com/t", rules: rules("DE", "FR") });
    expectRedirect(await visit(slug, { "cf-ipcountry": "de" }), "https://a.example.com/");
    expectRedirect(await visit(slug, { "cf-ipcountry": "FR" }), "https://b.example.com/");
    expectRedirect(await visit(slug, { "cf-ipcountry": "US" }), "https://example.com/t");
    // XX (unknown) and T1 (Tor) name no country; 127.0.0.1 has none either.
    expectRedirect(await visit(slug, { "cf-ipcountry": "XX" }), "https://example.com/t");
    expectRedirect(await visit(slug, { "cf-ipcountry": "T1" }), "https://example.com/t");
  });

  test("country from the GeoIP database on X-Forwarded-For sent by a trusted proxy", async () => {
    const slug = await createLink({ url: "https://example.com/t", rules: rules(ipA.country, ipB.country) });
    expectRedirect(await visit(slug, { "x-forwarded-for": ipA.ip }), "https://a.example.com/");
    expectRedirect(await visit(slug, { "x-forwarded-for": ipB.ip }), "https://b.example.com/");
    // The nearest untrusted hop counts, never what the client wrote further left.
    expectRedirect(await visit(slug, { "x-forwarded-for": `${ipA.ip}, ${ipB.ip}` }), "https://b.example.com/");
    expectRedirect(await visit(slug, { "x-forwarded-for": `${ipB.ip}, ${ipA.ip}, 127.0.0.1` }), "https://a.example.com/");
    expectRedirect(await visit(slug, { "x-forwarded-for": "10.1.2.3" }), "https://example.com/t");
    expectRedirect(await visit(slug, { "x-forwarded-for": "not-an-ip" }), "https://example.com/t");
  });

  test("the trusted country header wins over the GeoIP address", async () => {
    const slug = await createLink({ url: "https://example.com/t", rules: rules(ipA.country, ipB.country) });
    expectRedirect(await visit(slug, { "x-forwarded-for": ipA.ip, "cf-ipcountry": ipB.country }), "https://b.example.com/");
    // An unusable header value falls back to the address.
    expectRedirect(await visit(slug, { "x-forwarded-for": ipA.ip, "cf-ipcountry": "XX" }), "https://a.example.com/");
  });

  test("stats count clicks by country (GeoIP done by the consumer, off the hot path) and by device", async () => {
    const slug = await createLink({ url: "https://example.com/geo-stats" });
    await visit(slug, { "x-forwarded-for": ipA.ip });
    await visit(slug, { "x-forwarded-for": ipA.ip, "user-agent": UA.iphone });
    await visit(slug, { "x-forwarded-for": ipB.ip });
    await visit(slug, { "cf-ipcountry": "nz" });
    const s = await settledStats(slug, 4);
    expect(s.totalClicks).toBe(4);
    const expected: Record<string, number> = {};
    for (const c of [ipA.country, ipA.country, ipB.country, "NZ"]) expected[c] = (expected[c] ?? 0) + 1;
    expect(s.byCountry).toEqual(expected);
    expect(s.byDevice).toEqual({ desktop: 3, mobile: 1 });
  });

  test("device rules from the User-Agent: ios, android, tablet, mobile, desktop", async () => {
    const slug = await createLink({
      url: "https://example.com/t",
      rules: [
        { kind: "device", match: "ios", url: "https://apps.apple.com/app" },
        { kind: "device", match: "android", url: "https://play.google.com/app" },
        { kind: "device", match: "tablet", url: "https://tablet.example.com/" },
        { kind: "device", match: "desktop", url: "https://desktop.example.com/" },
      ],
    });
    expectRedirect(await visit(slug, { "user-agent": UA.iphone }), "https://apps.apple.com/app");
    expectRedirect(await visit(slug, { "user-agent": UA.android }), "https://play.google.com/app");
    // iPadOS reports "iOS" too, so the ios rule (listed first) wins over tablet: first match wins.
    expectRedirect(await visit(slug, { "user-agent": UA.ipad }), "https://apps.apple.com/app");
    expectRedirect(await visit(slug, { "user-agent": UA.desktop }), "https://desktop.example.com/");
    expectRedirect(await visit(slug, { "user-agent": "" }), "https://example.com/t");
  });

  test("first matching rule wins across kinds", async () => {
    const slug = await createLink({
      url: "https://example.com/t",
      rules: [
        { kind: "device", match: "tablet", url: "https://tablet.example.com/" },
        { kind: "country", match: "DE", url: "https://de.example.com/" },
        { kind: "device", match: "mobile", url: "https://m.example.com/" },
      ],
    });
    expectRedirect(await visit(slug, { "user-agent": UA.ipad, "cf-ipcountry": "DE" }), "https://tablet.example.com/");
    expectRedirect(await visit(slug, { "user-agent": UA.iphone, "cf-ipcountry": "DE" }), "https://de.example.com/");
    expectRedirect(await visit(slug, { "user-agent": UA.iphone, "cf-ipcountry": "FR" }), "https://m.example.com/");
  });

  test("a rule-matched destination gets the UTM parameters; its own query is kept", async () => {
    const slug = await createLink({
      url: "https://example.com/t",
      utmSource: "nl",
      utmCampaign: "spring sale",
      rules: [{ kind: "country", match: "DE", url: "https://de.example.com/p?ref=x&utm_source=old" }],
    });
    expectRedirect(await visit(slug, { "cf-ipcountry": "DE" }), "https://de.example.com/p?ref=x&utm_source=nl&utm_campaign=spring+sale");
    expectRedirect(await visit(slug), "https://example.com/t?utm_source=nl&utm_campaign=spring+sale");
  });

  test("rules changed by PATCH apply to the next click", async () => {
    const slug = await createLink({ url: "https://example.com/t" });
    expectRedirect(await visit(slug, { "cf-ipcountry": "DE" }), "https://example.com/t");
    await owner.patch(`/api/v1/links/${slug}`, { rules: [{ kind: "country", match: "de", url: "https://de.example.com/" }] });
    expectRedirect(await visit(slug, { "cf-ipcountry": "DE" }), "https://de.example.com/");
    await owner.patch(`/api/v1/links/${slug}`, { rules: null });
    expectRedirect(await visit(slug, { "cf-ipcountry": "DE" }), "https://example.com/t");
  });
});

describe("X-Forwarded-For without TRUSTED_PROXIES", () => {
  let plain: TestServer;
  let plainOwner: ApiClient;
  beforeAll(async () => {
    plain = await startServer({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
    plainOwner = api(plain, await createKey(plain, "plain@example.com"));
  });
  afterAll(() => plain?.stop());

  test("is ignored: the socket address (127.0.0.1, no country) decides, and no country header is read", async () => {
    const res = await plainOwner.post("/api/v1/links", {
      url: "https://example.com/t",
      slug: "xff-ignored",
      rules: [
        { kind: "country", match: ipA.country, url: "https://a.example.com/" },
        { kind: "country", match: "DE", url: "https://de.example.com/" },
      ],
    });
    expect(res.status).toBe(201);
    const hit = (headers: Record<string, string>) => api(plain).raw("/xff-ignored", { headers: { "user-agent": UA.desktop, ...headers } });
    expectRedirect(await hit({ "x-forwarded-for": ipA.ip }), "https://example.com/t");
    expectRedirect(await hit({ "cf-ipcountry": "DE" }), "https://example.com/t");
    for (let i = 0; i < 200; i++) {
      if ((await plainOwner.get("/api/v1/links/xff-ignored/stats")).body.totalClicks >= 2) break;
      await Bun.sleep(25);
    }
    expect((await plainOwner.get("/api/v1/links/xff-ignored/stats")).body.byCountry).toEqual({ unknown: 2 });
  });
});

describe("weighted A/B rotation", () => {
  test("picks variants by weight, adds UTM, and stats byVariant match the redirects served", async () => {
    const slug = await createLink({
      url: "https://example.com/control",
      utmMedium: "ab",
      abUrls: [
        { url: "https://a.example.com/", weight: 3 },
        { url: "https://b.example.com/", weight: 1 },
      ],
    });
    const served = new Map<string, number>();
    const N = 200;
    for (let i = 0; i < N; i += 20) {
      const batch = await Promise.all(Array.from({ length: 20 }, () => visit(slug)));
      for (const r of batch) {
        expect(r.status).toBe(302);
        served.set(r.headers.get("location")!, (served.get(r.headers.get("location")!) ?? 0) + 1);
      }
    }
    const a = served.get("https://a.example.com/?utm_medium=ab") ?? 0;
    const b = served.get("https://b.example.com/?utm_medium=ab") ?? 0;
    expect(a + b).toBe(N); // the plain target is never served while A/B is set
    // Expected 150/50; ±30 is about five standard deviations.
    expect(a).toBeGreaterThan(120);
    expect(a).toBeLessThan(180);
    const s = await settledStats(slug, N);
    expect(s.totalClicks).toBe(N);
    expect(s.byVariant).toEqual(b === 0 ? { "0": a } : { "0": a, "1": b });
  });

  test("a matching rule beats A/B and records no variant; HEAD is not counted", async () => {
    const slug = await createLink({
      url: "https://example.com/control",
      rules: [{ kind: "country", match: "JP", url: "https://jp.example.com/" }],
      abUrls: [{ url: "https://only.example.com/", weight: 5 }],
    });
    expectRedirect(await visit(slug, { "cf-ipcountry": "JP" }), "https://jp.example.com/");
    expectRedirect(await visit(slug, { "cf-ipcountry": "JP" }), "https://jp.example.com/");
    expectRedirect(await visit(slug), "https://only.example.com/");
    expectRedirect(await visit(slug, {}, "HEAD"), "https://only.example.com/");
    const s = await settledStats(slug, 3);
    expect(s.totalClicks).toBe(3);
    expect(s.byVariant).toEqual({ "0": 1 });
    expect(s.byCountry).toEqual({ JP: 2, unknown: 1 });
  });

  test("a link without A/B has empty byVariant", async () => {
    const slug = await createLink({ url: "https://example.com/none" });
    await visit(slug);
    const s = await settledStats(slug, 1);
    expect(s.byVariant).toEqual({});
  });
});

describe("HEAD and Cache-Control", () => {
  test("HEAD answers the redirect with no body and is never counted", async () => {
    const slug = await createLink({ url: "https://example.com/h", utmSource: "x" });
    const head = await visit(slug, {}, "HEAD");
    expectRedirect(head, "https://example.com/h?utm_source=x");
    expect(head.body).toBeNull();
    await visit(slug, {}, "HEAD");
    await visit(slug);
    const s = await settledStats(slug, 1);
    expect(s.totalClicks).toBe(1);
    expect((await owner.get(`/api/v1/links/${slug}`)).body.hits).toBe(1);
  });

  test("HEAD consumes no maxHits: three HEADs, then the one allowed GET, then 410", async () => {
    const slug = await createLink({ url: "https://example.com/once", maxHits: 1 });
    for (let i = 0; i < 3; i++) expect((await visit(slug, {}, "HEAD")).status).toBe(302);
    expectRedirect(await visit(slug), "https://example.com/once");
    expectHtmlPage(await visit(slug), 410);
    expect((await visit(slug, {}, "HEAD")).status).toBe(410);
  });

  test("other methods → 405 with Allow", async () => {
    const slug = await createLink({ url: "https://example.com/m" });
    for (const method of ["PUT", "DELETE", "POST"]) {
      const res = await visit(slug, {}, method);
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toContain("GET");
      expect(res.headers.get("location")).toBeNull();
    }
  });
});

describe("OG preview card (serveOg)", () => {
  const hostile = {
    ogTitle: `<script>alert("t")</script> & "quoted" 'single'`,
    ogDescription: `"><img src=x onerror=alert(1)> </title><script>alert(2)</script>`,
    ogImageUrl: `https://img.example.com/card.png?a=1&b="x"`,
  };

  test("crawlers get 200 HTML with escaped og:/twitter: tags and a fallback link; humans get the redirect", async () => {
    const slug = await createLink({ url: "https://example.com/article?id=7", serveOg: true, utmSource: "social", ...hostile });
    for (const ua of [UA.facebook, UA.twitter, UA.slack]) {
      const res = await visit(slug, { "user-agent": ua });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("location")).toBeNull();
      expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
      // People get a counted redirect from the same address: no shared cache may serve them the card.
      expect(res.headers.get("cache-control")).toBe("private, max-age=0");
      expect(res.headers.get("vary")).toBe("User-Agent, Cookie");
      const html: string = res.body;
      // Nothing from the link comes out as markup.
      expect(html).not.toContain("<script");
      expect(html).not.toContain("<img");
      expect(html).toContain(`<meta property="og:title" content="&lt;script&gt;alert(&quot;t&quot;)&lt;/script&gt; &amp; &quot;quoted&quot; &#39;single&#39;">`);
      expect(html).toContain(`<meta name="twitter:title" content="&lt;script&gt;`);
      expect(html).toContain(`<meta property="og:description" content="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;`);
      expect(html).toContain(`<meta property="og:image" content="https://img.example.com/card.png?a=1&amp;b=&quot;x&quot;">`);
      expect(html).toContain(`<meta name="twitter:card" content="summary_large_image">`);
      expect(html).toContain(`<meta property="og:url" content="${server.url}/${slug}">`);
      expect(html).toContain(`<a href="https://example.com/article?id=7&amp;utm_source=social">`);
    }
    expectRedirect(await visit(slug, { "user-agent": UA.iphone }), "https://example.com/article?id=7&utm_source=social");
  });

  test("without an ogTitle the card still renders, escaped; without serveOg crawlers are redirected", async () => {
    const card = await createLink({ url: "https://example.com/<b>", serveOg: "on" });
    const res = await visit(card, { "user-agent": UA.twitter });
    expect(res.status).toBe(200);
    expect(res.body).toContain(`<meta name="twitter:card" content="summary">`);
    expect(res.body).not.toContain("<b>");
    const off = await createLink({ url: "https://example.com/plain", ogTitle: "Unused" });
    expectRedirect(await visit(off, { "user-agent": UA.twitter }), "https://example.com/plain");
  });

  test("preview fetches are not clicks: no count, no maxHits consumed", async () => {
    const slug = await createLink({ url: "https://example.com/p", serveOg: true, ogTitle: "Card", maxHits: 1 });
    for (let i = 0; i < 3; i++) expect((await visit(slug, { "user-agent": UA.facebook })).status).toBe(200);
    expect((await visit(slug, { "user-agent": UA.facebook }, "HEAD")).status).toBe(200);
    expectRedirect(await visit(slug, { "user-agent": UA.desktop }), "https://example.com/p");
    expect((await visit(slug, { "user-agent": UA.desktop })).status).toBe(410);
    // Once the limit is reached crawlers see it too.
    expect((await visit(slug, { "user-agent": UA.facebook })).status).toBe(410);
    const s = await settledStats(slug, 1);
    expect(s.totalClicks).toBe(1);
  });

  test("humans on an OG link still get rules and A/B", async () => {
    const slug = await createLink({
      url: "https://example.com/p",
      serveOg: true,
      ogTitle: "Card",
      rules: [{ kind: "device", match: "android", url: "https://play.example.com/" }],
      abUrls: [{ url: "https://ab.example.com/", weight: 1 }],
    });
    expectRedirect(await visit(slug, { "user-agent": UA.android }), "https://play.example.com/");
    expectRedirect(await visit(slug, { "user-agent": UA.desktop }), "https://ab.example.com/");
  });

  test("password + OG: a crawler sees the form and no destination anywhere in the response", async () => {
    const destinations = ["https://secret-target.example.com/hidden", "https://secret-rule.example.com/", "https://secret-ab.example.com/"];
    const slug = await createLink({
      url: destinations[0],
      password: "open sesame",
      serveOg: true,
      ogTitle: "Public card title",
      ogImageUrl: "https://img.example.com/x.png",
      rules: [{ kind: "device", match: "desktop", url: destinations[1] }],
      abUrls: [{ url: destinations[2], weight: 1 }],
    });
    for (const ua of [UA.facebook, UA.twitter, UA.slack]) {
      for (const method of ["GET", "HEAD"]) {
        const res = await visit(slug, { "user-agent": ua }, method);
        expect(res.status).toBe(401);
        expect(res.headers.get("location")).toBeNull();
        let everything = String(res.body ?? "");
        res.headers.forEach((value, name) => (everything += `\n${name}: ${value}`));
        for (const d of destinations) expect(everything).not.toContain(new URL(d).hostname);
        expect(everything).not.toContain("og:");
        expect(everything).not.toContain("open sesame");
      }
    }
  });
});

describe("combinations", () => {
  test("expired, archived, too early and limit all beat the password form", async () => {
    const pw = { password: "pw-combo-1" };
    expect((await visit(await createLink({ url: "https://example.com/c", ...pw, expiresAt: iso(Date.now() - 1) }))).status).toBe(410);
    expect((await visit(await createLink({ url: "https://example.com/c", ...pw, status: "archived" }))).status).toBe(410);
    expect((await visit(await createLink({ url: "https://example.com/c", ...pw, status: "paused" }))).status).toBe(404);
    expect((await visit(await createLink({ url: "https://example.com/c", ...pw, startsAt: iso(Date.now() + HOUR) }))).status).toBe(425);
    expect((await visit(await createLink({ url: "https://example.com/c", ...pw }))).status).toBe(401);
  });

  test("expired beats the OG card for crawlers; too early as well", async () => {
    const og = { serveOg: true, ogTitle: "Card" };
    expect((await visit(await createLink({ url: "https://example.com/c", ...og, expiresAt: iso(Date.now() - 1) }), { "user-agent": UA.facebook })).status).toBe(410);
    expect((await visit(await createLink({ url: "https://example.com/c", ...og, startsAt: iso(Date.now() + HOUR) }), { "user-agent": UA.facebook })).status).toBe(425);
  });

  test("rules + A/B + UTM + maxHits + schedule window on one link", async () => {
    const slug = await createLink({
      url: "https://example.com/all",
      utmSource: "s",
      maxHits: 3,
      startsAt: iso(Date.now() - HOUR),
      expiresAt: iso(Date.now() + HOUR),
      rules: [{ kind: "country", match: "DE", url: "https://de.example.com/" }],
      abUrls: [{ url: "https://ab.example.com/", weight: 2 }],
    });
    expectRedirect(await visit(slug, { "cf-ipcountry": "DE" }), "https://de.example.com/?utm_source=s");
    expectRedirect(await visit(slug, { "cf-ipcountry": "US" }), "https://ab.example.com/?utm_source=s");
    expectRedirect(await visit(slug, { "cf-ipcountry": "DE" }), "https://de.example.com/?utm_source=s");
    expectHtmlPage(await visit(slug, { "cf-ipcountry": "DE" }), 410);
    const s = await settledStats(slug, 3);
    expect(s.totalClicks).toBe(3);
    expect(s.byVariant).toEqual({ "0": 1 });
  });
});

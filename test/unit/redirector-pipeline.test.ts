/**
 * The short address of design §4 through the redirector's fetch handler, in process (redirector-harness.ts): every
 * status it answers, destinations (rules, A/B, UTM), HEAD, crawlers, and which answers record a click.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { linkKey } from "../../shared/link.ts";
import { BASE_URL, expectPage, expectRedirect, startRedirector, UA, type RedirectorHarness } from "./redirector-harness.ts";

const HOUR = 3_600_000;
let h: RedirectorHarness;
beforeAll(async () => {
  h = await startRedirector();
});
afterAll(() => h?.close());

/** Clicks recorded for `slug`'s link since the harness started. */
async function clicksOf(slug: string) {
  const id = (await h.cp.deps.store.getLink(h.cp.deps.config.defaultDomain, slug))!.id;
  return (await h.clicks()).filter((c) => c.linkId === id);
}

describe("statuses", () => {
  test("an unknown slug is 404, also when it is not a slug at all", async () => {
    expectPage(await h.visit("/nobody-has-this"), 404);
    expectPage(await h.visit("/not.a.slug"), 404);
    expectPage(await h.visit("/a/b"), 404);
  });

  test("a paused link is 404, as if it did not exist", async () => {
    const slug = await h.createLink({ url: "https://example.com/p", status: "paused" });
    expectPage(await h.visit(slug), 404);
  });

  test("an archived link is 410", async () => {
    const slug = await h.createLink({ url: "https://example.com/a", status: "archived" });
    const res = await h.visit(slug);
    expectPage(res, 410);
    expect(await res.text()).toContain("archived");
  });

  test("an expired link is 410 from its expiry on", async () => {
    const at = h.cp.clock.now() + HOUR;
    const slug = await h.createLink({ url: "https://example.com/e", expiresAt: new Date(at).toISOString() });
    expectRedirect(await h.visit(slug), "https://example.com/e");
    h.cp.clock.set(at);
    const res = await h.visit(slug);
    expectPage(res, 410);
    expect(await res.text()).toContain("expired");
  });

  test("a link before its start is 425 with the start time", async () => {
    const at = h.cp.clock.now() + HOUR;
    const slug = await h.createLink({ url: "https://example.com/s", startsAt: new Date(at).toISOString() });
    const res = await h.visit(slug);
    expectPage(res, 425);
    expect(await res.text()).toContain(new Date(at).toISOString());
    h.cp.clock.set(at);
    expectRedirect(await h.visit(slug), "https://example.com/s");
  });

  test("a link at its click limit is 410", async () => {
    const slug = await h.createLink({ url: "https://example.com/m", maxHits: 2 });
    expectRedirect(await h.visit(slug), "https://example.com/m");
    expectRedirect(await h.visit(slug), "https://example.com/m");
    const res = await h.visit(slug);
    expectPage(res, 410);
    expect(await res.text()).toContain("click limit");
  });

  test("methods other than GET and HEAD are 405, and so is POST on a link without a password", async () => {
    const slug = await h.createLink({ url: "https://example.com/405" });
    for (const method of ["POST", "PUT", "DELETE"]) {
      const res = await h.visit(slug, { method });
      expect([res.status, res.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
    }
    expect(await clicksOf(slug)).toEqual([]);
  });
});

describe("destinations", () => {
  test("the target, with one trailing slash allowed", async () => {
    const slug = await h.createLink({ url: "https://example.com/t?x=1" });
    expectRedirect(await h.visit(slug), "https://example.com/t?x=1");
    expectRedirect(await h.visit(`${slug}/`), "https://example.com/t?x=1");
    expectRedirect(await h.visit(`${slug}/?utm=q`), "https://example.com/t?x=1");
    expectPage(await h.visit(`${slug}//`), 404);
  });

  test("UTM fields are added to the destination", async () => {
    const slug = await h.createLink({ url: "https://example.com/u?a=1", utmSource: "news", utmCampaign: "spring sale" });
    expectRedirect(await h.visit(slug), "https://example.com/u?a=1&utm_source=news&utm_campaign=spring+sale");
  });

  test("the first matching rule wins, with UTM; no match is the target", async () => {
    const slug = await h.createLink({
      url: "https://example.com/desk",
      utmMedium: "qr",
      rules: [{ kind: "device", match: "ios", url: "https://apps.example.com/ios" }],
    });
    expectRedirect(await h.visit(slug, { headers: { "user-agent": UA.iphone } }), "https://apps.example.com/ios?utm_medium=qr");
    expectRedirect(await h.visit(slug), "https://example.com/desk?utm_medium=qr");
  });

  test("an A/B pick: the Location and the click's variant agree, and both variants are served", async () => {
    const urls = ["https://a.example.com/", "https://b.example.com/"];
    const slug = await h.createLink({ url: "https://example.com/ab", abUrls: [{ url: urls[0], weight: 1 }, { url: urls[1], weight: 1 }] });
    const served: string[] = [];
    for (let i = 0; i < 40; i++) served.push((await h.visit(slug)).headers.get("location")!);
    expect(new Set(served)).toEqual(new Set(urls));
    const variants = (await clicksOf(slug)).map((c) => c.variant);
    expect(variants.map((v) => urls[v!])).toEqual(served);
  });
});

describe("requests that are not clicks", () => {
  test("HEAD gets the redirect but is not counted", async () => {
    const slug = await h.createLink({ url: "https://example.com/head" });
    expectRedirect(await h.visit(slug, { method: "HEAD" }), "https://example.com/head");
    expect(await clicksOf(slug)).toEqual([]);
  });

  test("a crawler on a link with serveOg gets the escaped preview card; a person on it the counted redirect", async () => {
    const slug = await h.createLink({ url: "https://example.com/og", serveOg: true, ogTitle: "Spring <sale>", ogDescription: "Up to 50% off" });
    const card = await h.visit(slug, { headers: { "user-agent": UA.facebook } });
    expectPage(card, 200);
    expect(card.headers.get("cache-control")).toBe("private, max-age=0");
    const html = await card.text();
    expect(html).toContain(`<meta property="og:title" content="Spring &lt;sale&gt;">`);
    expect(html).toContain(`<meta property="og:url" content="${h.cp.deps.config.baseUrl}/${slug}">`);
    expect(await clicksOf(slug)).toEqual([]);
    expectRedirect(await h.visit(slug), "https://example.com/og");
    expect(await clicksOf(slug)).toHaveLength(1);
  });

  test("404, 410, 425 and 405 answers record no click", async () => {
    const gone = await h.createLink({ url: "https://example.com/g", status: "archived" });
    const early = await h.createLink({ url: "https://example.com/early", startsAt: new Date(h.cp.clock.now() + HOUR).toISOString() });
    const before = (await h.clicks()).length;
    await h.visit(gone);
    await h.visit(early);
    await h.visit("/no-such-link");
    await h.visit(early, { method: "PUT" });
    expect((await h.clicks()).length).toBe(before);
  });
});

describe("the click event of a counted redirect", () => {
  test("carries the link, time, User-Agent, Referer and no variant; the webhook gets the same click", async () => {
    const slug = await h.createLink({ url: "https://example.com/c", webhookUrl: "https://93.184.216.34/hook" });
    const now = h.cp.clock.now();
    expectRedirect(await h.visit(slug, { headers: { referer: "https://news.example.org/item" } }), "https://example.com/c");
    const [click, ...more] = await clicksOf(slug);
    expect(more).toEqual([]);
    expect(click).toMatchObject({ ts: now, ua: UA.desktop, referrer: "https://news.example.org/item", variant: null, rule: null, qr: false, country: null });
    const hooks = h.webhooks.filter((w) => w.url === "https://93.184.216.34/hook");
    expect(hooks).toHaveLength(1);
    expect(hooks[0]!.secret).toStartWith("whsec_");
    expect(hooks[0]!.payload).toEqual({
      event: "link.clicked", slug, domain: h.cp.deps.config.defaultDomain, shortUrl: `${BASE_URL}/${slug}`, target: "https://example.com/c", destination: "https://example.com/c", timestamp: new Date(now).toISOString(),
      country: null, device: "desktop", browser: "Chrome", referrer: "https://news.example.org/item",
    });
  });

  test("carries the visitor's address (for the drain's place lookup and visitor hash) even with no GeoIP database", async () => {
    const slug = await h.createLink({ url: "https://example.com/ip" });
    await h.visit(slug, { ip: "203.0.113.9" });
    await h.visit(slug, { ip: "2001:db8::7" });
    expect((await clicksOf(slug)).map((c) => c.ip)).toEqual(["203.0.113.9", "2001:db8::7"]);
  });

  test("the QR marker (?qr=1 or &qr=1) is recorded as a QR click and never reaches the destination", async () => {
    const slug = await h.createLink({ url: "https://example.com/poster?from=wall" });
    const paths = [`${slug}?qr=1`, `${slug}?utm=x&qr=1`, `${slug}/?qr=1&x=2`, slug, `${slug}?qr=10`, `${slug}?xqr=1`, `${slug}?qr=0`, `${slug}?a=qr=1`];
    for (const path of paths) expectRedirect(await h.visit(path), "https://example.com/poster?from=wall");
    expect((await clicksOf(slug)).map((c) => c.qr)).toEqual([true, true, true, false, false, false, false, false]);
  });

  test("records the index of the rule that matched, null when none did", async () => {
    const slug = await h.createLink({
      url: "https://example.com/desk",
      rules: [{ kind: "device", match: "android", url: "https://example.com/android" }, { kind: "device", match: "ios", url: "https://example.com/ios" }],
    });
    expectRedirect(await h.visit(slug, { headers: { "user-agent": UA.iphone } }), "https://example.com/ios");
    expectRedirect(await h.visit(slug), "https://example.com/desk");
    expect((await clicksOf(slug)).map((c) => [c.rule, c.variant])).toEqual([[1, null], [null, null]]);
  });

  test("a User-Agent longer than 512 characters is cut to 512 in the click", async () => {
    const slug = await h.createLink({ url: "https://example.com/long-ua" });
    await h.visit(slug, { headers: { "user-agent": `${UA.desktop} ${"x".repeat(600)}` } });
    const [click] = await clicksOf(slug);
    expect(click!.ua).toHaveLength(512);
  });
});

describe("link lookup", () => {
  test("a link not in HotState is read from the store", async () => {
    const slug = await h.createLink({ url: "https://example.com/from-store" });
    await h.cp.deps.hot.invalidateLink(linkKey(h.cp.deps.config.defaultDomain, slug));
    expect(await h.cp.deps.hot.getLink(linkKey(h.cp.deps.config.defaultDomain, slug))).toBeUndefined();
    expectRedirect(await h.visit(slug), "https://example.com/from-store");
  });

  test("a change made through the API reaches the redirector at once", async () => {
    const slug = await h.createLink({ url: "https://example.com/v1" });
    expectRedirect(await h.visit(slug), "https://example.com/v1");
    const res = await h.cp.request("PATCH", `/api/v1/links/${slug}`, { key: h.key, json: { targetUrl: "https://example.com/v2" } });
    expect(res.status).toBe(200);
    expectRedirect(await h.visit(slug), "https://example.com/v2");
  });
});

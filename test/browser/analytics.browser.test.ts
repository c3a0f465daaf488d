/**
 * The analytics pages in a real browser (Debian's chromium, playwright-core) against the embedded server, over
 * clicks made by real redirects (people's browsers from three countries, a referrer, a QR scan, a crawler) and a
 * month of older clicks written to the server's SQLite file: a link's page and the account overview at a
 * desktop's and a phone's width, a breakdown row that filters the page and the chip that removes it, the bots
 * switch, the figures behind the chart, a time zone, a reversed custom range whose summary takes the focus, and the CSV
 * download. axe-core finds no serious or critical violation on each page (desktop), no page scrolls sideways,
 * and every page is saved under .tmp/screenshots/analytics/ (the CI artifacts folder).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { DIMENSION_NAMES, type ClickDims } from "../../shared/clicks/dimensions.ts";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { api, createKey, REPO_ROOT, startServer, type TestServer } from "../helpers/server.ts";
import { axeProblems, releaseBrowser, saveScreenshot, sharedBrowser } from "../helpers/browser.ts";

const SCREENSHOTS = join(REPO_ROOT, ".tmp/screenshots/analytics");
const EMAIL = "analytics@example.com";
const PASSWORD = "a good long password";
const STEP_MS = 90_000;
const DAY = 86_400_000;
const UA = {
  chrome: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36",
  firefox: "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:131.0) Gecko/20100101 Firefox/131.0",
  iphone: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
  bot: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
};

const total = async (page: Page) => (await page.textContent("#total-clicks"))?.trim();

describe("analytics pages in chromium", () => {
  let server: TestServer;
  let browser: Browser;
  let desktop: Page;
  let phone: Page;
  /** Every page checked, as "size name: problem" lines (axe, sideways scrolling), and console errors. */
  const findings: string[] = [];

  async function check(page: Page, name: string, axe: boolean): Promise<void> {
    const size = page === phone ? "phone" : "desktop";
    if (axe) for (const p of await axeProblems(page)) findings.push(`${size} ${name}: ${p}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    if (overflow > 0) findings.push(`${size} ${name}: scrolls sideways by ${overflow}px`);
    await saveScreenshot(page, join(SCREENSHOTS, `${size}-${name}.png`));
  }

  async function signIn(page: Page): Promise<void> {
    await page.goto(`${server.url}/dashboard/signin`);
    await page.fill("#email", EMAIL);
    await page.fill("#password", PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL("**/dashboard/links");
  }

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    browser = await sharedBrowser();
    server = await startServer({ env: { COUNTRY_HEADER: "cf-ipcountry" } });
    desktop = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    phone = await (await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true })).newPage();
    for (const page of [desktop, phone]) {
      page.on("console", (m) => void (m.type() === "error" && !/status of 400/.test(m.text()) && findings.push(`console: ${m.text()}`)));
      page.on("pageerror", (e) => findings.push(`page error: ${e.message}`));
    }

    await desktop.goto(`${server.url}/dashboard/signup`);
    await desktop.fill("#email", EMAIL);
    await desktop.fill("#password", PASSWORD);
    await desktop.getByRole("button", { name: "Create account" }).click();
    await desktop.waitForURL("**/dashboard/links?flash=welcome");
    await signIn(phone);

    const key = await createKey(server, EMAIL, "seed");
    const links = [
      { url: "https://example.com/spring", slug: "spring", tags: ["launch"], folder: "Campaigns", abUrls: [{ url: "https://a.example.com/", weight: 1 }, { url: "https://b.example.com/", weight: 1 }] },
      { url: "https://example.com/docs", slug: "guide", tags: ["docs"], folder: "Product" },
    ];
    expect((await api(server, key).post("/api/v1/bulk", links)).body.created).toBe(2);

    // Today's clicks through real redirects: the redirector records country, device, browser, OS, referrer, variant, via and bots.
    const visits: [string, string, string, Record<string, string>][] = [
      ["spring", UA.iphone, "DE", { referer: "https://news.ycombinator.com/item?id=1" }], ["spring", UA.iphone, "DE", {}], ["spring?qr=1", UA.iphone, "FR", {}],
      ["spring", UA.chrome, "US", { referer: "https://www.linkedin.com/feed/" }], ["spring", UA.firefox, "DE", {}], ["spring", UA.bot, "US", {}],
      ["guide", UA.chrome, "US", {}], ["guide", UA.firefox, "GB", { referer: "https://github.com/acme/docs" }],
    ];
    for (const [path, ua, country, headers] of visits) {
      expect((await fetch(`${server.url}/${path}`, { redirect: "manual", headers: { "user-agent": ua, "cf-ipcountry": country, ...headers } })).status).toBe(302);
    }
    // A month of older clicks, written to the server's store as its click consumer would (a chart with a shape).
    const store = new SqliteStore(join(server.dataDir, "clink.sqlite"));
    const idOf = async (slug: string) => (await store.getLink(new URL(server.url).host, slug))!.id;
    const [spring, docs] = [await idOf("spring"), await idOf("guide")];
    const dims = (d: Partial<ClickDims>) => ({ ...(Object.fromEntries(DIMENSION_NAMES.map((n) => [n, null])) as ClickDims), via: "link", ...d });
    const older = Array.from({ length: 120 }, (_, i) => {
      const day = 1 + (i % 28);
      const mobile = i % 3 !== 0;
      return {
        batch: `history-${i}`, linkId: i % 4 === 0 ? docs : spring, ts: Date.now() - day * DAY - (i % 7) * 3_600_000, bot: i % 15 === 0, firstVisit: i % 5 !== 0, referrerUrl: null,
        dims: dims({ country: ["DE", "US", "FR", "GB", "NL"][i % 5]!, device: mobile ? "mobile" : "desktop", os: mobile ? "iOS" : "Windows", browser: mobile ? "Mobile Safari" : "Chrome", referrer: i % 2 ? "news.ycombinator.com" : null, variant: String(i % 2) }),
      };
    });
    await store.recordClicks(older);
    await store.close();
    // The click consumer writes today's clicks within a few hundred ms of the redirects.
    const today = async (slug: string) => (await api(server, key).get(`/api/v1/links/${slug}/stats`)).body.last24h.reduce((s: number, h: { clicks: number }) => s + h.clicks, 0);
    for (let i = 0; i < 40 && ((await today("spring")) < 6 || (await today("guide")) < 2); i++) await Bun.sleep(250);
  }, STEP_MS);

  afterAll(async () => {
    await releaseBrowser(browser);
    await server?.stop();
  });

  test("a link's page: 30 days at both sizes; a row filters the page, its chip removes the filter; the bots switch; the figures", async () => {
    await desktop.goto(`${server.url}/dashboard/links/spring/stats?range=30d`);
    const all = Number(await total(desktop));
    expect(all).toBeGreaterThan(6);
    expect(await desktop.locator("section.card.chart h3").count()).toBeGreaterThanOrEqual(DIMENSION_NAMES.length);
    await check(desktop, "link-30d", true);
    await phone.goto(`${server.url}/dashboard/links/spring/stats?range=30d`);
    await check(phone, "link-30d", false);

    await desktop.locator("#bd-country + table").getByRole("link", { name: "DE", exact: true }).click();
    await desktop.waitForURL("**/spring/stats?range=30d&country=DE");
    const de = Number(await total(desktop));
    expect(de).toBeGreaterThan(0);
    expect(de).toBeLessThan(all);
    expect(await desktop.textContent(".chips")).toContain("Country: DE");
    await check(desktop, "link-filtered", true);
    await desktop.getByRole("link", { name: "Remove the filter Country: DE" }).click();
    await desktop.waitForURL((url) => url.search === "?range=30d");
    expect(Number(await total(desktop))).toBe(all);

    await desktop.getByRole("link", { name: "Bots only" }).click();
    await desktop.waitForURL("**/spring/stats?range=30d&bots=only");
    expect(Number(await total(desktop))).toBeGreaterThanOrEqual(1);
    await desktop.getByRole("link", { name: "24 hours" }).click();
    await desktop.waitForURL("**/spring/stats?bots=only");
    expect(await total(desktop)).toBe("1"); // today's crawler

    await desktop.goto(`${server.url}/dashboard/links/spring/stats`);
    expect(await total(desktop)).toBe("5");
    await desktop.getByText("Show the figures").click();
    expect(await desktop.locator(".figures-table tbody tr").count()).toBe(24);
    await check(desktop, "link-24h-figures", true);
  }, STEP_MS);

  test("the overview at both sizes: top links lead to a link's page with the same range", async () => {
    await desktop.getByRole("link", { name: "Analytics" }).click();
    await desktop.waitForURL("**/dashboard/analytics");
    await desktop.getByRole("link", { name: "30 days" }).click();
    await desktop.waitForURL("**/dashboard/analytics?range=30d");
    expect(await desktop.textContent("#top-link + table")).toContain("guide");
    await check(desktop, "overview-30d", true);
    await phone.goto(`${server.url}/dashboard/analytics?range=30d`);
    await check(phone, "overview-30d", false);
    await desktop.selectOption("#range-tz", "Europe/Berlin");
    await desktop.getByRole("button", { name: "Use this zone" }).click();
    await desktop.waitForURL("**/dashboard/analytics?range=30d&tz=Europe%2FBerlin");
    expect(await desktop.textContent("#series-heading")).toContain("Europe/Berlin");
    await desktop.locator("#top-tag + table").getByRole("link", { name: "docs", exact: true }).click();
    await desktop.waitForURL("**/dashboard/analytics?range=30d&tz=Europe%2FBerlin&tag=docs");
    await desktop.locator("#top-link + table").getByRole("link", { name: "guide", exact: true }).click();
    await desktop.waitForURL("**/dashboard/links/guide/stats?range=30d&tz=Europe%2FBerlin");
  }, STEP_MS);

  test("a reversed custom range: the summary takes the focus and names the field; the CSV downloads the range shown", async () => {
    await desktop.goto(`${server.url}/dashboard/links/spring/stats`);
    await desktop.fill("#range-from", "2030-02-01");
    await desktop.fill("#range-to", "2030-01-01");
    await desktop.getByRole("button", { name: "Show these days" }).click();
    await desktop.waitForSelector("[data-error-summary]");
    expect(await desktop.evaluate(() => document.activeElement?.matches("[data-error-summary]"))).toBe(true);
    expect(await desktop.getAttribute("#range-to", "aria-invalid")).toBe("true");
    expect(await desktop.textContent("[data-error-summary]")).toContain("The last day must be on or after the first day.");
    await check(desktop, "link-bad-range", true);

    await desktop.goto(`${server.url}/dashboard/links/spring/stats?range=7d`);
    const href = await desktop.getAttribute("a:has-text('Download CSV')", "href");
    const csv = await desktop.evaluate(async (url) => {
      const res = await fetch(url!);
      return { type: res.headers.get("content-type"), text: await res.text() };
    }, href);
    expect(csv.type).toBe("text/csv; charset=utf-8");
    expect(csv.text.split("\r\n")[0]).toContain("Slug,Country");
    expect(csv.text).toContain("news.ycombinator.com");
  }, STEP_MS);

  test("no serious or critical axe violation, sideways scrolling or console error on any page", () => {
    expect(findings).toEqual([]);
  });
});

/**
 * The dashboard in a real browser (Debian's chromium driven by playwright-core) against the embedded server:
 * sign up → create a key (shown once, copy button) → the key works on the REST API → create a link with the
 * form (JS adds a rule row) → visit it → the stats page shows the click → revoke the key → the API answers 401.
 * Then the same pages at a phone's width. Screenshots of every page go to .tmp/screenshots/journey/ (the CI artifacts folder).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { api, REPO_ROOT, startServer, type TestServer } from "../helpers/server.ts";
import { releaseBrowser, saveScreenshot, sharedBrowser } from "../helpers/browser.ts";

/** Where the test links point: a tiny server of the test's own, so no outside network is needed. */
function startDestination() {
  return Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("<h1>landed</h1>", { headers: { "content-type": "text/html" } }) });
}
/** A regular desktop Chrome: "HeadlessChrome" would count as a bot, and bots' visits are not clicks. */
const DESKTOP_UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36";
const FIREFOX_UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:131.0) Gecko/20100101 Firefox/131.0";
const PHONE_UA = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
const XSS = "<img src=x onerror=alert(1)>";
const ARTIFACTS = join(REPO_ROOT, ".tmp/screenshots/journey");
const EMAIL = "browser@example.com";
const PASSWORD = "a good long password";
const STEP_MS = 60_000;

/** Page problems a test should never see: script dialogs (XSS), CSP violations and other console errors. */
function watch(page: Page, problems: string[]): void {
  page.on("dialog", (d) => {
    if (d.type() === "confirm") return void d.accept(); // our own data-confirm prompts
    problems.push(`unexpected ${d.type()} dialog: ${d.message()}`);
    void d.dismiss();
  });
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console error: ${m.text()} (${m.location().url})`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
}

async function shot(page: Page, name: string): Promise<void> {
  await saveScreenshot(page, join(ARTIFACTS, `${name}.png`));
}

describe("dashboard in chromium", () => {
  let server: TestServer;
  let browser: Browser;
  let desktop: BrowserContext;
  let page: Page;
  let key = "";
  let destination: ReturnType<typeof startDestination>;
  const problems: string[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await sharedBrowser();
    server = await startServer({ env: { COUNTRY_HEADER: "cf-ipcountry" } });
    destination = startDestination();
    desktop = await browser.newContext({ viewport: { width: 1280, height: 900 }, userAgent: DESKTOP_UA });
    await desktop.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    page = await desktop.newPage();
    watch(page, problems);
  }, STEP_MS);

  afterAll(async () => {
    await releaseBrowser(browser);
    await server?.stop();
    await destination?.stop(true);
  });

  test("sign up", async () => {
    await page.goto(`${server.url}/dashboard`);
    expect(page.url()).toContain("/dashboard/signin");
    await shot(page, "01-signin");
    await page.getByRole("link", { name: "Create one" }).click();
    await page.fill("#email", EMAIL);
    await page.fill("#password", PASSWORD);
    await shot(page, "02-signup");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL("**/dashboard/links?flash=welcome");
    expect(await page.textContent("main")).toContain("No links yet");
    await shot(page, "03-links-empty");
  }, STEP_MS);

  test("create an API key: shown once with a working copy button, and it authenticates the REST API", async () => {
    await page.getByRole("link", { name: "API keys" }).click();
    await page.fill("#key-name", "browser key");
    await page.getByRole("button", { name: "Create key" }).click();
    expect(await page.textContent(".once")).toContain("Copy it now: you will not see it again.");
    key = await page.inputValue("#new-key");
    expect(key).toMatch(/^ck_[A-Za-z0-9]{38}$/);
    await page.locator(".once button[data-copy]").click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    await shot(page, "04-key-created");

    const res = await api(server, key).get("/api/v1/links");
    expect(res.status).toBe(200);

    await page.goto(`${server.url}/dashboard/keys`);
    expect(await page.content()).not.toContain(key);
  }, STEP_MS);

  test("create a link with the form, rows added by script, hostile text shown as text", async () => {
    await page.getByRole("link", { name: "New link" }).first().click();
    await page.fill("#f-url", `${destination.url}landing?ref=${XSS}`);
    await page.fill("#f-slug", "browser-link");
    await page.fill("#f-tags", `launch, ${XSS}`);
    await page.fill("#f-folder", XSS);
    await page.fill("#f-ogTitle", XSS);
    const ruleRows = page.locator('[data-rows="rules"] .row');
    expect(await ruleRows.count()).toBe(2);
    await page.locator('[data-add-row="rules"]').click();
    expect(await ruleRows.count()).toBe(3);
    await ruleRows.nth(2).locator("select").selectOption("device");
    await ruleRows.nth(2).locator('input[name="rule_match"]').fill("tablet");
    await ruleRows.nth(2).locator('input[name="rule_url"]').fill("https://example.com/tablet");
    const abRows = page.locator('[data-rows="ab"] .row');
    await abRows.nth(0).locator('input[name="ab_url"]').fill(`${destination.url}a`);
    await abRows.nth(0).locator('input[name="ab_weight"]').fill("3");
    await abRows.nth(1).locator('input[name="ab_url"]').fill(`${destination.url}b`);
    await abRows.nth(1).locator('input[name="ab_weight"]').fill("1");
    await shot(page, "05-new-link-form");
    await page.getByRole("button", { name: "Create link" }).click();
    await page.waitForURL("**/dashboard/links/browser-link/stats?flash=created");
    expect(await page.textContent("main")).toContain(XSS); // visible as text …
    expect(await page.locator("main img").count()).toBe(0); // … never as an element
    expect(await page.locator(".qr svg").count()).toBe(1);

    const link = (await api(server, key).get("/api/v1/links/browser-link")).body;
    expect(link.rules).toEqual([{ kind: "device", match: "tablet", url: "https://example.com/tablet" }]);
    expect(link.abUrls).toEqual([{ url: `${destination.url}a`, weight: 3 }, { url: `${destination.url}b`, weight: 1 }]);
    expect(link.tags).toEqual(["launch", XSS]);

    await page.goto(`${server.url}/dashboard/links`);
    expect(await page.locator("main img").count()).toBe(0);
    expect(await page.textContent("table")).toContain(XSS);
    await shot(page, "06-links");
  }, STEP_MS);

  test("visit the short link, then the stats page shows the click", async () => {
    const visitor = await desktop.newPage();
    await visitor.goto(`${server.url}/browser-link`);
    expect(visitor.url()).toMatch(new RegExp(`^${destination.url}(a|b)$`)); // an A/B destination
    expect(await visitor.textContent("h1")).toBe("landed");
    await visitor.close();

    // The click consumer writes stats within a few hundred ms of the redirect.
    let total = "0";
    for (let i = 0; i < 40 && total !== "1"; i++) {
      await page.goto(`${server.url}/dashboard/links/browser-link/stats`);
      total = (await page.textContent("#total-clicks"))?.trim() ?? "";
      if (total !== "1") await Bun.sleep(250);
    }
    expect(total).toBe("1");
    expect(await page.textContent("#total-visitors")).toBe("1"); // the page shows the last 24 hours by default
    let charts = (await page.textContent(".charts")) ?? "";
    expect(charts).toContain("Desktop");
    expect(charts).toContain("Chrome");
    expect(charts).toContain("A/B variant");
    expect(await page.locator(".series rect.bar").count()).toBe(1); // one hour with clicks

    // More visitors (phones, other browsers, countries by the trusted header) fill every chart.
    const visits: [string, string][] = [[PHONE_UA, "DE"], [PHONE_UA, "DE"], [FIREFOX_UA, "FR"], [DESKTOP_UA, "US"], [FIREFOX_UA, "DE"]];
    await Promise.all(visits.map(([ua, country]) => fetch(`${server.url}/browser-link`, { redirect: "manual", headers: { "user-agent": ua, "cf-ipcountry": country } })));
    for (let i = 0; i < 40 && total !== "6"; i++) {
      await Bun.sleep(250);
      await page.reload();
      total = (await page.textContent("#total-clicks"))?.trim() ?? "";
    }
    expect(total).toBe("6");
    charts = (await page.textContent(".charts")) ?? "";
    for (const word of ["Mobile", "Firefox", "Safari", "DE", "FR", "US"]) expect(charts).toContain(word);
    await shot(page, "07-stats");

    await page.getByRole("link", { name: "Edit" }).click();
    expect(await page.inputValue('[data-rows="rules"] .row >> nth=0 >> input[name="rule_match"]')).toBe("tablet");
    await shot(page, "08-edit");
  }, STEP_MS);

  test("revoke the key: the API answers 401", async () => {
    await page.goto(`${server.url}/dashboard/keys`);
    await page.getByRole("button", { name: "Revoke" }).click(); // confirm() accepted by watch()
    await page.waitForURL("**/dashboard/keys?flash=revoked");
    expect(await page.textContent("table")).toContain("revoked");
    await shot(page, "09-key-revoked");
    const res = await api(server, key).get("/api/v1/links");
    expect(res.status).toBe(401);
  }, STEP_MS);

  test("pages fit a phone's width; delete after confirmation", async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, userAgent: PHONE_UA });
    const p = await phone.newPage();
    watch(p, problems);
    await p.goto(`${server.url}/dashboard/signin`);
    await p.fill("#email", EMAIL);
    await p.fill("#password", PASSWORD);
    await p.getByRole("button", { name: "Sign in" }).click();
    await p.waitForURL("**/dashboard/links");
    const pages: [string, string][] = [
      ["/dashboard/links", "phone-links"], ["/dashboard/links/browser-link/stats", "phone-stats"],
      ["/dashboard/links/new", "phone-new-link"], ["/dashboard/keys", "phone-keys"], ["/dashboard/links/browser-link/delete", "phone-delete"],
    ];
    for (const [path, name] of pages) {
      await p.goto(`${server.url}${path}`);
      const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow, `${path} scrolls sideways by ${overflow}px`).toBeLessThanOrEqual(0);
      await shot(p, name);
    }
    // The last page is the delete confirmation: confirm it, and the short address is gone.
    await p.getByRole("button", { name: "Delete permanently" }).click();
    await p.waitForURL("**/dashboard/links?flash=deleted");
    expect(await p.textContent(".flash")).toContain("Link deleted.");
    expect((await fetch(`${server.url}/browser-link`, { redirect: "manual" })).status).toBe(404);
    await phone.close();
  }, STEP_MS);

  test("no script dialog, CSP violation or console error on any page", () => {
    expect(problems).toEqual([]);
  });
});

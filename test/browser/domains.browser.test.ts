/**
 * The dashboard's Domains page in a real browser (Debian's chromium, playwright-core) against the embedded server:
 * reached from the API keys page, a domain added (what to publish shown), a check run (its failure shown, as this
 * machine's DNS has no record for it), the new-link form, and the delete with its choice of what happens to links.
 * At a desktop's and a phone's width every page passes axe-core with no serious or critical violation, fits the width,
 * and is saved as a screenshot in .tmp/screenshots/domains/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { releaseBrowser, sharedBrowser } from "../helpers/browser.ts";
import { checkPage, openPage, signInPage, SIZES, type Size } from "../helpers/browser-pages.ts";
import { REPO_ROOT, startServer, type TestServer } from "../helpers/server.ts";

const SCREENSHOTS = join(REPO_ROOT, ".tmp/screenshots/domains");
const EMAIL = "domains.browser@example.com";
const PASSWORD = "a good long password";
const STEP_MS = 90_000;

describe("the Domains page in chromium", () => {
  let server: TestServer;
  let browser: Browser;
  const pages = {} as Record<Size, Page>;
  const findings: string[] = [];

  const check = (size: Size, name: string) => checkPage(pages[size], `${size}-${name}`, SCREENSHOTS, findings);

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    browser = await sharedBrowser();
    server = await startServer();
    for (const size of Object.keys(SIZES) as Size[]) pages[size] = await openPage(browser, size, findings);
  }, STEP_MS);

  afterAll(async () => {
    await releaseBrowser(browser);
    await server?.stop();
  });

  test("add a domain from the keys page's link, see what to publish, run the check, delete it", async () => {
    await signInPage(pages.desktop, server.url, EMAIL, PASSWORD, true);
    const page = pages.desktop;
    await page.goto(`${server.url}/dashboard/keys`);
    await page.getByRole("link", { name: "Domains" }).first().click();
    await page.waitForURL("**/dashboard/domains");
    expect(await page.textContent("main")).toContain("No custom domains yet.");
    await check("desktop", "empty");
    await page.fill("#domain-hostname", "go.clink-browser-test.invalid");
    await page.getByRole("button", { name: "Add domain" }).click();
    await page.waitForURL("**/dashboard/domains");
    const row = page.locator("tbody tr").first();
    expect(await row.textContent()).toContain("_clink-challenge.go.clink-browser-test.invalid");
    await check("desktop", "pending");
    await row.getByRole("button", { name: "Verify now" }).click();
    await page.waitForURL("**/dashboard/domains");
    expect(await page.locator("tbody tr").first().textContent()).toContain("failed");
    await check("desktop", "checked");
    await page.goto(`${server.url}/dashboard/links/new`);
    expect(await page.locator("#f-domain").count()).toBe(0); // only verified domains are offered
  }, STEP_MS);

  test("the same page on a phone, then the delete", async () => {
    await signInPage(pages.phone, server.url, EMAIL, PASSWORD, false);
    await pages.phone.goto(`${server.url}/dashboard/domains`);
    await check("phone", "list");
    const page = pages.desktop;
    await page.goto(`${server.url}/dashboard/domains`);
    await page.locator("tbody tr").first().getByRole("button", { name: "Delete" }).click();
    await page.waitForURL("**/dashboard/domains");
    expect(await page.textContent("main")).toContain("No custom domains yet.");
  }, STEP_MS);

  test("no serious or critical axe violation, sideways scrolling, dialog or console error on any page", () => {
    expect(findings).toEqual([]);
  });
});

/**
 * "All N links matching these filters" on the links list in a real browser (Debian's chromium, playwright-core)
 * against the embedded server: with more links than a page shows, the bulk form offers every match with its count;
 * choosing it and pressing Pause asks first, naming the count; confirming pauses every match, page after page, and
 * the list says so. The list and the confirmation pass axe-core (no serious or critical violation) at a desktop's
 * and a phone's width and fit it; screenshots in .tmp/screenshots/links-bulk/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { releaseBrowser, sharedBrowser } from "../helpers/browser.ts";
import { checkPage, openPage, signInPage, SIZES, type Size } from "../helpers/browser-pages.ts";
import { api, createKey, REPO_ROOT, startServer, type TestServer } from "../helpers/server.ts";

const SCREENSHOTS = join(REPO_ROOT, ".tmp/screenshots/links-bulk");
const EMAIL = "bulk.browser@example.com";
const PASSWORD = "a good long password";
const STEP_MS = 90_000;

describe("selecting every matching link in chromium", () => {
  let server: TestServer;
  let browser: Browser;
  let key = "";
  const pages = {} as Record<Size, Page>;
  const findings: string[] = [];

  const check = (size: Size, name: string) => checkPage(pages[size], `${size}-${name}`, SCREENSHOTS, findings);

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    browser = await sharedBrowser();
    server = await startServer();
    for (const size of Object.keys(SIZES) as Size[]) {
      pages[size] = await openPage(browser, size, findings);
      await signInPage(pages[size], server.url, EMAIL, PASSWORD, size === "desktop");
    }
    key = await createKey(server, EMAIL, "seed");
    const rows = Array.from({ length: 60 }, (_, i) => ({ url: `https://example.com/${i}`, slug: `wave-${i}`, folder: i < 55 ? "Spring" : "Other" }));
    expect((await api(server, key).post("/api/v1/bulk", rows)).body.created).toBe(60);
  }, STEP_MS);

  afterAll(async () => {
    await releaseBrowser(browser);
    await server?.stop();
  });

  test("the list offers all 55 matches; Pause asks with the count; confirming pauses every one", async () => {
    const page = pages.desktop;
    await page.goto(`${server.url}/dashboard/links?folder=Spring`);
    const all = page.getByLabel("All 55 links matching these filters, not only the ticked ones");
    await all.check();
    await check("desktop", "list-all-chosen");
    await page.getByRole("button", { name: "Pause", exact: true }).click();
    await page.waitForSelector("h1:has-text('Pause 55 links?')");
    await check("desktop", "confirm");
    expect(await page.textContent("main")).toContain("Folder: Spring");
    await page.getByRole("button", { name: "Pause 55 links" }).click();
    await page.waitForURL("**/dashboard/links?folder=Spring&bulk=paused&n=55&failed=0");
    expect(await page.textContent(".flash")).toBe("55 links paused.");
    const paused = (await api(server, key).get("/api/v1/links?folder=Spring&status=paused&limit=500")).body.links.length;
    const other = (await api(server, key).get("/api/v1/links?folder=Other&status=active&limit=500")).body.links.length;
    expect([paused, other]).toEqual([55, 5]);
  }, STEP_MS);

  test("the same on a phone", async () => {
    const page = pages.phone;
    await page.goto(`${server.url}/dashboard/links?folder=Spring`);
    await check("phone", "list");
    await page.getByLabel("All 55 links matching these filters, not only the ticked ones").check();
    await page.getByRole("button", { name: "Archive", exact: true }).click();
    await page.waitForSelector("h1:has-text('Archive 55 links?')");
    await check("phone", "confirm");
  }, STEP_MS);

  test("no serious or critical axe violation, sideways scrolling, dialog or console error", () => {
    expect(findings).toEqual([]);
  });
});

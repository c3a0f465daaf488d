/**
 * The dashboard's front door in a real browser (Debian's chromium, playwright-core) against the embedded server:
 * every page at a desktop's 1280x800 and a phone's 390x844 passes axe-core with no serious or critical
 * violation, fits the width, and is saved as a screenshot in .tmp/screenshots/ (the CI artifacts folder); the
 * phone header keeps its section links on one row even with a long email; a failed form moves the focus to its
 * error summary, whose links focus each field; a reload after creating a key creates and shows nothing; the tag
 * input suggests the account's tags after those already typed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { api, createKey, REPO_ROOT, startServer, type TestServer } from "../helpers/server.ts";
import { axeProblems, releaseBrowser, saveScreenshot, sharedBrowser } from "../helpers/browser.ts";

const SCREENSHOTS = join(REPO_ROOT, ".tmp/screenshots");
/** A long address, which the phone header must shorten rather than let it push the links aside. */
const EMAIL = "someone.with.a.rather.long.address@example-company.com";
const PASSWORD = "a good long password";
const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;
type Size = keyof typeof SIZES;
const STEP_MS = 90_000;

/**
 * Page problems a test should never see: script dialogs, CSP violations and other console errors. The pages
 * this test asks for with a 4xx on purpose (a refused form, an unknown path) are not problems; a file of the
 * page failing to load is.
 */
function watch(page: Page, problems: string[]): void {
  page.on("dialog", (d) => {
    if (d.type() === "confirm") return void d.accept();
    problems.push(`unexpected ${d.type()} dialog: ${d.message()}`);
    void d.dismiss();
  });
  page.on("console", (m) => {
    if (m.type() !== "error") return;
    if (/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text()) && m.location().url === page.url()) return;
    problems.push(`console error: ${m.text()} (${m.location().url})`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
}

describe("the dashboard's front door in chromium", () => {
  let server: TestServer;
  let browser: Browser;
  const contexts = {} as Record<Size, BrowserContext>;
  const pages = {} as Record<Size, Page>;
  const problems: string[] = [];
  /** Every page visited, as "size name: problem" lines: axe, overflow. */
  const findings: string[] = [];

  /** Checks the page as it stands at this size, and saves its screenshot as `<size>-<name>.png`. */
  async function check(size: Size, name: string): Promise<void> {
    const page = pages[size];
    for (const p of await axeProblems(page)) findings.push(`${size} ${name}: ${p}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    if (overflow > 0) findings.push(`${size} ${name}: scrolls sideways by ${overflow}px`);
    await saveScreenshot(page, join(SCREENSHOTS, `${size}-${name}.png`));
  }

  /** Opens `path` at this size without checking it: for a page checked already, as it stands, by another test. */
  async function open(size: Size, path: string): Promise<Page> {
    await pages[size].goto(`${server.url}${path}`);
    return pages[size];
  }

  async function visit(size: Size, path: string, name: string): Promise<Page> {
    await open(size, path);
    await check(size, name);
    return pages[size];
  }

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    browser = await sharedBrowser();
    server = await startServer();
    for (const size of Object.keys(SIZES) as Size[]) {
      const phone = size === "phone";
      contexts[size] = await browser.newContext({ viewport: SIZES[size], deviceScaleFactor: phone ? 2 : 1, isMobile: phone, hasTouch: phone });
      pages[size] = await contexts[size].newPage();
      watch(pages[size], problems);
    }
  }, STEP_MS);

  afterAll(async () => {
    await releaseBrowser(browser);
    await server?.stop();
  });

  test("signed out: sign-in, sign-up and a failed sign-up, at both sizes; the summary takes the focus", async () => {
    for (const size of Object.keys(SIZES) as Size[]) {
      await visit(size, "/dashboard/signin", "signin");
      const page = await visit(size, "/dashboard/signup", "signup");
      await page.fill("#email", "not an email");
      await page.fill("#password", "short");
      // The browser's own checks would stop this post; the server's messages are what is tested here.
      await page.evaluate(() => document.querySelector("form.card")?.setAttribute("novalidate", ""));
      await page.getByRole("button", { name: "Create account" }).click();
      await page.waitForSelector("[data-error-summary]");
      expect(await page.evaluate(() => document.activeElement?.matches("[data-error-summary]"))).toBe(true);
      expect(await page.getAttribute("#email", "aria-invalid")).toBe("true");
      await check(size, "signup-errors");
    }
  }, STEP_MS);

  test("signed in: every page at both sizes; on a phone the header's links stay on one row", async () => {
    // The account signs up in the desktop browser; its links come through the API with a key the CLI makes for it.
    const desktop = pages.desktop;
    await desktop.goto(`${server.url}/dashboard/signup`);
    await desktop.fill("#email", EMAIL);
    await desktop.fill("#password", PASSWORD);
    await desktop.getByRole("button", { name: "Create account" }).click();
    await desktop.waitForURL("**/dashboard/links?flash=welcome");
    await check("desktop", "links-empty");
    await pages.phone.goto(`${server.url}/dashboard/signin`);
    await pages.phone.fill("#email", EMAIL);
    await pages.phone.fill("#password", PASSWORD);
    await pages.phone.getByRole("button", { name: "Sign in" }).click();
    await pages.phone.waitForURL("**/dashboard/links");
    await check("phone", "links-empty");
    const key = await createKey(server, EMAIL, "seed");
    const seed = [
      { url: "https://example.com/launch", slug: "launch-page", tags: ["Launch", "Q1"], folder: "Marketing" },
      { url: "https://example.com/docs", slug: "guide", tags: ["docs"], folder: "Product", maxHits: 10 },
      { url: "https://example.com/old", slug: "old-offer", tags: ["launch"], folder: "marketing", status: "paused" },
    ];
    expect((await api(server, key).post("/api/v1/bulk", seed)).body.created).toBe(3);
    for (const size of Object.keys(SIZES) as Size[]) {
      const page = await visit(size, "/dashboard/links", "links");
      await visit(size, "/dashboard/links?tag=LAUNCH&folder=marketing", "links-filtered");
      expect(await page.locator("tbody tr").count()).toBe(2);
      await visit(size, "/dashboard/links?status=bogus", "links-bad-filter");
      await visit(size, "/dashboard/links/new", "new-link");
      await visit(size, "/dashboard/links/launch-page/edit", "edit-link");
      await visit(size, "/dashboard/links/launch-page/stats", "stats");
      await visit(size, "/dashboard/links/launch-page/delete", "delete");
      await visit(size, "/dashboard/keys", "keys");
      await visit(size, "/dashboard/audit", "audit");
      await visit(size, "/dashboard/audit?action=links.bulk_created&from=bogus", "audit-bad-filter");
      await visit(size, "/dashboard/nowhere", "not-found");
    }
    // The header with addresses of every length: short ones used to leave the links a 40-130 px column.
    const phone = pages.phone;
    await phone.goto(`${server.url}/dashboard/links`);
    for (const email of ["a@b.io", "me@example.com", "jane.doe@company.com", EMAIL]) {
      const header = await phone.evaluate((shown) => {
        document.querySelector("header .who .email")!.textContent = shown;
        const nav = document.querySelector("header nav")!.getBoundingClientRect();
        const rows = new Set(Array.from(document.querySelectorAll("header nav a"), (a) => Math.round(a.getBoundingClientRect().top)));
        return { rows: rows.size, navAtLeast300: nav.width >= 300, heightAtMost100: document.querySelector("header")!.getBoundingClientRect().height <= 100 };
      }, email);
      expect([email, header]).toEqual([email, { rows: 1, navAtLeast300: true, heightAtMost100: true }]);
    }
  }, STEP_MS * 2);

  test("a failed link form: the summary has the focus, its links focus the fields, messages in plain words", async () => {
    for (const size of Object.keys(SIZES) as Size[]) {
      const page = await open(size, "/dashboard/links/new"); // checked by the signed-in test
      await page.fill("#f-url", "https://example.com/");
      await page.fill("#f-maxHits", "0");
      await page.fill("#f-folder", "f".repeat(80));
      await page.locator('[data-rows="ab"] .row').first().locator('input[name="ab_url"]').fill("https://a.example.com/");
      await page.locator('[data-rows="ab"] .row').first().locator('input[name="ab_weight"]').fill("-1");
      await page.getByRole("button", { name: "Create link" }).click();
      await page.waitForSelector("[data-error-summary]");
      expect(await page.evaluate(() => document.activeElement?.matches("[data-error-summary]"))).toBe(true);
      const summary = (await page.textContent("[data-error-summary]")) ?? "";
      // The same words as the API's and MCP's (shared/messages.ts), after the field's label.
      expect(summary).toContain("Click limit: must be at least 1");
      expect(summary).toContain("Variant 1 weight: must be greater than 0");
      expect(summary).not.toContain("Expected");
      await check(size, "new-link-errors");
      await page.getByRole("link", { name: "Variant 1 weight: must be greater than 0" }).click();
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("ab_weight-0");
      expect(await page.getAttribute("#ab_weight-0", "aria-describedby")).toBe("ab_weight-0-error");
    }
  }, STEP_MS);

  test("creating a key shows it once; a reload creates no second key and shows none", async () => {
    for (const size of Object.keys(SIZES) as Size[]) {
      const page = await open(size, "/dashboard/keys"); // checked by the signed-in test
      const before = await page.locator("tbody tr").count();
      await page.fill("#key-name", `${size} key`);
      await page.getByRole("button", { name: "Create key" }).click();
      await page.waitForSelector("#new-key");
      expect(page.url()).toBe(`${server.url}/dashboard/keys`);
      const key = await page.inputValue("#new-key");
      expect(key).toMatch(/^ck_[A-Za-z0-9]{38}$/);
      await check(size, "key-created");
      await page.reload();
      expect([await page.locator("#new-key").count(), await page.locator("tbody tr").count()]).toEqual([0, before + 1]);
      expect(await page.content()).not.toContain(key);
      await page.fill("#key-name", " ");
      await page.getByRole("button", { name: "Create key" }).click();
      await page.waitForSelector("[data-error-summary]");
      await check(size, "key-errors");
    }
  }, STEP_MS);

  test("the tags input suggests the account's tags after those already typed; added rows get their own ids", async () => {
    const page = await open("desktop", "/dashboard/links/new");
    await page.locator("#f-tags").pressSequentially("launch, ");
    const offered = await page.evaluate(() => Array.from((document.getElementById("tag-suggestions") as HTMLDataListElement).options, (o) => o.value));
    expect(offered).toEqual(["launch, docs", "launch, Q1"]); // Launch and launch are typed already
    expect(await page.getAttribute("#f-folder", "list")).toBe("folder-suggestions");
    await page.locator('[data-add-row="rules"]').click();
    expect(await page.getAttribute('[data-rows="rules"] .row >> nth=2 >> input[name="rule_url"]', "id")).toBe("rule_url-2");
    expect(await page.getAttribute('[data-rows="rules"] .row >> nth=2 >> input[name="rule_url"]', "aria-label")).toBe("Rule 3 URL");
    await check("desktop", "new-link-row-added");
  }, STEP_MS);

  test("no serious or critical axe violation, sideways scrolling, dialog, CSP violation or console error on any page", () => {
    expect(findings).toEqual([]);
    expect(problems).toEqual([]);
  });
});

/**
 * Workspaces in a real browser (Debian's chromium, playwright-core) against the embedded server: the header's
 * switcher opened, a new workspace, an invitation made (its link shown once), taken on a phone by someone signing up
 * through it, the switcher and members page as that viewer, and the settings page's delete refused with the focus
 * on the error summary. At a desktop's and a phone's width (390 px) every page passes axe-core with no serious or
 * critical violation, fits the width, and is saved as a screenshot in .tmp/screenshots/workspaces/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { releaseBrowser, sharedBrowser } from "../helpers/browser.ts";
import { checkPage, openPage, signInPage, SIZES, type Size } from "../helpers/browser-pages.ts";
import { REPO_ROOT, startServer, type TestServer } from "../helpers/server.ts";

const SCREENSHOTS = join(REPO_ROOT, ".tmp/screenshots/workspaces");
const PASSWORD = "a good long password";
const STEP_MS = 90_000;

describe("workspaces in chromium", () => {
  let server: TestServer;
  let browser: Browser;
  const pages = {} as Record<Size, Page>;
  const findings: string[] = [];
  let invitation = "";

  const check = (size: Size, name: string) => checkPage(pages[size], `${size}-${name}`, SCREENSHOTS, findings);

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    server = await startServer();
    browser = await sharedBrowser();
    for (const size of Object.keys(SIZES) as Size[]) pages[size] = await openPage(browser, size, findings);
  }, STEP_MS);

  afterAll(async () => {
    await releaseBrowser(browser);
    await server?.stop();
  });

  test("the switcher, a new workspace, and an invitation whose link is shown once", async () => {
    const page = pages.desktop;
    await signInPage(page, server.url, "ws-owner.browser@example.com", PASSWORD, true);
    await page.locator("header details.ws summary").click();
    expect(await page.getByRole("button", { name: /Personal/ }).getAttribute("aria-current")).toBe("true");
    await check("desktop", "switcher-open");
    await page.getByRole("link", { name: "New workspace" }).click();
    await page.waitForURL("**/dashboard/workspaces/new");
    await page.fill("#ws-name", "Browser Team");
    await page.getByRole("button", { name: "Create workspace" }).click();
    await page.waitForURL("**/dashboard/members?flash=workspace-created");
    expect(await page.textContent("header .ws-name")).toBe("Browser Team");
    await page.selectOption("#inv-role", "viewer");
    await page.getByRole("button", { name: "Create invitation link" }).click();
    await page.waitForURL("**/dashboard/members");
    invitation = await page.inputValue("#new-invite");
    expect(invitation).toStartWith(`${server.url}/dashboard/invitations/`);
    await check("desktop", "members-invited");
  }, STEP_MS);

  test("on a phone: signed out, the link leads to sign-up and back; accepted, the viewer's switcher and members page", async () => {
    const page = pages.phone;
    await page.goto(invitation);
    expect(await page.textContent("main")).toContain("You are invited to join Browser Team as a viewer");
    await check("phone", "invitation-signed-out");
    await page.getByRole("link", { name: "Create an account" }).click();
    await page.fill("#email", "ws-viewer.browser@example.com");
    await page.fill("#password", PASSWORD);
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL(invitation);
    await check("phone", "invitation");
    await page.getByRole("button", { name: "Accept and join" }).click();
    await page.waitForURL("**/dashboard/links?flash=invitation-accepted");
    expect(await page.locator('a[href="/dashboard/links/new"]').count()).toBe(0);
    // The switcher shares the brand's row: the header keeps its two rows (front-door.browser.test.ts).
    expect(await page.evaluate(() => document.querySelector("header")!.getBoundingClientRect().height)).toBeLessThanOrEqual(100);
    await page.locator("header details.ws summary").click();
    expect(await page.getByRole("button", { name: /Browser Team/ }).getAttribute("aria-current")).toBe("true");
    expect(await page.textContent(".ws-menu .ws-who")).toBe("Signed in as ws-viewer.browser@example.com");
    await check("phone", "switcher-open");
    await page.getByRole("link", { name: "Members" }).click();
    await page.waitForURL("**/dashboard/members");
    expect(await page.textContent("main")).toContain("ws-owner.browser@example.com");
    await check("phone", "members-viewer");
  }, STEP_MS);

  test("settings: a delete with the wrong name comes back with the focus on the error summary", async () => {
    const page = pages.desktop;
    await page.goto(`${server.url}/dashboard/workspace`);
    await page.fill("#ws-confirm", "Browser");
    await page.getByRole("button", { name: "Delete workspace" }).click();
    await page.waitForURL("**/dashboard/workspace/delete");
    await page.waitForFunction(() => document.activeElement?.hasAttribute("data-error-summary"));
    expect(await page.getAttribute("#ws-confirm", "aria-invalid")).toBe("true");
    // The refused form is answered 400, which the browser logs: expected here, and only here.
    const logged = findings.indexOf("desktop: console error: Failed to load resource: the server responded with a status of 400 (Bad Request)");
    expect(logged).toBeGreaterThanOrEqual(0);
    findings.splice(logged, 1);
    await check("desktop", "settings-refused");
  }, STEP_MS);

  test("no serious or critical axe violation, sideways scrolling, dialog or console error on any page", () => {
    expect(findings).toEqual([]);
  });
});

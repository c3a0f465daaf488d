/**
 * The dashboard's Webhooks pages in a real browser (Debian's chromium, playwright-core) against the embedded server
 * and a receiver of the test's own: the list, creating an endpoint (its secret shown once), the endpoint's delivery
 * log while the receiver fails, and "send again" once it is back. Every page at a desktop's and a phone's width passes
 * axe-core with no serious or critical violation, fits the width, and is saved as a screenshot in
 * .tmp/screenshots/webhooks/ (the CI artifacts folder).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { releaseBrowser, sharedBrowser } from "../helpers/browser.ts";
import { checkPage, openPage, signInPage, SIZES, type Size } from "../helpers/browser-pages.ts";
import { startReceiver, until, type Receiver } from "../helpers/event-webhook-receiver.ts";
import { api, createKey, REPO_ROOT, startServer, type TestServer } from "../helpers/server.ts";

const SCREENSHOTS = join(REPO_ROOT, ".tmp/screenshots/webhooks");
const EMAIL = "hooks.browser@example.com";
const PASSWORD = "a good long password";
const STEP_MS = 90_000;
/** A failed delivery waits an hour for its own retry: only "send again" sends it within the test. */
const ENV = { WEBHOOK_ALLOW_PRIVATE: "true", EVENT_WEBHOOK_POLL_MS: "50", EVENT_WEBHOOK_RETRY_BASE_MS: "3600000" };

describe("the Webhooks pages in chromium", () => {
  let server: TestServer;
  let browser: Browser;
  let receiver: Receiver;
  const pages = {} as Record<Size, Page>;
  /** Every page visited, as "size name: problem" lines: axe, overflow, dialogs, console errors. */
  const findings: string[] = [];
  let endpointPath = "";

  const check = (size: Size, name: string) => checkPage(pages[size], `${size}-${name}`, SCREENSHOTS, findings);
  const signIn = (size: Size, signUp: boolean) => signInPage(pages[size], server.url, EMAIL, PASSWORD, signUp);

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    browser = await sharedBrowser();
    server = await startServer({ env: ENV });
    receiver = startReceiver();
    for (const size of Object.keys(SIZES) as Size[]) pages[size] = await openPage(browser, size, findings);
  }, STEP_MS);

  afterAll(async () => {
    await releaseBrowser(browser);
    receiver?.stop();
    await server?.stop();
  });

  test("the list, then an endpoint created from it: its secret shown once", async () => {
    await signIn("desktop", true);
    const page = pages.desktop;
    await page.goto(`${server.url}/dashboard/keys`);
    await page.getByRole("link", { name: "webhook endpoints" }).first().click();
    await page.waitForURL("**/dashboard/webhooks");
    expect(await page.textContent("main")).toContain("No webhook endpoints yet.");
    await check("desktop", "list-empty");
    receiver.mode = "fail";
    await page.fill("#hook-url", receiver.url);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await page.waitForSelector("#new-secret");
    expect(await page.inputValue("#new-secret")).toMatch(/^whsec_/);
    await check("desktop", "list-created");
    await page.reload();
    expect(await page.locator("#new-secret").count()).toBe(0);
    endpointPath = (await page.locator('a[href^="/dashboard/webhooks/we_"]').first().getAttribute("href"))!;
    await check("desktop", "list");
  }, STEP_MS);

  test("the delivery log shows a failed attempt; send again, once the receiver is back, delivers it", async () => {
    const key = await createKey(server, EMAIL, "hooks");
    expect((await api(server, key).post("/api/v1/links", { url: "https://example.com/hooked", slug: "hooked" })).status).toBe(201);
    await receiver.until((r) => r.some((x) => x.type === "link.created" && x.answered === 500));
    const page = pages.desktop;
    const row = page.locator("tbody tr").first();
    await until(async () => {
      await page.goto(`${server.url}${endpointPath}`);
      return ((await row.textContent()) ?? "").includes("answered HTTP 500");
    }, "the failed attempt in the log");
    expect(await row.textContent()).toContain("link.created");
    await check("desktop", "endpoint-failing");

    receiver.mode = "ok";
    await row.getByRole("button", { name: "Send again" }).click();
    await page.waitForURL(`**${endpointPath}`);
    await receiver.until((r) => r.some((x) => x.type === "link.created" && x.answered === 204));
    await until(async () => {
      await page.goto(`${server.url}${endpointPath}`);
      return ((await row.textContent()) ?? "").includes("delivered");
    }, "the delivery shown delivered");
    await check("desktop", "endpoint-sent-again");
  }, STEP_MS);

  test("the same pages on a phone", async () => {
    await signIn("phone", false);
    await pages.phone.goto(`${server.url}/dashboard/webhooks`);
    await check("phone", "list");
    await pages.phone.goto(`${server.url}${endpointPath}`);
    expect(await pages.phone.textContent("main")).toContain("delivered");
    await check("phone", "endpoint");
  }, STEP_MS);

  test("no serious or critical axe violation, sideways scrolling, dialog or console error on any page", () => {
    expect(findings).toEqual([]);
  });
});

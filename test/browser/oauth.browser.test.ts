/**
 * OAuth's browser step in a real browser (Debian's chromium, playwright-core) against the embedded server (#23): an
 * application registers, the browser opens /oauth/authorize, signs in, sees the consent page and allows; Chromium
 * then follows the redirect to the application's loopback callback (the consent page's CSP lets its form lead
 * there: browsers apply form-action to the redirect after a post). The consent and Connected applications pages
 * pass axe-core with no serious or critical violation and fit a phone's width, saved as screenshots at both sizes;
 * Disconnect ends the token.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { axeProblems, releaseBrowser, saveScreenshot, sharedBrowser } from "../helpers/browser.ts";
import { OAuthTestClient, pkcePair } from "../helpers/oauth-client.ts";
import { REPO_ROOT, startServer, type TestServer } from "../helpers/server.ts";

const SCREENSHOTS = join(REPO_ROOT, ".tmp/screenshots");
const EMAIL = "oauth-browser@example.com";
const PASSWORD = "a good long password";
const STEP_MS = 90_000;

let server: TestServer;
let browser: Browser;
let page: Page;
let callback: ReturnType<typeof Bun.serve>;
const calls: URL[] = [];
const problems: string[] = [];

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  browser = await sharedBrowser();
  server = await startServer();
  // The application's loopback listener, as mcp-remote or a desktop assistant runs one.
  callback = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => (calls.push(new URL(req.url)), new Response("You can close this window.")) });
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  page.on("dialog", (d) => void d.accept());
  page.on("console", (m) => m.type() === "error" && problems.push(`console error: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
}, STEP_MS);

afterAll(async () => {
  await releaseBrowser(browser);
  callback?.stop(true);
  await server?.stop();
});

/** axe-core finds nothing serious, the page fits a desktop's and a phone's width; screenshots of both. */
async function check(name: string): Promise<void> {
  for (const [size, viewport] of [["phone", { width: 390, height: 844 }], ["desktop", { width: 1280, height: 800 }]] as const) {
    await page.setViewportSize(viewport);
    expect(await axeProblems(page)).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    await saveScreenshot(page, join(SCREENSHOTS, `${size}-${name}.png`));
  }
}

test("sign in, consent and allow in Chromium: the browser lands on the application's loopback callback with a code that works", async () => {
  await page.goto(`${server.url}/dashboard/signup`);
  await page.fill("#email", EMAIL);
  await page.fill("#password", PASSWORD);
  await page.getByRole("button", { name: "Create account" }).click();
  await page.waitForURL("**/dashboard/links?flash=welcome");
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL("**/dashboard/signin**");

  const redirectUri = `http://127.0.0.1:${callback.port}/callback`;
  const oauth = new OAuthTestClient(server.url);
  const clientId = (await oauth.register({ client_name: "Browser assistant", redirect_uris: [redirectUri] })).body.client_id;
  const { verifier, challenge } = pkcePair();
  const params = new URLSearchParams({
    response_type: "code", client_id: clientId, redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: "S256",
    state: "browser-state", resource: `${server.url}/mcp`, scope: "links:read links:write",
  });
  await page.goto(`${server.url}/oauth/authorize?${params}`);
  await page.waitForURL("**/dashboard/signin**");
  await page.fill("#email", EMAIL);
  await page.fill("#password", PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL("**/dashboard/authorize**");
  expect(await page.textContent("h1")).toBe("Connect “Browser assistant”?");
  await check("oauth-consent");

  await page.getByRole("button", { name: "Allow" }).click();
  await page.waitForURL(`${redirectUri}**`);
  // The callback's own request (the browser may ask the same server for /favicon.ico right after it).
  const back = calls.findLast((u) => u.pathname === "/callback")!;
  expect(back.searchParams.get("state")).toBe("browser-state");
  const tokens = await oauth.form("/oauth/token", {
    grant_type: "authorization_code", code: back.searchParams.get("code")!, code_verifier: verifier, client_id: clientId, redirect_uri: redirectUri,
  });
  expect(tokens.status).toBe(200);
  const mcp = (token: string) => fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  expect((await mcp(tokens.body.access_token)).status).toBe(200);

  await page.goto(`${server.url}/dashboard/apps`);
  expect(await page.locator("tbody tr").count()).toBe(1);
  await check("oauth-apps");
  await page.getByRole("button", { name: "Disconnect" }).click();
  await page.waitForURL("**/dashboard/apps?flash=disconnected");
  expect(await page.locator("tbody tr").count()).toBe(0);
  await check("oauth-apps-empty");
  expect((await mcp(tokens.body.access_token)).status).toBe(401);
  expect(problems).toEqual([]);
}, STEP_MS);

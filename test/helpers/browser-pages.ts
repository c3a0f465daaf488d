/**
 * What the Webhooks and bulk browser tests share (test/browser/webhooks, links-bulk): the two widths, a page checked
 * as it stands (axe-core, sideways scrolling, a screenshot), the problems a page should never show, and signing in.
 */
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { axeProblems, saveScreenshot } from "./browser.ts";

export const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;
export type Size = keyof typeof SIZES;

/** A page in a fresh context at this size (a phone: touch, 2x pixels); its problems go to `findings` (watchPage). */
export async function openPage(browser: Browser, size: Size, findings: string[]): Promise<Page> {
  const phone = size === "phone";
  const context = await browser.newContext({ viewport: SIZES[size], deviceScaleFactor: phone ? 2 : 1, isMobile: phone, hasTouch: phone });
  const page = await context.newPage();
  watchPage(page, size, findings);
  return page;
}

/** Adds the page's axe-core serious and critical violations and any sideways scrolling to `findings`; saves `{dir}/{label}.png`. */
export async function checkPage(page: Page, label: string, dir: string, findings: string[]): Promise<void> {
  for (const p of await axeProblems(page)) findings.push(`${label}: ${p}`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  if (overflow > 0) findings.push(`${label}: scrolls sideways by ${overflow}px`);
  await saveScreenshot(page, join(dir, `${label}.png`));
}

/** Script dialogs (our own data-confirm prompts accepted), console errors and page errors go to `findings`. */
export function watchPage(page: Page, label: string, findings: string[]): void {
  page.on("dialog", (d) => {
    if (d.type() === "confirm") return void d.accept();
    findings.push(`${label}: unexpected ${d.type()} dialog: ${d.message()}`);
    void d.dismiss();
  });
  page.on("console", (m) => void (m.type() === "error" && findings.push(`${label}: console error: ${m.text()}`)));
  page.on("pageerror", (e) => findings.push(`${label}: page error: ${e.message}`));
}

/** Signs up (or in) through the dashboard's form and waits for the links list. */
export async function signInPage(page: Page, baseUrl: string, email: string, password: string, signUp: boolean): Promise<void> {
  await page.goto(`${baseUrl}/dashboard/${signUp ? "signup" : "signin"}`);
  await page.fill("#email", email);
  await page.fill("#password", password);
  await page.getByRole("button", { name: signUp ? "Create account" : "Sign in" }).click();
  await page.waitForURL("**/dashboard/links**");
}

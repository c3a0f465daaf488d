/**
 * What the browser tests share: how Chromium is launched (headless, no sandbox: CI runs as root), one Chromium per
 * test process, and axe-core's serious and critical violations on a page.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { chromium, type Browser, type Page } from "playwright-core";
import { chromiumExecutable } from "../setup/chromium.ts";

export const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic", "--no-first-run", "--disable-component-update", "--disable-sync"];

let launched: Promise<Browser> | undefined;

/**
 * The test process's Chromium, launched on first use (installed when missing: test/setup/chromium.ts). A launch
 * costs a second or two, and npm test's workers run many files each in one process (--no-isolate), so the files
 * share it: each opens its own contexts and ends with releaseBrowser(), which closes them. The browser ends with
 * the process (its DevTools pipe closes); a plain `bun test --isolate` launches one per file, kept until then.
 */
export function sharedBrowser(): Promise<Browser> {
  launched ??= chromium.launch({ executablePath: chromiumExecutable(), args: CHROMIUM_ARGS }).then((browser) => {
    browser.on("disconnected", () => (launched = undefined));
    return browser;
  });
  launched.catch(() => (launched = undefined)); // a failed launch is tried again by the next file
  return launched;
}

/**
 * Saves the whole page as it stands to `path` (PNG), at CSS pixels: a phone's page (2 device pixels per CSS pixel)
 * is saved 390 px wide, not 780. The full-size ones were a fifth of the browser files' CPU (96 → 77 CPU-s).
 */
export async function saveScreenshot(page: Page, path: string): Promise<void> {
  await page.screenshot({ path, fullPage: true, scale: "css" });
}

/** Closes the contexts a file opened in the shared browser (a process runs one file at a time). */
export async function releaseBrowser(browser: Browser | undefined): Promise<void> {
  await Promise.all(browser?.contexts().map((c) => c.close()) ?? []);
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * A phone-width page is the same document as the desktop one with other CSS (our stylesheets change layout, not
 * colours or markup), so there axe-core runs only the rules a narrow layout can break; every rule runs at desktop
 * width. The full set costs about a quarter of a CPU-second a page, and the browser tests check a hundred pages.
 */
const NARROW_PX = 600;
const NARROW_RULES = ["target-size", "scrollable-region-focusable", "meta-viewport", "meta-viewport-large", "region"];

interface AxeViolation { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }

/**
 * axe-core's serious and critical violations on the page as it stands, one line each. The script is evaluated
 * through the DevTools protocol, which the page's CSP (script-src 'self') does not govern, so the CSP stays on.
 */
export async function axeProblems(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE_SOURCE);
  const narrow = (page.viewportSize()?.width ?? Infinity) < NARROW_PX;
  const violations = await page.evaluate(async (rules) => {
    const axe = (window as unknown as { axe: { run(ctx: Document, o: object): Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run(document, { resultTypes: ["violations"], ...(rules ? { runOnly: { type: "rule", values: rules } } : {}) })).violations;
  }, narrow ? NARROW_RULES : null);
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

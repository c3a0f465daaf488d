/**
 * Real MCP clients for the end-to-end tests, run as a person runs them: mcp-remote (the stdio bridge Claude Desktop,
 * Cursor and others start for a remote server) and the MCP Inspector's CLI, both from node_modules, and the browser
 * step of an OAuth sign-in driven in Debian's Chromium with playwright-core.
 *
 *   const sandbox = clientSandbox();                       // a HOME of its own: tokens, and a browser opener
 *   const bridge = spawnStdio(mcpRemoteCommand(`${server.url}/mcp`), { env: sandbox.env });
 *   const url = await sandbox.nextAuthorizationUrl();      // what mcp-remote asked the browser to open
 *   await authorizeInBrowser(url, person);                 // sign in, allow; mcp-remote receives the code
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { ensureChromium } from "../setup/chromium.ts";
import { sharedBrowser } from "./browser.ts";
import { tail } from "./mcp-stdio.ts";
import { baseEnv, createAccountAndKey, freePort, makeTempDir, REPO_ROOT } from "./server.ts";

const BIN = join(REPO_ROOT, "node_modules/.bin");
const INSPECTOR_TIMEOUT_MS = 30_000;
/** A client run that includes a browser sign-in. */
const SIGN_IN_TIMEOUT_MS = 90_000;
const BROWSER_STEP_MS = 30_000;
const POLL_MS = 50;

export interface Person {
  email: string;
  /** For the dashboard's sign-in. */
  password: string;
  key: string;
}

/** A new account as `npm run create-key` makes it with the server's environment: its password and its `ck_` key. */
export async function newAccount(server: { env: Record<string, string> }, email: string): Promise<Person> {
  const { key, password } = await createAccountAndKey(server, email);
  if (password === null) throw new Error(`${email} has an account already`);
  return { email, password, key };
}

/** mcp-remote's command line for `url` with `args` after it, as a client's configuration would start it. */
export function mcpRemoteCommand(url: string, ...args: string[]): string[] {
  return [join(BIN, "mcp-remote"), url, ...args];
}

/** What mcp-remote keeps of a sign-in (`<server hash>_tokens.json`). */
export interface StoredTokens {
  access_token: string;
  refresh_token?: string;
  /** Milliseconds since the epoch. */
  expires_at?: number;
}

export interface ClientSandbox {
  /** The runner's environment (no clink configuration) with HOME, MCP_REMOTE_CONFIG_DIR and the opener set. */
  readonly env: Record<string, string>;
  /** The next address mcp-remote handed to the browser opener; rejects after `timeoutMs`. */
  nextAuthorizationUrl(timeoutMs?: number): Promise<string>;
  /** The tokens mcp-remote stored after a sign-in, or null. */
  storedTokens(): StoredTokens | null;
  /** Marks the stored access token expired, as if its hour had passed while the client was not running. */
  expireStoredTokens(): void;
  remove(): void;
}

/**
 * A home directory of its own, so runs share no tokens: mcp-remote keeps them under MCP_REMOTE_CONFIG_DIR (default
 * ~/.mcp-auth), the Inspector under ~/.mcp-inspector. mcp-remote opens the browser with the `open` package, whose
 * bundled xdg-open runs $BROWSER on a machine without a desktop, then tries xdg-open and x-www-browser from PATH:
 * all of them are a script that writes the address to a file for the test instead.
 */
export function clientSandbox(): ClientSandbox {
  const home = makeTempDir("mcp-client");
  const bin = join(home, "bin");
  const opened = join(home, "opened.txt");
  const configDir = join(home, ".mcp-auth");
  mkdirSync(bin);
  const opener = join(bin, "xdg-open");
  writeFileSync(opener, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`, { mode: 0o755 });
  writeFileSync(join(bin, "x-www-browser"), readFileSync(opener), { mode: 0o755 });
  let seen = 0;
  const tokensFile = () => {
    const dir = join(configDir, "mcp-remote-v1");
    const name = existsSync(dir) ? readdirSync(dir).find((f) => f.endsWith("_tokens.json")) : undefined;
    return name ? join(dir, name) : null;
  };
  const env = {
    ...baseEnv(),
    HOME: home,
    MCP_REMOTE_CONFIG_DIR: configDir,
    BROWSER: opener,
    PATH: `${bin}:${process.env.PATH}`,
    // The Inspector signs in without a terminal only when told to open the browser, and keeps its tokens in memory
    // (no keychain here).
    MCP_AUTO_OPEN_ENABLED: "true",
    MCP_INSPECTOR_SECRET_STORE: "memory",
  };
  delete (env as Record<string, string | undefined>).DISPLAY;
  return {
    env,
    async nextAuthorizationUrl(timeoutMs = BROWSER_STEP_MS) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const lines = existsSync(opened) ? readFileSync(opened, "utf8").split("\n").filter(Boolean) : [];
        if (lines.length > seen) return lines[seen++];
        await Bun.sleep(POLL_MS);
      }
      throw new Error(`no browser was opened within ${timeoutMs} ms`);
    },
    storedTokens() {
      const file = tokensFile();
      return file ? (JSON.parse(readFileSync(file, "utf8")) as StoredTokens) : null;
    },
    expireStoredTokens() {
      const file = tokensFile();
      if (!file) throw new Error("mcp-remote stored no tokens");
      writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), expires_at: Date.now() - 60_000 }));
    },
    remove: () => rmSync(home, { recursive: true, force: true }),
  };
}

export interface BrowserSignIn {
  /** The consent page's text, as the person read it. */
  consent: string;
  /** The text of the page the client's redirect URI answered (mcp-remote's own). */
  done: string;
}

/**
 * Opens `url` in a fresh context of the process's Chromium (installed when missing, test/setup/chromium.ts), where
 * the dashboard asks the person to sign in first, signs in on its form, and hands the page that follows to `work`.
 */
async function signedInPage<T>(url: string, person: Pick<Person, "email" | "password">, work: (page: Page) => Promise<T>): Promise<T> {
  const problem = await ensureChromium();
  if (problem) throw new Error(problem);
  const context = await (await sharedBrowser()).newContext();
  try {
    const page = await context.newPage();
    page.setDefaultTimeout(BROWSER_STEP_MS);
    page.on("dialog", (d) => void d.accept()); // the dashboard's "Disconnect …?" confirmation
    try {
      await page.goto(url);
      await page.getByLabel("Email").fill(person.email);
      await page.getByLabel("Password").fill(person.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      return await work(page);
    } catch (err) {
      // Where the browser was stuck, and what it showed, say more than a locator's timeout.
      const shown = await page.locator("body").innerText({ timeout: 1_000 }).catch(() => "(no page)");
      throw new Error(`${(err as Error).message}\n--- the browser at ${page.url()} ---\n${shown.slice(0, 2_000)}`);
    }
  } finally {
    await context.close();
  }
}

/**
 * The person's part of an OAuth sign-in: opens `authorizationUrl`, signs in, reads the consent page and presses
 * Allow; resolves once the browser has reached the client's redirect URI.
 */
export function authorizeInBrowser(authorizationUrl: string, person: Pick<Person, "email" | "password">): Promise<BrowserSignIn> {
  const redirectUri = new URL(new URL(authorizationUrl).searchParams.get("redirect_uri") ?? "");
  return signedInPage(authorizationUrl, person, async (page) => {
    await page.getByRole("heading", { name: /^Connect/ }).waitFor();
    const consent = await page.locator("main").innerText();
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL((u) => u.origin === redirectUri.origin && u.pathname === redirectUri.pathname);
    await page.waitForLoadState();
    return { consent, done: await page.locator("body").innerText() };
  });
}

/**
 * The account holder disconnects the application named `appName` on the dashboard's Connected applications page;
 * resolves to the page's text before (the row as shown) and after.
 */
export function disconnectInBrowser(baseUrl: string, person: Pick<Person, "email" | "password">, appName: string): Promise<{ before: string; after: string }> {
  return signedInPage(`${baseUrl}/dashboard/apps`, person, async (page) => {
    const row = page.getByRole("row").filter({ hasText: appName });
    const before = await row.innerText();
    await row.getByRole("button", { name: "Disconnect" }).click();
    await page.getByRole("status").waitFor();
    return { before, after: await page.locator("main").innerText() };
  });
}

/**
 * `mcp-inspector --cli <args> --format json`: the Inspector's CLI, one method per run; resolves to its JSON answer,
 * or rejects with its output when it exits with an error or runs longer than `timeoutMs`.
 */
export async function inspectorCli(args: string[], env: Record<string, string>, timeoutMs = INSPECTOR_TIMEOUT_MS): Promise<any> {
  const proc = Bun.spawn([join(BIN, "mcp-inspector"), "--cli", ...args, "--format", "json"], { cwd: REPO_ROOT, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  if (code !== 0) throw new Error(`the Inspector CLI exited with code ${code}\n--- stderr ---\n${tail(stderr)}\n--- stdout ---\n${tail(stdout)}`);
  return JSON.parse(stdout);
}

/**
 * The address the client opened in the browser, or the client's own failure if it ended first (a client that
 * fails before signing in says why on its stderr, which `running`'s rejection carries).
 */
export function authorizationUrlOf(sandbox: ClientSandbox, running: Promise<unknown>): Promise<string> {
  const endedFirst = running.then(() => {
    throw new Error("the client finished without asking to sign in");
  });
  return Promise.race([sandbox.nextAuthorizationUrl(), endedFirst]);
}

/**
 * The Inspector's CLI given only the address, as a client configured with just a URL: it meets the 401, discovers,
 * registers and opens the browser, where `person` signs in and allows; then it runs `args` (a method) with the token.
 */
export async function inspectorSignedIn(
  url: string,
  args: string[],
  sandbox: ClientSandbox,
  person: Pick<Person, "email" | "password">,
): Promise<{ answer: any; signIn: BrowserSignIn }> {
  const callback = `http://127.0.0.1:${await freePort()}/oauth/callback`;
  const answer = inspectorCli([url, "--transport", "http", "--callback-url", callback, ...args], sandbox.env, SIGN_IN_TIMEOUT_MS);
  answer.catch(() => {}); // awaited below; a failure before the browser step is reported by authorizationUrlOf
  const signIn = await authorizeInBrowser(await authorizationUrlOf(sandbox, answer), person);
  return { answer: await answer, signIn };
}

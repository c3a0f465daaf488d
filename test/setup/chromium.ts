/**
 * Chromium for the browser tests: Debian's `chromium` at /usr/bin/chromium (or CHROMIUM_PATH, used as is). When
 * the Debian one is missing, the test setup installs it with apt-get, once per run; when it cannot (not root and
 * no passwordless sudo, no network, no apt-get), it says why in one line and the browser tests fail with that line.
 */
import { existsSync } from "node:fs";
import { aptInstall, aptLogOf } from "./apt.ts";

export const DEBIAN_CHROMIUM = "/usr/bin/chromium";
/** Debian's chromium and the fonts its pages are drawn with. */
const PACKAGES = ["chromium", "fonts-liberation"];
/** Set by the setup when Chromium could not be provided; the browser tests fail with it. */
const PROBLEM_VAR = "CLINK_TEST_CHROMIUM_PROBLEM";

/** The executable the browser tests launch: CHROMIUM_PATH when set, Debian's otherwise. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.CHROMIUM_PATH || DEBIAN_CHROMIUM;
}

/** The start of the setup's reason when there is no Chromium at `path`. */
const missingAt = (path: string) => `Chromium for the browser tests is missing at ${path}`;

/**
 * For the browser tests: the executable to launch, or an error saying why there is none (the setup's reason when
 * it tried to install it).
 */
export function chromiumExecutable(env: NodeJS.ProcessEnv = process.env): string {
  const path = chromiumPath(env);
  if (env[PROBLEM_VAR]) throw new Error(env[PROBLEM_VAR]);
  if (!existsSync(path)) throw new Error(`${path} is missing (CHROMIUM_PATH, or apt-get install chromium)`);
  return path;
}

/**
 * Makes sure the browser tests have a Chromium: the one CHROMIUM_PATH names, or Debian's, installed when missing.
 * Returns null when there is one, or the one-line reason there is not (also left in the environment, where
 * chromiumExecutable() finds it).
 */
export async function ensureChromium(env: NodeJS.ProcessEnv = process.env): Promise<string | null> {
  const path = chromiumPath(env);
  if (existsSync(path)) return null;
  // The suite's runner tried before its workers started: each browser file is not to try apt-get again.
  if (env[PROBLEM_VAR]?.startsWith(missingAt(path))) return env[PROBLEM_VAR];
  const problem = env.CHROMIUM_PATH
    ? "CHROMIUM_PATH names a file that does not exist (unset it to use Debian's chromium, installed when missing)"
    : ((await aptInstall(PACKAGES, "the browser tests")) ?? (existsSync(path) ? null : `apt-get installed chromium, yet ${path} does not exist (log: ${aptLogOf(PACKAGES)})`));
  if (problem === null) {
    console.error(`test setup: installed ${path}`);
    return null;
  }
  return (env[PROBLEM_VAR] = `${missingAt(path)}: ${problem}`);
}

/**
 * Chromium for the browser tests: Debian's `chromium` at /usr/bin/chromium (or CHROMIUM_PATH, used as is). When
 * the Debian one is missing, the test setup installs it with apt-get, once per run; when it cannot (not root and
 * no passwordless sudo, no network, no apt-get), it says why in one line and the browser tests fail with that line.
 */
import { existsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const DEBIAN_CHROMIUM = "/usr/bin/chromium";
const PACKAGES = ["chromium", "fonts-liberation"];
/** Where apt-get's output goes, so a failure's one-line message can point at the whole story. */
const APT_LOG = join(tmpdir(), "clink-test-apt.log");
const APT_TIMEOUT_MS = 10 * 60_000;
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

/** How apt-get can be run here: directly as root, through passwordless sudo, or not at all (the reason). */
export function aptRunner(uid: number, hasAptGet: boolean, hasPasswordlessSudo: boolean): { prefix: string[] } | { problem: string } {
  if (!hasAptGet) return { problem: "apt-get not found (not a Debian-like system)" };
  if (uid === 0) return { prefix: [] };
  if (hasPasswordlessSudo) return { prefix: ["sudo", "-n"] };
  return { problem: "not root and no passwordless sudo" };
}

/** The one-line reason an apt-get run failed, from its output. */
export function aptFailure(output: string): string {
  if (/Temporary failure resolving|Could not resolve|Failed to fetch|Unable to connect|Network is unreachable|Connection timed out/i.test(output)) {
    return "no network: apt-get could not reach the package mirrors";
  }
  if (/Could not get lock|Unable to acquire the dpkg frontend lock/i.test(output)) return "another apt-get holds the package lock";
  if (/Unable to locate package|has no installation candidate/i.test(output)) return "apt-get knows no package `chromium` (Debian's main archive missing?)";
  const errorLine = output.split("\n").find((l) => l.startsWith("E: "));
  return errorLine ?? "apt-get failed";
}

function run(cmd: string[], env: Record<string, string>): { ok: boolean; output: string } {
  const r = Bun.spawnSync(cmd, { env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe", timeout: APT_TIMEOUT_MS });
  return { ok: r.success, output: r.stdout.toString() + r.stderr.toString() };
}

/**
 * Installs Debian's chromium (and the fonts its pages are drawn with) so that `target` exists. Returns null when it
 * does, or the one-line reason it could not.
 */
export function installDebianChromium(target = DEBIAN_CHROMIUM): string | null {
  const hasSudo = Bun.which("sudo") !== null && Bun.spawnSync(["sudo", "-n", "true"], { stdout: "ignore", stderr: "ignore" }).success;
  const runner = aptRunner(process.getuid?.() ?? 0, Bun.which("apt-get") !== null, hasSudo);
  if ("problem" in runner) return `cannot install it here: ${runner.problem} (as root: apt-get update && apt-get install -y ${PACKAGES.join(" ")})`;

  console.error(`test setup: installing Debian's ${PACKAGES.join(" and ")} with apt-get for the browser tests (once)...`);
  const aptEnv = { DEBIAN_FRONTEND: "noninteractive" };
  const lock = ["-o", "DPkg::Lock::Timeout=120"];
  const update = run([...runner.prefix, "apt-get", "update", "-qq", ...lock], aptEnv);
  const install = run([...runner.prefix, "apt-get", "install", "-y", "-qq", "--no-install-recommends", ...lock, ...PACKAGES], aptEnv);
  writeFileSync(APT_LOG, `$ apt-get update\n${update.output}\n$ apt-get install\n${install.output}`);
  if (!install.ok) return `apt-get could not install it: ${aptFailure(update.output + install.output)} (log: ${APT_LOG})`;
  if (!existsSync(target)) return `apt-get installed chromium, yet ${target} does not exist (log: ${APT_LOG})`;
  console.error(`test setup: installed ${target}`);
  return null;
}

/**
 * Makes sure the browser tests have a Chromium: the one CHROMIUM_PATH names, or Debian's, installed when missing.
 * Returns null when there is one, or the one-line reason there is not (also left in the environment, where
 * chromiumExecutable() finds it).
 */
export function ensureChromium(env: NodeJS.ProcessEnv = process.env): string | null {
  const path = chromiumPath(env);
  if (existsSync(path)) return null;
  // The suite's runner tried before its workers started: each browser file is not to try apt-get again.
  if (env[PROBLEM_VAR]?.startsWith(missingAt(path))) return env[PROBLEM_VAR];
  const problem = env.CHROMIUM_PATH
    ? "CHROMIUM_PATH names a file that does not exist (unset it to use Debian's chromium, installed when missing)"
    : installDebianChromium(path);
  if (problem === null) return null;
  return (env[PROBLEM_VAR] = `${missingAt(path)}: ${problem}`);
}

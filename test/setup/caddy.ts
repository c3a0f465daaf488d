/**
 * Caddy for the custom-domains HTTPS test (test/e2e/domains-caddy.test.ts): Debian's `caddy` on the PATH, installed
 * with apt-get when missing, once (a second call finds it, or the reason it could not be installed), the way
 * chromium.ts provides Chromium. When it cannot be installed the test fails with the reason: nothing is skipped.
 */
import { join } from "node:path";
import { tmpdir } from "node:os";
import { writeFileSync } from "node:fs";
import { aptFailure, aptRunner } from "./chromium.ts";

const APT_LOG = join(tmpdir(), "clink-test-apt-caddy.log");
const APT_TIMEOUT_MS = 10 * 60_000;
const PROBLEM_VAR = "CLINK_TEST_CADDY_PROBLEM";

function run(cmd: string[]): { ok: boolean; output: string } {
  const r = Bun.spawnSync(cmd, { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }, stdout: "pipe", stderr: "pipe", timeout: APT_TIMEOUT_MS });
  return { ok: r.success, output: r.stdout.toString() + r.stderr.toString() };
}

/** The caddy executable, installing Debian's package when there is none; throws with the reason it could not. */
export function caddyExecutable(env: NodeJS.ProcessEnv = process.env): string {
  const found = Bun.which("caddy");
  if (found) return found;
  if (env[PROBLEM_VAR]) throw new Error(env[PROBLEM_VAR]);
  const hasSudo = Bun.which("sudo") !== null && Bun.spawnSync(["sudo", "-n", "true"], { stdout: "ignore", stderr: "ignore" }).success;
  const runner = aptRunner(process.getuid?.() ?? 0, Bun.which("apt-get") !== null, hasSudo);
  if ("problem" in runner) throw new Error((env[PROBLEM_VAR] = `caddy is missing and cannot be installed here: ${runner.problem} (as root: apt-get install -y caddy)`));
  console.error("test setup: installing Debian's caddy with apt-get for the custom-domains HTTPS test (once)...");
  const lock = ["-o", "DPkg::Lock::Timeout=120"];
  const update = run([...runner.prefix, "apt-get", "update", "-qq", ...lock]);
  const install = run([...runner.prefix, "apt-get", "install", "-y", "-qq", "--no-install-recommends", ...lock, "caddy"]);
  writeFileSync(APT_LOG, `$ apt-get update\n${update.output}\n$ apt-get install caddy\n${install.output}`);
  const installed = Bun.which("caddy");
  if (!install.ok || !installed) {
    throw new Error((env[PROBLEM_VAR] = `apt-get could not install caddy: ${aptFailure(update.output + install.output).replace("`chromium`", "`caddy`")} (log: ${APT_LOG})`));
  }
  return installed;
}

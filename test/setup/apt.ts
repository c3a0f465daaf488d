/**
 * Debian packages the tests use beyond the machine's Postgres and Redis (Chromium and its fonts, Caddy), installed
 * with apt-get when missing. One apt-get run installs all a run needs (chromium.ts and caddy.ts say which), and
 * `apt-get update` runs only when the install failed without it: a machine's package lists usually know the
 * packages already, and an update costs seconds of download and parsing.
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Where apt-get's output for `packages` goes, so a failure's one-line message can point at the whole story. */
export const aptLogOf = (packages: string[]) => join(tmpdir(), `clink-test-apt-${packages[0]}.log`);
const APT_TIMEOUT_MS = 10 * 60_000;

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
  const unknown = /Unable to locate package (\S+)|Package '?([^' ]+)'? has no installation candidate/i.exec(output);
  if (unknown) return `apt-get knows no package \`${unknown[1] ?? unknown[2]}\` (Debian's main archive missing?)`;
  const errorLine = output.split("\n").find((l) => l.startsWith("E: "));
  return errorLine ?? "apt-get failed";
}

async function run(cmd: string[]): Promise<{ ok: boolean; output: string }> {
  const proc = Bun.spawn(cmd, { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), APT_TIMEOUT_MS);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { ok: code === 0, output: stdout + stderr };
}

/**
 * Installs `packages` (for `purpose`, named in the one line said first). Returns null once they are installed, or
 * the one-line reason they could not be.
 */
export async function aptInstall(packages: string[], purpose: string): Promise<string | null> {
  const hasSudo = Bun.which("sudo") !== null && Bun.spawnSync(["sudo", "-n", "true"], { stdout: "ignore", stderr: "ignore" }).success;
  const runner = aptRunner(process.getuid?.() ?? 0, Bun.which("apt-get") !== null, hasSudo);
  if ("problem" in runner) return `cannot install it here: ${runner.problem} (as root: apt-get update && apt-get install -y ${packages.join(" ")})`;

  console.error(`test setup: installing Debian's ${packages.join(", ")} with apt-get for ${purpose} (once)...`);
  const lock = ["-o", "DPkg::Lock::Timeout=120"];
  const install = () => run([...runner.prefix, "apt-get", "install", "-y", "-qq", "--no-install-recommends", ...lock, ...packages]);
  let log = "$ apt-get install\n";
  let result = await install();
  log += result.output;
  if (!result.ok) {
    // Lists that do not know a package yet, or name versions the mirror no longer has: read them again.
    const update = await run([...runner.prefix, "apt-get", "update", "-qq", ...lock]);
    result = await install();
    log += `\n$ apt-get update\n${update.output}\n$ apt-get install\n${result.output}`;
    result.output = update.output + result.output;
  }
  writeFileSync(aptLogOf(packages), log);
  return result.ok ? null : `apt-get could not install it: ${aptFailure(result.output)} (log: ${aptLogOf(packages)})`;
}

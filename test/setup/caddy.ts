/**
 * Caddy for the custom-domains HTTPS test (test/e2e/domains-caddy.test.ts): Debian's `caddy` on the PATH, installed
 * with apt-get when missing (apt.ts), once: by the test setup before the run when the run has that file (alongside
 * the Redis Cluster and Chromium), otherwise by the test. When it cannot be installed the test fails with the
 * reason: nothing is skipped.
 */
import { aptInstall } from "./apt.ts";

const PROBLEM_VAR = "CLINK_TEST_CADDY_PROBLEM";

/** Installs caddy when it is missing; null once it is there, or the one-line reason (left in the environment). */
export async function ensureCaddy(env: NodeJS.ProcessEnv = process.env): Promise<string | null> {
  if (Bun.which("caddy")) return null;
  if (env[PROBLEM_VAR]) return env[PROBLEM_VAR];
  const problem = (await aptInstall(["caddy"], "the custom-domains HTTPS test")) ?? (Bun.which("caddy") ? null : "apt-get installed caddy, yet it is not on the PATH");
  return problem === null ? null : (env[PROBLEM_VAR] = `caddy is missing: ${problem}`);
}

/** The caddy executable, installing Debian's package when there is none; throws with the reason it could not. */
export async function caddyExecutable(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const problem = await ensureCaddy(env);
  if (problem) throw new Error(problem);
  return Bun.which("caddy")!;
}

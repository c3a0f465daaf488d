/**
 * Runs a clink command that is expected to exit by itself (a refused start-up, a CLI) and returns its exit code
 * and output. The environment is the runner's without any config variable (a developer's DATABASE_URL must not
 * leak in), plus `env`; the process is killed after `timeoutMs` so a start that did not refuse fails the test.
 */
import { REPO_ROOT, baseEnv } from "./server.ts";

export interface Exited {
  code: number;
  stdout: string;
  stderr: string;
}

/** `bun --no-orphans run <args>` from `cwd` (default: the repository root). */
export async function runToExit(
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): Promise<Exited> {
  const proc = Bun.spawn([process.execPath, "--no-orphans", "run", ...args], {
    cwd: opts.cwd ?? REPO_ROOT,
    env: { ...baseEnv(), ...opts.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  // 30 s: a refused start exits in about a second, but a CI run saturating both cores (load 20 once) stretched one past
  // 10 s; a start that does not refuse at all still fails, killed.
  const timer = setTimeout(() => proc.kill("SIGKILL"), opts.timeoutMs ?? 30_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/**
 * The runtime settings the start scripts give Bun reach Bun: each `npm run start*` script, run for real, starts a
 * Bun whose allocator (mimalloc, which prints its options at process start when MIMALLOC_VERBOSE=1) keeps freed
 * pages (purge_delay -1), a value set in the shell wins, the Docker image sets the same, and the benchmark reads
 * the same settings from package.json for every server it starts. A bad PORT makes each process exit at once
 * (exit 2, the variable named) after the allocator has printed its options, so no server needs stopping.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { packageScripts, runtimeEnv } from "../../bench/lib/proc.ts";

const ROOT = resolve(import.meta.dir, "../..");

async function purgeDelayOf(script: string, extraEnv: Record<string, string> = {}): Promise<{ delay: string | null; code: number; stderr: string }> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("MIMALLOC_")) env[k] = v;
  const proc = Bun.spawn(["npm", "run", "--silent", script], {
    cwd: ROOT,
    env: { ...env, PORT: "not-a-port", DATABASE_URL: "", REDIS_URL: "", MIMALLOC_VERBOSE: "1", ...extraEnv },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const m = /option 'purge_delay': (-?\d+)/.exec(stderr + stdout);
  return { delay: m ? m[1]! : null, code, stderr };
}

describe("runtime settings of the start scripts", () => {
  for (const script of ["start", "start:control", "start:redirector"]) {
    test(`npm run ${script} starts Bun with MIMALLOC_PURGE_DELAY=-1`, async () => {
      const r = await purgeDelayOf(script);
      expect(r.delay).toBe("-1");
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain("PORT");
    });
  }

  test("a MIMALLOC_PURGE_DELAY set in the shell wins over the script's default", async () => {
    const r = await purgeDelayOf("start", { MIMALLOC_PURGE_DELAY: "250" });
    expect(r.delay).toBe("250");
  });

  test("the benchmark reads the same settings from package.json, and the Docker image sets them too", () => {
    const scripts = packageScripts();
    expect(runtimeEnv()).toEqual({ MIMALLOC_PURGE_DELAY: "-1" });
    for (const script of ["start:control", "start:redirector"]) expect(runtimeEnv(scripts[script])).toEqual(runtimeEnv());
    expect(runtimeEnv("bun run control/main.ts")).toEqual({});
    const dockerfile = readFileSync(resolve(ROOT, "Dockerfile"), "utf8");
    expect(dockerfile).toMatch(/^ENV .*\bMIMALLOC_PURGE_DELAY=-1\b/m);
  });
});

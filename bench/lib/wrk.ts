/**
 * wrk: finding or installing it (Debian package), running it with the benchmark's Lua scripts, and reading
 * the one JSON line bench/wrk/report.lua prints. wrk is one C thread with an event loop; on these 2-core
 * machines it drives a bare Bun.serve to ~168k requests/s where autocannon stops near 92k.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { CpuWindow } from "./procfs.ts";
import type { LoadResult, LoadSpec } from "./load.ts";
import { runCommand, REPO_ROOT } from "./proc.ts";

const SCRIPTS = join(REPO_ROOT, "bench/wrk");

export async function wrkVersion(): Promise<string | null> {
  const path = Bun.which("wrk");
  if (!path) return null;
  const r = await runCommand([path, "-v"]).catch(() => null);
  const m = r ? /wrk\s+(\S+)/.exec(r.stdout + r.stderr) : null;
  return m ? m[1] : "unknown";
}

/**
 * Installs wrk with apt-get when it is missing (root only). Never fatal: on failure the caller falls back to
 * autocannon and the report says so. Returns a line describing what happened.
 */
export async function ensureWrk(log: (s: string) => void): Promise<string | null> {
  let v = await wrkVersion();
  if (v) return v;
  if (process.getuid?.() !== 0 || !Bun.which("apt-get")) {
    log("wrk is missing and cannot be installed here (needs root and apt-get): falling back to autocannon");
    return null;
  }
  log("wrk is missing: installing the Debian package (apt-get install -y wrk)…");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" } as Record<string, string>;
  let r = await runCommand(["apt-get", "install", "-y", "wrk"], { env, timeoutMs: 180_000 });
  if (r.code !== 0) {
    await runCommand(["apt-get", "update"], { env, timeoutMs: 180_000 });
    r = await runCommand(["apt-get", "install", "-y", "wrk"], { env, timeoutMs: 180_000 });
  }
  v = await wrkVersion();
  if (!v) log(`wrk could not be installed (apt-get exit ${r.code}): falling back to autocannon`);
  return v;
}

/** Lua for a run: the variants file reader when requests vary, then the reporter. Written once per directory. */
function scriptFor(workDir: string, varied: boolean): string {
  const path = join(workDir, varied ? "varied.lua" : "fixed.lua");
  const parts = varied ? [readFileSync(join(SCRIPTS, "requests.lua"), "utf8")] : [];
  parts.push(readFileSync(join(SCRIPTS, "report.lua"), "utf8"));
  writeFileSync(path, parts.join("\n"));
  return path;
}

interface WrkReport {
  requests: number;
  durationUs: number;
  connectErrors: number;
  readErrors: number;
  writeErrors: number;
  statusErrors: number;
  timeouts: number;
  latencyUs: { mean: number; max: number; p50: number; p90: number; p99: number; p999: number };
}

export function parseWrkReport(stdout: string): WrkReport {
  const line = stdout.split("\n").find((l) => l.startsWith("@@BENCH "));
  if (!line) throw new Error(`wrk printed no report line:\n${stdout}`);
  return JSON.parse(line.slice("@@BENCH ".length)) as WrkReport;
}

/**
 * The core wrk is pinned to (taskset), null when it runs unpinned (one core, or no taskset). Left to the scheduler,
 * wrk sometimes shared a core with the server thread on this project's 2-core VMs, and the same bare 302 measured
 * 55k in one run and 80k in the next; pinned, eight runs in a row agreed within 2%. The servers keep every core.
 */
const PIN_CORE = cpus().length >= 2 && Bun.which("taskset") ? cpus().length - 1 : null;

/** How wrk is run, for the report. */
export function wrkPlacement(): string {
  return PIN_CORE === null ? "wrk runs unpinned (one core, or no taskset)" : `wrk is pinned to core ${PIN_CORE} (taskset); the servers may use every core`;
}

let scratch: string | null = null;

export async function runWrk(spec: LoadSpec, workDir: string): Promise<LoadResult> {
  scratch ??= mkdtempSync(join(workDir, "wrk-"));
  const single = spec.variants.length === 1 && !spec.variants[0].headers;
  const args = ["-t1", `-c${spec.connections}`, `-d${Math.max(1, Math.round(spec.durationS))}s`, "--timeout", "5s"];
  let url = spec.baseUrl + spec.variants[0].path;
  if (single) {
    args.push("-s", scriptFor(scratch, false), url);
  } else {
    const file = join(scratch, `requests-${Bun.hash(JSON.stringify(spec.variants)).toString(36)}.tsv`);
    const lines = spec.variants.map((v) => [v.path, ...Object.entries(v.headers ?? {}).map(([k, val]) => `${k}: ${val}`)].join("\t"));
    writeFileSync(file, lines.join("\n") + "\n");
    url = spec.baseUrl + "/";
    args.push("-s", scriptFor(scratch, true), url, "--", file);
  }
  const cpu = new CpuWindow(spec.serverPids);
  const pin = PIN_CORE === null ? [] : ["taskset", "-c", String(PIN_CORE)];
  const proc = Bun.spawn([...pin, "wrk", ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const used = cpu.stop();
  if (code !== 0) throw new Error(`wrk exited with code ${code}: ${stderr}\n${stdout}`);
  const r = parseWrkReport(stdout);
  const seconds = r.durationUs / 1e6;
  const usage = proc.resourceUsage();
  const generatorCpuS = usage ? Number(usage.cpuTime.total) / 1e6 : NaN;
  // wrk's set-up (start, Lua init formatting up to 500,000 requests) precedes its measured duration and keeps
  // one core busy: it is taken out so the cores below are those of the load itself.
  const setupS = Math.max(0, used.seconds - seconds);
  const serverCpuS = [...used.perPid.values()].reduce((a, b) => a + b, 0) * used.seconds;
  const socketErrors = r.connectErrors + r.readErrors + r.writeErrors + r.timeouts;
  return {
    generator: "wrk",
    requests: r.requests,
    durationS: seconds,
    rps: r.requests / seconds,
    p50Ms: r.latencyUs.p50 / 1000,
    p99Ms: r.latencyUs.p99 / 1000,
    maxMs: r.latencyUs.max / 1000,
    errors: socketErrors,
    // wrk counts as "status errors" every answer that is not 2xx/3xx.
    unexpected: spec.expect === "404" ? r.requests - r.statusErrors : r.statusErrors,
    generatorCores: Math.max(0, generatorCpuS - setupS) / seconds,
    serverCores: serverCpuS / seconds,
    machineCores: Math.max(0, used.machineBusyCores * used.seconds - setupS) / seconds,
    serverCpuUsPerRequest: (serverCpuS * 1e6) / Math.max(1, r.requests),
  };
}

/**
 * Server processes for the benchmark: every server (the bare baseline and each clink server) runs as its own
 * process, started from the repository root with the same Bun as the runner, its output kept in log files,
 * and stopped by pid. `--no-orphans` makes a child die with the runner even if the runner is killed.
 */
import type { Subprocess } from "bun";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";

export const REPO_ROOT = resolve(import.meta.dir, "../..");

/** Variables shared/config.ts reads: never inherited from the shell, so a developer's DATABASE_URL cannot switch modes. */
const CONFIG_VARS = new Set([
  "PORT", "BASE_URL", "DATA_DIR", "DATABASE_URL", "DATABASE_SCHEMA", "REDIS_URL", "REDIS_PREFIX", "REDIS_CLUSTER_NODES",
  "COUNTRY_HEADER", "GEOIP_DB", "TRUSTED_PROXIES", "WEBHOOK_ALLOW_PRIVATE", "SIGNUP", "RATE_LIMIT_PER_MINUTE",
  "LOG_LEVEL", "METRICS_TOKEN",
]);

const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 20_000;

/**
 * The runtime settings `npm start` gives Bun (package.json's start script, e.g. `MIMALLOC_PURGE_DELAY=${MIMALLOC_PURGE_DELAY:--1}`),
 * read from the script itself so the benchmark runs clink as users do. Every server of a run gets them, the bare
 * baseline and the floor included, so a ratio compares code, not allocator settings.
 */
export function runtimeEnv(startScript: string = packageScripts().start ?? ""): Record<string, string> {
  const env: Record<string, string> = {};
  for (const m of startScript.matchAll(/(?:^|\s)([A-Z][A-Z0-9_]*)=\$\{\1:-([^}]*)\}(?=\s)/g)) env[m[1]!] = m[2]!;
  return env;
}

export function packageScripts(): Record<string, string> {
  return JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).scripts;
}

export function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !CONFIG_VARS.has(k)) env[k] = v;
  // As in `npm start`, a value set in the shell wins over the script's default.
  return { ...runtimeEnv(), ...env, ...extra };
}

/** A free TCP port on 127.0.0.1 (bind to 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const a = srv.address();
      const port = typeof a === "object" && a ? a.port : 0;
      srv.close(() => (port ? resolvePort(port) : reject(new Error("no free port"))));
    });
  });
}

export interface ServerProcess {
  readonly name: string;
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  readonly env: Record<string, string>;
  readonly running: boolean;
  /** The last lines the process wrote (stderr then stdout), for error messages. */
  logTail(): string;
  /** SIGTERM, SIGKILL after a grace period; resolves to the exit code. Safe to call twice. */
  stop(): Promise<number>;
}

const live = new Set<ServerProcess>();

/** Every server still running (run.ts stops them on error or Ctrl-C). */
export function liveServers(): ServerProcess[] {
  return [...live];
}

export interface StartOptions {
  name: string;
  /** Script relative to the repository root. */
  entry: string;
  args?: string[];
  env: Record<string, string>;
  port: number;
  logDir: string;
  /** "healthz": GET /healthz answers 200; "any": any HTTP answer at all (the baseline answers 302 to everything). */
  ready: "healthz" | "any";
  /** Options for Bun itself, before `run` (e.g. --cpu-prof-md). */
  bunArgs?: string[];
}

function tail(path: string): string {
  try {
    return readFileSync(path, "utf8").trim().split("\n").slice(-30).join("\n");
  } catch {
    return "";
  }
}

export async function startServer(o: StartOptions): Promise<ServerProcess> {
  const out = join(o.logDir, `${o.name}.out.log`);
  const err = join(o.logDir, `${o.name}.err.log`);
  const env = cleanEnv({ ...o.env, PORT: String(o.port) });
  const proc: Subprocess = Bun.spawn([process.execPath, "--no-orphans", ...(o.bunArgs ?? []), "run", o.entry, ...(o.args ?? [])], {
    cwd: REPO_ROOT,
    env,
    stdin: "ignore",
    stdout: Bun.file(out),
    stderr: Bun.file(err),
  });
  let exitCode: number | null = null;
  void proc.exited.then((c) => (exitCode = c));
  const url = `http://127.0.0.1:${o.port}`;
  const logTail = () => `--- ${err} ---\n${tail(err)}\n--- ${out} ---\n${tail(out)}`;

  let stopping: Promise<number> | null = null;
  const server: ServerProcess = {
    name: o.name,
    url,
    port: o.port,
    pid: proc.pid,
    env,
    get running() {
      return exitCode === null;
    },
    logTail,
    stop() {
      stopping ??= (async () => {
        if (exitCode === null) {
          proc.kill("SIGTERM");
          const timer = setTimeout(() => proc.kill("SIGKILL"), STOP_GRACE_MS);
          await proc.exited;
          clearTimeout(timer);
        }
        live.delete(server);
        return proc.exitCode ?? 0;
      })();
      return stopping;
    },
  };
  live.add(server);

  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exitCode !== null) {
      live.delete(server);
      throw new Error(`${o.name} exited with code ${exitCode} before it was ready\n${logTail()}`);
    }
    try {
      const res = await fetch(`${url}${o.ready === "healthz" ? "/healthz" : "/"}`, { redirect: "manual", signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      if (o.ready === "any" || res.status === 200) return server;
    } catch {
      // not listening yet
    }
    await Bun.sleep(50);
  }
  await server.stop();
  throw new Error(`${o.name} was not ready within ${READY_TIMEOUT_MS / 1000} s\n${logTail()}`);
}

/** Runs a short command to completion and returns its output (create-key, wrk -v, git…). */
export async function runCommand(cmd: string[], opts: { env?: Record<string, string>; timeoutMs?: number } = {}) {
  const proc = Bun.spawn(cmd, { cwd: REPO_ROOT, env: opts.env ?? cleanEnv({}), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), opts.timeoutMs ?? 60_000);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]).finally(() => clearTimeout(timer));
  return { stdout, stderr, code };
}

/**
 * clink itself, as the benchmark sees it: started the way users start it (embedded, or control + redirector
 * in scale mode), an API key from the create-key CLI, links made through the REST API, and the click counts
 * read back from the stats API to prove that every served redirect was recorded.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Ctx, ScaleServices } from "./context.ts";
import { freePort, runCommand, startServer, type ServerProcess } from "./proc.ts";

/** The per-key limit the servers run with: rate limiting stays on, with room for a benchmark's request rate. */
export const BENCH_RATE_LIMIT = 1_000_000_000;

export interface Clink {
  mode: "embedded" | "scale";
  /** Answers short addresses: the embedded process, or the redirector. */
  redirect: ServerProcess;
  /** Answers the API: the same embedded process, or control. */
  control: ServerProcess;
  processes: ServerProcess[];
  key: string;
  /** Embedded: the directory holding clink.sqlite. */
  dataDir: string | null;
  stop(): Promise<void>;
}

/** Bun options for a clink server: a CPU profile (markdown) per process when --cpu-prof was given. */
function bunArgs(ctx: Ctx, name: string): string[] {
  if (!ctx.opts.cpuProfile) return [];
  const dir = join(ctx.opts.workDir, "profiles", name);
  mkdirSync(dir, { recursive: true });
  return ["--cpu-prof-md", `--cpu-prof-dir=${dir}`];
}

async function createKey(env: Record<string, string>): Promise<string> {
  const r = await runCommand([process.execPath, "run", "control/keys/create-key-cli.ts", "--email", "bench@example.com", "--name", "bench"], { env });
  const key = r.stdout.trim().split("\n").pop()?.trim() ?? "";
  if (r.code !== 0 || !key.startsWith("ck_")) throw new Error(`create-key failed (exit ${r.code}):\n${r.stderr}\n${r.stdout}`);
  return key;
}

function stopAll(processes: ServerProcess[]) {
  return async () => {
    for (const p of [...processes].reverse()) await p.stop();
  };
}

export async function startEmbedded(ctx: Ctx, name: string, env: Record<string, string> = {}): Promise<Clink> {
  const dataDir = join(ctx.opts.workDir, name);
  mkdirSync(dataDir, { recursive: true });
  const port = await freePort();
  const server = await startServer({
    name,
    entry: "control/main.ts",
    args: ["--embedded"],
    env: { DATA_DIR: dataDir, BASE_URL: `http://127.0.0.1:${port}`, RATE_LIMIT_PER_MINUTE: String(BENCH_RATE_LIMIT), LOG_LEVEL: "warn", ...env },
    port,
    logDir: ctx.opts.workDir,
    ready: "healthz",
    bunArgs: bunArgs(ctx, name),
  });
  try {
    const key = await createKey(server.env);
    return { mode: "embedded", redirect: server, control: server, processes: [server], key, dataDir, stop: stopAll([server]) };
  } catch (e) {
    await server.stop();
    throw e;
  }
}

/** Scale mode in the bench's own Postgres schema and Redis key prefix (see cases/redis-redirect.ts). */
export async function startScale(ctx: Ctx, name: string, services: ScaleServices, isolation: { schema: string; redisPrefix: string }): Promise<Clink> {
  const [controlPort, redirectPort] = [await freePort(), await freePort()];
  const env = {
    DATABASE_URL: services.databaseUrl,
    DATABASE_SCHEMA: isolation.schema,
    REDIS_URL: services.redisUrl,
    REDIS_PREFIX: isolation.redisPrefix,
    BASE_URL: `http://127.0.0.1:${redirectPort}`,
    RATE_LIMIT_PER_MINUTE: String(BENCH_RATE_LIMIT),
    LOG_LEVEL: "warn",
  };
  const processes: ServerProcess[] = [];
  try {
    // Control first: it applies the migrations the redirector relies on.
    processes.push(
      await startServer({ name: `${name}-control`, entry: "control/main.ts", args: ["--control"], env, port: controlPort, logDir: ctx.opts.workDir, ready: "healthz", bunArgs: bunArgs(ctx, `${name}-control`) }),
    );
    processes.push(
      await startServer({ name: `${name}-redirector`, entry: "redirector/main.ts", env, port: redirectPort, logDir: ctx.opts.workDir, ready: "healthz", bunArgs: bunArgs(ctx, `${name}-redirector`) }),
    );
    const key = await createKey(processes[0].env);
    return { mode: "scale", control: processes[0], redirect: processes[1], processes, key, dataDir: null, stop: stopAll(processes) };
  } catch (e) {
    await stopAll(processes)();
    throw e;
  }
}

export interface ApiAnswer {
  status: number;
  headers: Headers;
  body: any;
}

export async function apiCall(app: Clink, method: string, path: string, body?: unknown): Promise<ApiAnswer> {
  const res = await fetch(`${app.control.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${app.key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text for the error message
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

export async function createLink(app: Clink, input: Record<string, unknown>): Promise<{ slug: string }> {
  const r = await apiCall(app, "POST", "/api/v1/links", input);
  if (r.status !== 201) throw new Error(`POST /api/v1/links answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Sum of totalClicks over the slugs, from the stats API. */
export async function clickTotal(app: Clink, slugs: string[]): Promise<number> {
  let total = 0;
  for (const slug of slugs) {
    const r = await apiCall(app, "GET", `/api/v1/links/${slug}/stats`);
    if (r.status !== 200) throw new Error(`stats of ${slug} answered ${r.status}: ${JSON.stringify(r.body)}`);
    total += r.body.totalClicks;
  }
  return total;
}

/**
 * Waits until the stats show at least `served` clicks (the consumer writes them after the load), then returns
 * the count; gives up after `timeoutMs` and returns what is there.
 */
export async function waitForClicks(app: Clink, slugs: string[], served: number, timeoutMs = 60_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let n = await clickTotal(app, slugs);
  while (n < served && Date.now() < deadline) {
    await Bun.sleep(250);
    n = await clickTotal(app, slugs);
  }
  return n;
}

/** One request to a short address without following it: its status and Location. */
export async function probe(url: string, headers: Record<string, string> = {}): Promise<{ status: number; location: string | null }> {
  const res = await fetch(url, { redirect: "manual", headers });
  await res.arrayBuffer();
  return { status: res.status, location: res.headers.get("location") };
}

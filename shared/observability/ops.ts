/**
 * What every process (embedded, control, redirector) exposes for operators, built once at start-up: the logger,
 * the metrics registry, the probes, and the three endpoints GET /healthz, /readyz and /metrics.
 * /metrics is open unless METRICS_TOKEN is set; then it needs `Authorization: Bearer <METRICS_TOKEN>`.
 */
import { timingSafeEqual } from "node:crypto";
import type { Config } from "../config.ts";
import { AppError, problemResponse } from "../errors.ts";
import type { AdminStore, ClickIntake, HotState } from "../ports.ts";
import { createLogger, type Logger, type LoggerOptions } from "./logger.ts";
import { Metrics, type ProcessRole } from "./metrics.ts";
import { createProbes, type Probes } from "./probes.ts";

export type OpsPath = "healthz" | "readyz" | "metrics";

export interface Ops {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly probes: Probes;
  /** The ops endpoint a request URL names, or null (cheap: no URL object). */
  pathOf(url: string): OpsPath | null;
  /** Answers one of the ops endpoints. */
  answer(path: OpsPath, req: Request): Response | Promise<Response>;
}

export interface OpsOptions {
  config: Config;
  role: ProcessRole;
  store: AdminStore;
  hot: HotState;
  /** Where this process's clicks are queued, for the queue-depth gauge (default: HotState's queue). */
  clickQueue?: ClickIntake;
  /** prom-client's process metrics (CPU, memory, event loop). Default true. */
  defaultMetrics?: boolean;
  log?: LoggerOptions;
}

const OPS_PATHS = new Set<string>(["healthz", "readyz", "metrics"]);

/** "healthz" for `http://host/healthz` or `http://host/healthz?x`, null for anything else. */
export function opsPathOf(url: string): OpsPath | null {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return null;
  // Most requests are short addresses: reject on the first character before slicing anything.
  const c = url.charCodeAt(start + 1);
  if (c !== 104 /* h */ && c !== 114 /* r */ && c !== 109 /* m */) return null;
  let end = url.indexOf("?", start);
  if (end < 0) end = url.length;
  const name = url.slice(start + 1, end);
  return OPS_PATHS.has(name) ? (name as OpsPath) : null;
}

/** Constant-time comparison of a presented bearer token with the configured one. */
function bearerMatches(authorization: string | null, token: string): boolean {
  if (authorization === null) return false;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!m) return false;
  const a = new Bun.CryptoHasher("sha256").update(m[1]!).digest();
  const b = new Bun.CryptoHasher("sha256").update(token).digest();
  return timingSafeEqual(a, b);
}

export function createOps(o: OpsOptions): Ops {
  const logger = createLogger(o.config.logLevel, o.role, o.log);
  const metrics = new Metrics(o.role, { defaultMetrics: o.defaultMetrics });
  metrics.watchQueue(o.clickQueue ?? o.hot);
  const probes = createProbes({
    storage: () => o.store.ping(),
    hotState: () => o.hot.ping(),
    migrations: async () => {
      const pending = await o.store.pendingMigrations();
      if (pending > 0) throw new Error(`${pending} schema migration(s) not applied yet (the control plane applies them when it starts)`);
    },
  });
  const token = o.config.metricsToken;

  async function metricsResponse(req: Request): Promise<Response> {
    if (token !== undefined && !bearerMatches(req.headers.get("authorization"), token)) {
      const res = problemResponse(new AppError("unauthorized", "GET /metrics needs Authorization: Bearer <METRICS_TOKEN>"));
      res.headers.set("www-authenticate", 'Bearer realm="metrics"');
      return res;
    }
    const { body, contentType } = await metrics.render();
    return new Response(body, { headers: { "content-type": contentType, "cache-control": "no-store" } });
  }

  return {
    logger,
    metrics,
    probes,
    pathOf: opsPathOf,
    answer(path, req) {
      if (req.method !== "GET" && req.method !== "HEAD") {
        return new Response("Method not allowed", { status: 405, headers: { allow: "GET, HEAD" } });
      }
      if (path === "healthz") return probes.healthz();
      if (path === "readyz") return probes.readyz();
      return metricsResponse(req);
    },
  };
}

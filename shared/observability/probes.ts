/**
 * Liveness and readiness, the same on every process (embedded, control, redirector):
 * - GET /healthz: the process is alive and its event loop answers. Touches nothing else, so a storage outage
 *   never makes an orchestrator restart healthy processes.
 * - GET /readyz: every dependency answers within a short budget (storage, hot state, schema migrations
 *   applied); otherwise 503 with a JSON body naming what is down. Also 503 once shutdown has begun, so load
 *   balancers stop sending traffic.
 */
import { withoutCredentials } from "./logger.ts";
import { withTimeout } from "../time.ts";

/** A dependency check: resolves when healthy, rejects (or throws) with the reason otherwise. */
export type ReadinessCheck = () => Promise<unknown>;

export interface Probes {
  healthz(): Response;
  readyz(): Promise<Response>;
  /** From now on /readyz answers 503 "stopping" (graceful shutdown). */
  markStopping(): void;
}

export interface ProbesOptions {
  /** Per-check budget; a check slower than this counts as down. Default 2000 ms. */
  timeoutMs?: number;
}

const NO_STORE = { "cache-control": "no-store" };

function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return withoutCredentials(message).slice(0, 200) || "unavailable";
}

/** The check's outcome (a synchronous throw included), or a TimeoutError after `ms`. */
const within = (check: ReadinessCheck, ms: number): Promise<unknown> => withTimeout(Promise.resolve().then(check), ms);

export function createProbes(checks: Record<string, ReadinessCheck>, opts: ProbesOptions = {}): Probes {
  const timeoutMs = opts.timeoutMs ?? 2_000;
  let stopping = false;
  return {
    healthz: () => Response.json({ status: "ok" }, { headers: NO_STORE }),
    markStopping: () => {
      stopping = true;
    },
    async readyz() {
      if (stopping) return Response.json({ status: "stopping", down: [], checks: {} }, { status: 503, headers: NO_STORE });
      const names = Object.keys(checks);
      const results = await Promise.allSettled(names.map((n) => within(checks[n]!, timeoutMs)));
      const report: Record<string, { ok: true } | { ok: false; error: string }> = {};
      const down: string[] = [];
      results.forEach((r, i) => {
        const name = names[i]!;
        if (r.status === "fulfilled") report[name] = { ok: true };
        else {
          report[name] = { ok: false, error: reasonOf(r.reason) };
          down.push(name);
        }
      });
      const ready = down.length === 0;
      return Response.json(
        { status: ready ? "ready" : "unavailable", down, checks: report },
        { status: ready ? 200 : 503, headers: ready ? NO_STORE : { ...NO_STORE, "retry-after": "5" } },
      );
    },
  };
}

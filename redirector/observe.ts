/**
 * Metrics (and, at LOG_LEVEL=debug only, one log line) for every short-address answer, wrapped around the
 * redirector so its hot path stays as it is. Per request this costs two performance.now() calls and two
 * array increments (see shared/observability/metrics.ts); nothing is logged by default.
 */
import type { Server } from "bun";
import type { Ops } from "../shared/observability/ops.ts";
import type { Redirector } from "./handler.ts";

/** Instruments `r` in place (its fetch) and returns it. */
export function observeRedirector(r: Redirector, ops: Ops): Redirector {
  const metrics = ops.metrics;
  metrics.watchCache(r.cache);
  metrics.watchClickBuffer(r.clicks);
  const inner = r.fetch;
  const debug = ops.logger.isLevelEnabled("debug") ? ops.logger : null;

  function done(req: Request, res: Response, started: number): Response {
    const status = res.status;
    const seconds = (performance.now() - started) / 1000;
    metrics.redirect(status, seconds);
    if (status === 429) metrics.rateLimited("password");
    if (debug) debug.debug({ method: req.method, path: new URL(req.url).pathname, status, durationMs: seconds * 1000 }, "redirect");
    return res;
  }

  function fetch(req: Request, server: Server<unknown>, url?: string): Response | Promise<Response> {
    const started = performance.now();
    const res = inner(req, server, url);
    if (res instanceof Promise) {
      return res.then(
        (x) => done(req, x, started),
        (err) => {
          metrics.redirect(500, (performance.now() - started) / 1000);
          throw err;
        },
      );
    }
    return done(req, res, started);
  }

  r.fetch = fetch;
  return r;
}

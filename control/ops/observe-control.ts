/**
 * The control plane's edge for operators: GET /healthz, /readyz and /metrics, and for every other request a
 * request id (the caller's X-Request-Id when it is a plain token, else a new one, echoed in the response),
 * one structured log line and the API metrics (by route template, never by raw path, so the number of
 * series stays bounded whatever paths clients send).
 */
import type { ClickSink } from "../clicks/drain.ts";
import { AppError, problemResponse } from "../../shared/errors.ts";
import { requestIdOf } from "../../shared/observability/logger.ts";
import type { Metrics } from "../../shared/observability/metrics.ts";
import type { Ops } from "../../shared/observability/ops.ts";
import type { StoredClick } from "../../shared/ports.ts";

type Handler = (req: Request) => Response | Promise<Response>;

/** Path segments that are part of route templates; any other segment is a parameter (slug, key id, file). */
const ROUTE_WORDS = new Set([
  "api", "v1", "links", "bulk", "stats", "qr", "openapi.json", "mcp", "dashboard", "keys", "new", "edit", "delete",
  "revoke", "signin", "signup", "signout", "static", "qr.svg", "healthz", "readyz", "metrics", "favicon.ico",
  "robots.txt", "docs", "clicks.csv", "analytics", "audit",
]);
const MAX_ROUTE_DEPTH = 6;

/** `/api/v1/links/abc/stats` → `/api/v1/links/:param/stats`. */
export function routeOf(path: string): string {
  const segments = path.split("/").slice(1, MAX_ROUTE_DEPTH + 1);
  const route = segments.map((s) => (s === "" || ROUTE_WORDS.has(s) ? s : ":param")).join("/");
  return path.split("/").length - 1 > MAX_ROUTE_DEPTH ? `/${route}/…` : `/${route}`;
}

function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const q = url.indexOf("?", start);
  return url.slice(start, q < 0 ? url.length : q);
}

/** Sets the request id on the response; a response with immutable headers is copied first. */
function withRequestId(res: Response, id: string): Response {
  try {
    res.headers.set("x-request-id", id);
    return res;
  } catch {
    const headers = new Headers(res.headers);
    headers.set("x-request-id", id);
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
  }
}

/** Wraps the control plane's handler (Elysia's `app.handle`). */
export function observeControl(handle: Handler, ops: Ops): Handler {
  const { logger, metrics } = ops;
  return async (req) => {
    const opsPath = ops.pathOf(req.url);
    if (opsPath !== null) return ops.answer(opsPath, req);

    const started = performance.now();
    const reqId = requestIdOf(req);
    let res: Response;
    try {
      res = await handle(req);
    } catch (err) {
      // The app turns errors into problem+json itself; this is the net under it. Internals stay in the log.
      logger.error({ reqId, err: { message: (err as Error)?.message, stack: (err as Error)?.stack } }, "unhandled error");
      res = problemResponse(new AppError("internal", "Internal error"));
    }
    res = withRequestId(res, reqId);

    const seconds = (performance.now() - started) / 1000;
    const path = pathOf(req.url);
    const route = routeOf(path);
    const status = res.status;
    metrics.apiRequest(route, req.method, status, seconds);
    if (status === 429) metrics.rateLimited("api");
    const line = { reqId, method: req.method, route, path, status, durationMs: Math.round(seconds * 10_000) / 10 };
    if (status >= 500) logger.error(line, "request");
    else logger.info(line, "request");
    return res;
  };
}

/**
 * The store the click consumer writes through: after each batch it records how old the batch's oldest click
 * was (clink_click_lag_seconds). Every other method is the store's own.
 */
export function observeClickWrites<S extends ClickSink>(store: S, metrics: Metrics): S {
  return new Proxy(store, {
    get(target, prop) {
      if (prop === "recordClicks") {
        return async (clicks: StoredClick[]) => {
          await target.recordClicks(clicks);
          if (clicks.length === 0) return;
          let oldest = Infinity;
          for (const c of clicks) if (c.ts < oldest) oldest = c.ts;
          metrics.clickLagSeconds((Date.now() - oldest) / 1000);
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

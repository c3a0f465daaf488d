/**
 * Scale-mode redirector process (`npm run start:redirector`): stateless, any number of them behind a proxy.
 * It reads links (LRU → Redis → Postgres), takes maxHits steps in Redis and queues clicks in the Redis
 * stream; it never writes Postgres and never runs migrations (the control plane does).
 *
 * Shutdown (SIGTERM/SIGINT): stop accepting, let requests in flight finish, then hand every buffered click
 * to Redis (retrying for up to 10 s if Redis is down) before exiting, so a graceful stop loses no click.
 */
import { ConfigError, loadConfig, type Config } from "../shared/config.ts";
import { openStorage } from "../shared/adapters/open.ts";
import { openCountryLookup } from "../shared/facts/geo.ts";
import { createWebhookSender } from "../shared/webhooks/sender.ts";
import { createRedirector } from "./handler.ts";
import { createOps } from "../shared/observability/ops.ts";
import { observeRedirector } from "./observe.ts";

const STOP_GRACE_MS = 5_000;
const CLICK_DRAIN_MS = 10_000;

function loadScaleConfig(): Config {
  try {
    const config = loadConfig();
    if (config.mode !== "scale") {
      throw new ConfigError("DATABASE_URL", "and REDIS_URL must be set to run a separate redirector (scale mode); use `npm start` otherwise");
    }
    return config;
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(2);
    }
    throw e;
  }
}

const config = loadScaleConfig();
let countryLookup;
try {
  countryLookup = await openCountryLookup(config.geoipDb);
} catch (e) {
  console.error((e as Error).message);
  process.exit(2);
}
// Storage is not checked here: a redirector starts (and serves what it can) while Redis or Postgres is down.
const { store, hot, description } = await openStorage(config, { poolSize: 4 });
const ops = createOps({ config, role: "redirector", store, hot });
const webhooks = createWebhookSender({ allowPrivate: config.webhookAllowPrivate, onResult: ops.metrics.webhookResult });
const redirector = observeRedirector(createRedirector({ config, hot, store, now: Date.now, countryLookup, webhooks }), ops);

const server = Bun.serve({
  port: config.port,
  hostname: "0.0.0.0",
  maxRequestBodySize: 64 * 1024,
  fetch(req, srv) {
    const url = req.url;
    const opsPath = ops.pathOf(url); // GET /healthz, /readyz, /metrics (reserved slugs)
    if (opsPath !== null) return ops.answer(opsPath, req);
    return redirector.fetch(req, srv, url);
  },
  error() {
    return new Response("Internal error", { status: 500 });
  },
});
// Change notifications published while Redis was unreachable never arrive: once the subscription is back,
// the link cache re-reads every cached link (LinkCache, HotState.onResubscribed).

console.log(`clink redirector listening on port ${server.port} for ${config.baseUrl}; data: ${description}`);

let stopping = false;
async function shutdown() {
  if (stopping) return;
  stopping = true;
  ops.probes.markStopping();
  // Idle keep-alive connections close at once; a request still running after the grace period is cut.
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([server.stop(), new Promise((r) => (timer = setTimeout(r, STOP_GRACE_MS)))]);
  clearTimeout(timer);
  await server.stop(true);
  const lost = await redirector.clicks.drain(CLICK_DRAIN_MS);
  const dropped = redirector.clicks.dropped;
  if (lost > 0 || dropped > 0) console.error(`clink redirector: ${lost + dropped} clicks could not be queued (Redis unreachable)`);
  await webhooks.drain();
  await hot.close();
  await store.close();
  process.exit(0);
}
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);

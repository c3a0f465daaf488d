/**
 * Scale-mode redirector process (`npm run start:redirector`): stateless, any number of them behind a proxy.
 * It reads links (LRU → Redis → Postgres), takes maxHits steps in Redis and queues clicks in the Redis
 * stream; it never runs migrations (the control plane does), and its one Postgres write is a link's webhook
 * pause (shared/webhooks/pause-link.ts), when an endpoint kept failing for the clicks it served.
 *
 * Shutdown (SIGTERM/SIGINT): stop accepting, let requests in flight finish, then hand every buffered click
 * to Redis (retrying for up to 10 s if Redis is down) before exiting, so a graceful stop loses no click.
 */
import { ConfigError, loadConfig, type Config } from "../shared/config.ts";
import { openStorage } from "../shared/adapters/open.ts";
import { openCountryLookup } from "../shared/facts/geo.ts";
import { UNBOUNDED_BODY } from "../shared/net/body.ts";
import { pauseLinkWebhook } from "../shared/webhooks/pause-link.ts";
import { createWebhookSender } from "../shared/webhooks/sender.ts";
import type { AdminStore } from "../shared/ports.ts";
import { createRedirector } from "./handler.ts";
import { createOps } from "../shared/observability/ops.ts";
import { observeRedirector } from "./observe.ts";
import { baseHostWarning, cannotStartLine, exitOnProblem, STARTUP_PROBLEM_EXIT, startupProblemOf } from "../shared/observability/startup-checks.ts";

const STOP_GRACE_MS = 5_000;
const CLICK_DRAIN_MS = 10_000;
/** How long start-up waits for its one Postgres read before listening anyway (a hung host must not hold it). */
const STARTUP_READ_MS = 2_000;

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

/** Warning lines for a store that is down or whose links are on another host; exits when Postgres refuses us. */
async function checkStore(store: AdminStore, config: Config): Promise<string[]> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((r) => (timer = setTimeout(() => r("late"), STARTUP_READ_MS)));
  try {
    const domains = await Promise.race([store.linkDomains(), late]);
    if (domains === "late") return [];
    const warning = baseHostWarning(config, domains);
    return warning ? [warning] : [];
  } catch (err) {
    // 42P01: no links table yet, the control plane has not run the migrations: nothing to compare.
    if ((err as { code?: unknown }).code === "42P01") return [];
    const problem = startupProblemOf("database", err, config);
    if (problem === null) return [`Warning: could not read the links' domains at start: ${(err as Error).message}`];
    if (!problem.transient) {
      console.error(cannotStartLine(problem));
      process.exit(STARTUP_PROBLEM_EXIT);
    }
    return [`Warning: ${problem.what}; starting anyway, links are served from Redis until it answers.`];
  } finally {
    clearTimeout(timer);
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
// A redirector starts (and serves what it can) while Redis or Postgres is down. One read at start tells a
// misconfigured Postgres (database or role missing: exit with one line) from one that is down (a warning), and
// finds links stranded on another host than BASE_URL's.
const { store, hot, description } = await openStorage(config, { poolSize: 4 });
const startupWarnings = await checkStore(store, config);
const ops = createOps({ config, role: "redirector", store, hot });
const webhooks = createWebhookSender({
  allowPrivate: config.webhookAllowPrivate,
  onResult: ops.metrics.webhookResult,
  onPause: (pause) => pauseLinkWebhook(store, hot, pause),
});
const redirector = observeRedirector(createRedirector({ config, hot, store, now: Date.now, countryLookup, webhooks }), ops);

const server = await exitOnProblem("listen", config, () => Bun.serve({
  port: config.port,
  hostname: "0.0.0.0",
  maxRequestBodySize: UNBOUNDED_BODY, // the password form reads at most 16 KiB (readBodyUpTo) and answers 413 past it
  fetch(req, srv) {
    const url = req.url;
    const opsPath = ops.pathOf(url); // GET /healthz, /readyz, /metrics (reserved slugs)
    if (opsPath !== null) return ops.answer(opsPath, req);
    return redirector.fetch(req, srv, url);
  },
  error() {
    return new Response("Internal error", { status: 500 });
  },
}));
// Change notifications published while Redis was unreachable never arrive: once the subscription is back,
// the link cache re-reads every cached link (LinkCache, HotState.onResubscribed).

console.log(`clink redirector listening on port ${server.port} for ${config.baseUrl}; data: ${description}`);
if (config.logLevel !== "error" && config.logLevel !== "silent") for (const w of startupWarnings) console.warn(w);

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

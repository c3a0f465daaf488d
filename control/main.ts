/**
 * Entry point. `--embedded` (npm start): redirector, control plane and click consumer in one process on
 * one port, SQLite + memory. `--control` (scale mode): control plane and click consumer only.
 */
import { hostname } from "node:os";
import { ConfigError, loadConfig, type Config } from "../shared/config.ts";
import { openStorage, sqliteFile } from "../shared/adapters/open.ts";
import { openGeoLookups, type GeoLookups } from "../shared/facts/geo.ts";
import { UNBOUNDED_BODY } from "../shared/net/body.ts";
import { pauseLinkWebhook } from "../shared/webhooks/pause-link.ts";
import { createWebhookSender } from "../shared/webhooks/sender.ts";
import { createRedirector } from "../redirector/handler.ts";
import { buildControlPlane } from "./app.ts";
import { ClickDrain } from "./clicks/drain.ts";
import { startEventWebhookWorker } from "./webhooks/worker.ts";
import { eventWebhookSettings } from "./webhooks/settings.ts";
import { withClickEvents } from "./webhooks/events.ts";
import { startClickMaintenance } from "./clicks/maintenance.ts";
import { ClickWriterThread, MAX_WAITING_CLICKS } from "./clicks/writer-thread-client.ts";
import { rememberPeer } from "./http/client-ip.ts";
import { purgeExpiredSessions, SESSION_PURGE_INTERVAL_MS } from "./accounts/sessions.ts";
import { auditWrites } from "./audit/service.ts";
import { startAuditRetention } from "./audit/retention.ts";
import type { Deps } from "./deps.ts";
import { createOps } from "../shared/observability/ops.ts";
import { observeRedirector } from "../redirector/observe.ts";
import { observeClickWrites, observeControl } from "./ops/observe-control.ts";
import { baseHostWarning, exitOnProblem, firstKeyHint } from "../shared/observability/startup-checks.ts";
import { isControlPath } from "./http/front-door.ts";

const STOP_GRACE_MS = 5_000;
/** Larger batches than the Redis default: one message to the writer thread per 1,024 clicks under load. */
const EMBEDDED_CLICK_BATCH = { batchSize: 1024, flushMs: 50 };

/** At most one line per 10 s for a recurring failure (e.g. the store down while the consumer retries). */
function throttledWarn(what: string, config: Config): (err: unknown) => void {
  let last = 0;
  return (err) => {
    if (config.logLevel === "error" || config.logLevel === "silent") return;
    if (Date.now() - last < 10_000) return;
    last = Date.now();
    console.warn(`${what}: ${err instanceof Error ? err.message : String(err)}`);
  };
}

function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(2);
    }
    throw e;
  }
}

async function main() {
  const role = process.argv.includes("--control") ? "control" : "embedded";
  const config = loadConfigOrExit();
  if (role === "embedded" && config.mode === "scale") {
    console.error("DATABASE_URL and REDIS_URL are set: run `npm run start:control` and `npm run start:redirector` for scale mode.");
  }
  if (role === "control" && config.mode !== "scale") {
    // A control plane alone on SQLite + memory would queue clicks no redirector can ever share.
    console.error("Invalid configuration: DATABASE_URL and REDIS_URL must be set for --control (scale mode); use `npm start` otherwise");
    process.exit(2);
  }
  let geo: GeoLookups;
  try {
    geo = await openGeoLookups(config.geoipDb);
  } catch (e) {
    console.error((e as Error).message);
    process.exit(2);
  }
  // Each step that meets the environment (a directory, a database, Redis, the port) ends a failed start with
  // one line naming the variable and the fix (shared/observability/startup-checks.ts), not a stack trace.
  const storageStep = config.mode === "scale" ? "database" : "data";
  const { store, hot, visitors, description } = await exitOnProblem(storageStep, config, () => openStorage(config));
  // A control plane without Redis would answer 503 to every API call and drain no click: refuse at start instead.
  if (config.mode === "scale") await exitOnProblem("redis", config, () => hot.ping());
  const [linkDomains, hasAccounts] = await exitOnProblem(storageStep, config, async () => {
    await store.migrate();
    return Promise.all([store.linkDomains(), store.hasAccounts()]);
  });
  // Embedded: clicks go from the redirector straight to a writer thread, so parsing them and writing SQLite
  // never stall the event loop. Scale mode: the redirectors queue them in Redis and this consumer drains it.
  const clickWriter = config.mode === "embedded" ? await ClickWriterThread.open(sqliteFile(config), config.geoipDb, {
    onWritten: (n, oldestTs) => {
      ops.metrics.clicksWritten(n);
      ops.metrics.clickLagSeconds((Date.now() - oldestTs) / 1000);
    },
    onError: throttledWarn("click writer", config),
  }, MAX_WAITING_CLICKS, { retentionDays: config.clickRetentionDays }) : null;
  const ops = createOps({ config, role, store, hot, clickQueue: clickWriter ?? hot });
  const deps: Deps = { config, store, hot, now: Date.now };
  const control = buildControlPlane(deps);
  const consumer = clickWriter || !visitors ? null : new ClickDrain(hot, withClickEvents(observeClickWrites(store, ops.metrics), store), {
    // Unique per process: a consumer group hands each click to one consumer, and takes over a dead one's.
    consumerName: `control-${hostname()}-${process.pid}`,
    placeLookup: geo.place,
    visitors,
    onError: throttledWarn("click consumer", config),
    onDrained: (r) => ops.metrics.clicksWritten(r.written),
  });
  consumer?.start();
  const clickLosses = clickWriter ?? consumer;
  if (clickLosses) ops.metrics.watchClickWriter(clickLosses);

  const purgeFailed = throttledWarn("session purge", config);
  const purgeSessions = () => void purgeExpiredSessions(deps).catch(purgeFailed);
  purgeSessions();
  const sessionPurge = setInterval(purgeSessions, SESSION_PURGE_INTERVAL_MS);
  // Drops audit-log entries past AUDIT_RETENTION_DAYS, at start and hourly, in short batches (docs/operations.md).
  const auditRetention = startAuditRetention({
    store, retentionDays: config.auditRetentionDays, now: Date.now, onError: throttledWarn("audit log retention", config),
  });
  ops.metrics.watchAuditWrites(auditWrites);
  // Settles finished UTC days and drops raw clicks past CLICK_RETENTION_DAYS (docs/analytics.md). Embedded: the
  // writer thread does it (opened above with upkeep), since a synchronous SQLite settle here would hold up redirects.
  const clickUpkeep = clickWriter ? null : startClickMaintenance({
    store, retentionDays: config.clickRetentionDays, now: Date.now, onError: throttledWarn("click maintenance", config),
  });

  const webhooks = createWebhookSender({
    allowPrivate: config.webhookAllowPrivate,
    onResult: ops.metrics.webhookResult,
    // An endpoint that kept failing: stored on its link, so every process stops sending and the owner sees why.
    onPause: (pause) => pauseLinkWebhook(store, hot, pause),
  });
  // Event webhooks (docs/webhooks.md): this process claims due deliveries from the store's outbox and sends them.
  const eventWebhooks = startEventWebhookWorker({
    store, settings: eventWebhookSettings(), allowPrivate: config.webhookAllowPrivate, base: config, onError: throttledWarn("event webhooks", config),
  });
  const redirector =
    role === "embedded"
      ? observeRedirector(createRedirector({ config, hot, store, now: Date.now, countryLookup: geo.country, webhooks, clickQueue: clickWriter ?? hot, clickBuffer: EMBEDDED_CLICK_BATCH }), ops)
      : null;
  // Also answers /healthz, /readyz and /metrics, and logs one line per request (none per redirect).
  const handleControl = observeControl((req: Request) => control.app.handle(req), ops);

  const server = await exitOnProblem("listen", config, () => Bun.serve({
    port: config.port,
    hostname: "0.0.0.0",
    // Every body is read through readBodyUpTo (1 MiB, problem+json 413); Bun's own limit would answer a bare 413.
    maxRequestBodySize: UNBOUNDED_BODY,
    fetch(req, srv) {
      const url = req.url;
      if (redirector === null || (isControlPath(url) && !redirector.domains.isCustomDomain(url))) {
        rememberPeer(req, srv.requestIP(req)?.address); // the dashboard's sign-in limit is per client address
        return handleControl(req);
      }
      return redirector.fetch(req, srv, url);
    },
    error() {
      return new Response("Internal error", { status: 500 });
    },
  }));

  console.log(`clink ${role} listening on port ${server.port} for ${config.baseUrl}; data: ${description}`);
  const keyHint = role === "embedded" ? firstKeyHint(hasAccounts) : null;
  if (keyHint) console.log(keyHint);
  const hostWarning = baseHostWarning(config, linkDomains);
  if (hostWarning && config.logLevel !== "error" && config.logLevel !== "silent") console.warn(hostWarning);

  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    ops.probes.markStopping();
    clearInterval(sessionPurge);
    await auditRetention.stop();
    await clickUpkeep?.stop();
    // Idle keep-alive connections close at once; a request still running after the grace period is cut.
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([server.stop(), new Promise((r) => (timer = setTimeout(r, STOP_GRACE_MS)))]);
    clearTimeout(timer);
    await server.stop(true);
    await redirector?.clicks.drain(STOP_GRACE_MS);
    await consumer?.stop();
    await clickWriter?.close();
    await webhooks.drain();
    await eventWebhooks.stop();
    await hot.close();
    await store.close();
    process.exit(0);
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
}

await main();

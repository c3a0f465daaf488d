/**
 * Issue #20's ingestion figure, shared by `npm run bench:consumer` (bench/consumer.ts) and npm run bench's case 9:
 * the scale-mode click path behind the redirector in one process, without HTTP. Clicks are queued in real Redis as the
 * redirector queues them (1,024 per stream entry), then the control plane's click drain reads them, asks the Redis
 * VisitorLedger for first visits and writes them, every dimension recorded, to real Postgres. The CPU each click
 * costs the consumer, the Postgres backends and Redis while they are drained is read from /proc (a service not
 * running on this machine counts as 0); Postgres's background writers (WAL writer, checkpointer) are not counted, nor
 * backends serving other processes (other tests on the same database). Redis is one process for everyone: what
 * others ask of it meanwhile counts. Each run works in its own schema and key prefix, both removed at the end.
 */
import { Redis } from "ioredis";
import postgres from "postgres";
import { ClickDrain } from "../../control/clicks/drain.ts";
import { loadConfig } from "../../shared/config.ts";
import { openStorage } from "../../shared/adapters/open.ts";
import { openGeoLookups } from "../../shared/facts/geo.ts";
import { newLinkRecord } from "../../shared/link.ts";
import type { ClickEvent, ClickIntake } from "../../shared/ports.ts";
import { processCpuSeconds } from "./procfs.ts";
import { deleteKeys, servicePids } from "./services.ts";
import { clickMaker, zipfSampler } from "./traffic.ts";

export const PER_ENTRY = 1_024; // the redirector's batch (redirector/click-buffer.ts)
/**
 * Clicks drained before the measured run: two full consumer reads (CONSUMER_POLICY.batchSize), so the JIT has
 * compiled the drain's hot functions. A consumer runs for days; what it spends compiling is paid once, in its first
 * seconds (4 entries of warm-up left about 2 µs per click of JIT work in a 200,000-click figure, 0.9 µs at 800,000).
 */
export const WARM_CLICKS = 80 * PER_ENTRY;

export type TrafficKind = "spread" | "zipf";

export interface Traffic {
  name: TrafficKind;
  links: number;
  clicks: number;
  /** Clicks drained before the measured run (default WARM_CLICKS; the smoke run takes a few entries). */
  warmClicks?: number;
}

/** Issue #20's targets: total CPU per click (consumer + Postgres + Redis), µs. */
export const INGESTION_TARGET_US: Record<TrafficKind, number> = { spread: 8, zipf: 3 };

/** Which link click i goes to: every link in turn, or Zipf-distributed (s = 1: a few hot links, a long tail). */
function picker(t: Traffic): (i: number, random: () => number) => number {
  if (t.name === "spread") return (i) => i % t.links;
  const zipf = zipfSampler(t.links, 1);
  return (_i, random) => zipf(random());
}

export interface ConsumerFigure {
  traffic: string;
  links: number;
  clicks: number;
  /** CPU per click, µs. */
  consumer: number;
  postgres: number;
  redis: number;
  total: number;
  targetUs: number;
  /** Wall time of the drain, s. */
  seconds: number;
  /** The consumer's CPU per click by where it went (µs); convert: everything outside the other three. */
  consumerSplit: { queue: number; ledger: number; store: number; convert: number };
}

/** Wraps an async call so the process CPU it takes (until its answer is handled) adds to `into[key]` (µs). */
function timed<K extends string, A extends unknown[], R>(into: Record<K, number>, key: K, call: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    const c = process.cpuUsage();
    try {
      return await call(...args);
    } finally {
      const d = process.cpuUsage(c);
      into[key] += d.user + d.system;
    }
  };
}

/** The bench's link ids: `bench00000000` on. */
export const benchLinkIds = (n: number): string[] => Array.from({ length: n }, (_, i) => `bench${String(i).padStart(8, "0")}`);

/**
 * Queues clicks `from` to `to` of the run as the redirector queues them, PER_ENTRY to a stream entry (clink's
 * ClickQueue.enqueueClicks: the same entries for clink and the ingestion floor, bench/lib/ingestion-floor.ts).
 * The same seed and start time for every queuer of the same traffic, so both drain the same clicks.
 */
export function trafficQueuer(t: Traffic, ids: string[], addresses: string[], queue: Pick<ClickIntake, "enqueueClicks">): (from: number, to: number) => Promise<void> {
  const make = clickMaker({ linkIds: ids, pickLink: picker(t), addresses });
  const t0 = Date.now();
  return async (from, to) => {
    for (let n = from; n < to; n += PER_ENTRY) {
      const events: ClickEvent[] = [];
      for (let i = n; i < Math.min(to, n + PER_ENTRY); i++) events.push(make(i, t0 + Math.floor(i / 16)));
      await queue.enqueueClicks(events);
    }
  };
}

/** What one measured drain cost, per click (µs): the draining process, the Postgres backends serving it, Redis. */
export interface DrainCost {
  clicks: number;
  consumer: number;
  postgres: number;
  redis: number;
  total: number;
  seconds: number;
}

/**
 * Runs `drainOnce` until it reads nothing and reads the CPU it cost: this process's (process.cpuUsage), the
 * Postgres backends serving this process's connections and Redis (/proc). Checks that `t.clicks` were drained.
 */
export async function measureDrain(t: Traffic, redis: Redis, admin: postgres.Sql, drainOnce: () => Promise<number>, afterDrain?: () => Promise<unknown>): Promise<DrainCost> {
  // Listed before and after: a pool may open a backend during the run, whose CPU then all counts.
  const listPids = servicePids(redis, admin, true);
  const cpuByPid = async () => new Map((await listPids()).map((p) => [p.pid, { name: p.name, us: (processCpuSeconds(p.pid) ?? 0) * 1e6 }]));
  const before = await cpuByPid();
  const own = process.cpuUsage();
  const started = performance.now();
  let written = 0;
  for (let n = await drainOnce(); n > 0; n = await drainOnce()) written += n;
  await afterDrain?.();
  const seconds = (performance.now() - started) / 1000;
  const mine = process.cpuUsage(own);
  const after = await cpuByPid();
  const used = (name: string) => [...after].reduce((sum, [pid, p]) => sum + (p.name === name ? p.us - (before.get(pid)?.us ?? 0) : 0), 0);
  if (written !== t.clicks) throw new Error(`${t.name}: drained ${written} clicks of ${t.clicks}`);
  const per = (us: number) => us / written;
  const consumer = per(mine.user + mine.system), pg = per(used("Postgres")), rd = per(used("Redis"));
  return { clicks: written, consumer, postgres: pg, redis: rd, total: consumer + pg + rd, seconds };
}

/** Queues `t.clicks` realistic clicks, drains them into a fresh schema and reports the CPU each click cost. */
export async function measureIngestion(t: Traffic, addresses: string[], services: { databaseUrl: string; redisUrl: string }): Promise<ConsumerFigure> {
  const { databaseUrl, redisUrl } = services;
  const tag = `${process.pid}_${t.name}_${t.links}`;
  const schema = `clink_bench_consumer_${tag}`;
  const prefix = `clinkbench-consumer-${tag}`;
  const config = loadConfig({ DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, DATABASE_SCHEMA: schema, REDIS_PREFIX: prefix, LOG_LEVEL: "error" });
  const { store, hot, visitors } = await openStorage(config, { poolSize: 2 });
  const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    await store.migrate();
    await store.createAccount({ id: "bench", email: "bench@example.com", passwordHash: "x", createdAt: 0 });
    const ids = benchLinkIds(t.links);
    const domain = config.defaultDomain;
    for (let i = 0; i < ids.length; i += 1_000) {
      await store.insertLinks(ids.slice(i, i + 1_000).map((id) => newLinkRecord({ id, accountId: "bench", domain, slug: id, target: "https://example.com/", createdAt: 0 })));
    }
    const enqueue = trafficQueuer(t, ids, addresses, hot);
    const geo = await openGeoLookups();
    // The consumer's CPU split by where it goes: reading and acknowledging the stream, asking the ledger, writing to
    // the store (the calls' own CPU in this process: statements built, answers parsed), and the rest (conversion:
    // User-Agent, GeoIP, referrer host; visitor hashing; the loop).
    const split = { queue: 0, ledger: 0, store: 0 };
    const queue = { readClicks: timed(split, "queue", hot.readClicks.bind(hot)), ackBatches: timed(split, "queue", hot.ackBatches.bind(hot)) };
    const ledger = { ...visitors!, visitorKey: visitors!.visitorKey.bind(visitors), firstVisits: timed(split, "ledger", visitors!.firstVisits.bind(visitors)), forgetVisits: visitors!.forgetVisits.bind(visitors) };
    const sink = { recordClicks: timed(split, "store", store.recordClicks.bind(store)) };
    const drain = new ClickDrain(queue, sink, { consumerName: "bench", placeLookup: geo.place, visitors: ledger, onError: (e) => console.error(e) });
    // A few entries first, not measured: the first statement of each kind is planned and cached.
    const warmClicks = t.warmClicks ?? WARM_CLICKS;
    await enqueue(0, warmClicks);
    let warm = 0;
    for (let n = await drain.drainOnce(); n > 0; n = await drain.drainOnce()) warm += n;
    if (warm !== warmClicks) throw new Error(`${t.name}: the warm-up drained ${warm} clicks of ${warmClicks}`);
    // The control process folds busy link-hours into their digests every minute (control/clicks/maintenance.ts): the
    // measured run ends with a fold of what it wrote, counted as a store call (more often than a minute's traffic
    // at this rate would see it: the digest rows a fold adds are per value, so fewer folds cost less).
    const fold = timed(split, "store", () => store.foldBusyHours());
    await fold();
    await enqueue(warmClicks, warmClicks + t.clicks);
    Object.assign(split, { queue: 0, ledger: 0, store: 0 });
    const m = await measureDrain(t, redis, admin, () => drain.drainOnce(), fold);
    const written = m.clicks, seconds = m.seconds;
    const per = (us: number) => us / written;
    const f = { consumer: m.consumer, postgres: m.postgres, redis: m.redis };
    const consumerSplit = { queue: per(split.queue), ledger: per(split.ledger), store: per(split.store), convert: 0 };
    consumerSplit.convert = f.consumer - consumerSplit.queue - consumerSplit.ledger - consumerSplit.store;
    return { traffic: t.name, links: t.links, clicks: written, ...f, total: m.total, targetUs: INGESTION_TARGET_US[t.name], seconds, consumerSplit };
  } finally {
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await deleteKeys(redis, prefix);
    await admin.end();
    redis.disconnect();
    await hot.close();
    await store.close();
  }
}

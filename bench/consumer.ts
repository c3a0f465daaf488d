/**
 * `npm run bench:consumer`: the scale-mode click path behind the redirector, in one process and without HTTP
 * (issue #20's ingestion targets; bench/lib/ingestion.ts). Clicks are queued in real Redis as the redirector queues
 * them (1,024 per stream entry), then the control plane's click drain reads them, asks the Redis VisitorLedger for
 * first visits and writes them, every dimension recorded, to real Postgres (raw click log per batch, rollup cells as
 * cell sets: docs/adr/0012). It reports the CPU each click costs the consumer, the Postgres backends serving this
 * process and Redis while they are drained (read from /proc: a service not running on this machine counts as 0;
 * Redis serves everyone, so others' use of it meanwhile counts), for two kinds of traffic:
 *
 * - spread: 10,000 links in turn, so a stream entry of 1,024 clicks holds about one click per link
 *   (target: at most 8 µs of CPU per click, consumer + Postgres + Redis);
 * - zipf: 100,000 links, Zipf-distributed (s = 1: a few hot links, a long tail) (target: at most 3 µs).
 *
 * Both with realistic clicks (bench/lib/traffic.ts): a few dozen real User-Agents (crawlers among them),
 * referrers Zipf-distributed over 200 hosts (35% direct), addresses the GeoIP database places in many countries,
 * 8% through QR codes, A/B variants and rules on some links.
 *
 *   npm run bench:consumer                                   both, 200,000 and 500,000 clicks (≤ 60 s on 2 cores)
 *   npm run bench:consumer -- --only zipf --clicks 1000000   one kind, more clicks
 *   options: --spread-links N, --zipf-links N, --clicks N (both kinds), --only spread|zipf, --no-floor
 *
 * After each kind, the ingestion floor drains the same clicks (bench/lib/ingestion-floor.ts, docs/adr/0014): the
 * least work the requirements impose, with none of clink's code; clink's figure is stated against it.
 *
 * Needs DATABASE_URL and REDIS_URL (defaults: the local test database and Redis). Works in its own schema and
 * key prefix, both removed at the end. Postgres's background writers (WAL writer, checkpointer) are not counted.
 */
import { parseArgs } from "node:util";
import { measureIngestion, type ConsumerFigure, type Traffic } from "./lib/ingestion.ts";
import { measureFloor, type FloorFigure } from "./lib/ingestion-floor.ts";
import { againstFloor } from "./cases/ingestion.ts";
import { placedAddresses } from "./lib/traffic.ts";

const { values } = parseArgs({
  options: {
    "spread-links": { type: "string" },
    "zipf-links": { type: "string" },
    clicks: { type: "string" },
    only: { type: "string" },
    "no-floor": { type: "boolean" },
  },
});
const services = {
  databaseUrl: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
  redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
};
const TRAFFIC: Traffic[] = [
  { name: "spread", links: Number(values["spread-links"] ?? 10_000), clicks: Number(values.clicks ?? 200_000) },
  { name: "zipf", links: Number(values["zipf-links"] ?? 100_000), clicks: Number(values.clicks ?? 500_000) },
];

const line = (f: ConsumerFigure) =>
  `${f.traffic.padEnd(6)} ${String(f.links).padStart(7)} links, ${f.clicks} clicks in ${f.seconds.toFixed(1)} s; CPU per click: consumer ${f.consumer.toFixed(2)} µs, ` +
  `Postgres ${f.postgres.toFixed(2)} µs, Redis ${f.redis.toFixed(2)} µs = ${f.total.toFixed(2)} µs (target ≤ ${f.targetUs} µs: ${f.total <= f.targetUs ? "met" : "MISSED"})\n` +
  `       consumer's share: conversion and hashing ${f.consumerSplit.convert.toFixed(2)} µs, store calls (a fold of busy link-hours included) ${f.consumerSplit.store.toFixed(2)} µs, ` +
  `ledger calls ${f.consumerSplit.ledger.toFixed(2)} µs, stream reads and acks ${f.consumerSplit.queue.toFixed(2)} µs`;

const floorLine = (c: ConsumerFigure, f: FloorFigure) =>
  `       floor  ${f.clicks} clicks in ${f.seconds.toFixed(1)} s; CPU per click: consumer ${f.consumer.toFixed(2)} µs, Postgres ${f.postgres.toFixed(2)} µs, ` +
  `Redis ${f.redis.toFixed(2)} µs = ${f.total.toFixed(2)} µs\n` +
  `       floor consumer's share: stream reads, parse and acks ${f.split.queue.toFixed(2)} µs, dimensions, cells and visitor hashing ${f.split.convert.toFixed(2)} µs, ` +
  `ledger calls ${f.split.ledger.toFixed(2)} µs, statements ${f.split.store.toFixed(2)} µs\n` +
  `       ${againstFloor(c, f)} Consumer ${(c.consumer / f.consumer).toFixed(1)}×, Postgres ${(c.postgres / f.postgres).toFixed(1)}×, Redis ${(c.redis / f.redis).toFixed(1)}× the floor's.`;

const { addresses, countries } = await placedAddresses(3_000);
console.log(`traffic: ${addresses.length} addresses in ${countries} countries; realistic User-Agents, referrers, QR share, A/B and rules (bench/lib/traffic.ts)`);
for (const t of TRAFFIC) {
  if (values.only && values.only !== t.name) continue;
  const clink = await measureIngestion(t, addresses, services);
  console.log(line(clink));
  if (!values["no-floor"]) console.log(floorLine(clink, await measureFloor(t, addresses, services)));
}

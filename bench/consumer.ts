/**
 * `npm run bench:consumer`: the scale-mode click path behind the redirector, in one process and without HTTP.
 * Clicks are queued in real Redis as the redirector queues them (1,024 per stream entry), then the control
 * plane's click drain writes them to real Postgres. It reports the CPU each click costs the consumer, the
 * Postgres backend and Redis while they are drained (read from /proc: a service not running on this machine
 * counts as 0), for traffic on one link and for traffic spread over many (about one click per link per entry).
 *
 *   npm run bench:consumer                       1 and 10,000 links, 200,000 clicks each
 *   npm run bench:consumer -- --links 1,500 --clicks 100000
 *
 * Needs DATABASE_URL and REDIS_URL (defaults: the local test database and Redis). Works in its own schema and
 * key prefix, both removed at the end.
 */
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import postgres from "postgres";
import { ClickDrain } from "../control/clicks/drain.ts";
import { PostgresStore } from "../shared/adapters/postgres/store.ts";
import { createRedisHotState } from "../shared/adapters/redis/hot-state.ts";
import { openCountryLookup } from "../shared/facts/geo.ts";
import { newLinkRecord, type LinkRecord } from "../shared/link.ts";
import type { ClickEvent } from "../shared/ports.ts";
import { processCpuSeconds } from "./lib/procfs.ts";
import { servicePids } from "./lib/services.ts";

const { values } = parseArgs({ options: { links: { type: "string" }, clicks: { type: "string" } } });
const LINK_COUNTS = (values.links ?? "1,10000").split(",").map(Number);
const CLICKS = Number(values.clicks ?? 200_000);
const PER_ENTRY = 1_024; // the redirector's batch (redirector/click-buffer.ts)
const databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";

function link(id: string): LinkRecord {
  return newLinkRecord({ id, accountId: "bench", domain: "bench", slug: id, target: "https://example.com/", createdAt: 0 });
}

async function run(links: number): Promise<string> {
  const tag = `${process.pid}_${links}`;
  const schema = `clink_bench_consumer_${tag}`;
  const prefix = `clinkbench-consumer-${tag}`;
  const store = new PostgresStore(databaseUrl, { schema, max: 2 });
  const hot = createRedisHotState({ url: redisUrl, prefix });
  const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    await store.migrate();
    await store.createAccount({ id: "bench", email: "bench@example.com", passwordHash: "x", createdAt: 0 });
    const ids = Array.from({ length: links }, (_, i) => `bench${String(i).padStart(8, "0")}`);
    for (let i = 0; i < ids.length; i += 500) await store.insertLinks(ids.slice(i, i + 500).map(link));
    const t0 = Date.now();
    for (let n = 0; n < CLICKS; n += PER_ENTRY) {
      const events: ClickEvent[] = [];
      for (let i = n; i < Math.min(CLICKS, n + PER_ENTRY); i++) {
        events.push({ id: `c${i}`, linkId: ids[i % links]!, ts: t0 + i, ua: UA, ip: "81.2.69.142", country: null, referrer: null, variant: null });
      }
      await hot.enqueueClicks(events);
    }
    const consumer = new ClickDrain(hot, store, { consumerName: "bench", countryLookup: await openCountryLookup(), onError: (e) => console.error(e) });
    await consumer.drainOnce(); // the first statement of each kind is planned and cached
    const pids = await servicePids(redis, admin)();
    const cpuOf = (name: string) => pids.filter((p) => p.name === name).reduce((sum, p) => sum + (processCpuSeconds(p.pid) ?? 0) * 1e6, 0);
    const services = () => ({ postgres: cpuOf("Postgres"), redis: cpuOf("Redis") });
    const before = services();
    const own = process.cpuUsage();
    let written = 0;
    for (let n = await consumer.drainOnce(); n > 0; n = await consumer.drainOnce()) written += n;
    const mine = process.cpuUsage(own);
    const after = services();
    const per = (us: number) => (us / written).toFixed(2);
    return `${String(links).padStart(6)} links: ${written} clicks; CPU per click: consumer ${per(mine.user + mine.system)} µs, ` +
      `Postgres ${per(after.postgres - before.postgres)} µs, Redis ${per(after.redis - before.redis)} µs`;
  } finally {
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await admin.end();
    redis.disconnect();
    await hot.close();
    await store.close();
  }
}

for (const links of LINK_COUNTS) console.log(await run(links));

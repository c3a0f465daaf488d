/**
 * The scale-mode click consumer against a real Redis stream: how it sizes its Postgres batches (a pause after a
 * partial batch lets the next one fill up) and how it looks up countries (once per distinct address per batch).
 * The sink records what it is given: the consumer, not the store, is under test here.
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { Redis } from "ioredis";
import { ClickConsumer } from "../../control/clicks/consumer.ts";
import { batchCountryLookup } from "../../control/clicks/convert.ts";
import { createRedisHotState, type RedisHotState } from "../../shared/adapters/redis/hot-state.ts";
import type { ClickEvent, StoredClick } from "../../shared/ports.ts";

const url = process.env.REDIS_URL_TEST || process.env.REDIS_URL || "redis://127.0.0.1:6379";
const prefixes: string[] = [];
const open: { hot: RedisHotState; consumer: ClickConsumer }[] = [];

const T = 1_893_499_200_000;
/** Click `i` is served at T + i, which tells the stored clicks apart (a StoredClick keeps no click id). */
function click(i: number, ip = "8.8.8.8"): ClickEvent {
  return { id: `t-${i}`, linkId: "L1", ts: T + i, ua: "Mozilla/5.0", ip, country: null, referrer: null, variant: null };
}

async function setUp(o: { batchSize: number; lingerMs: number; lookup?: (ip: string) => string | null }) {
  const prefix = `clinktest-${crypto.randomUUID().slice(0, 8)}`;
  prefixes.push(prefix);
  const hot = createRedisHotState({ url, prefix });
  await hot.ping();
  const batches: StoredClick[][] = [];
  const consumer = new ClickConsumer(hot, { recordClicks: async (c) => void batches.push(c) }, {
    consumerName: "c1", batchSize: o.batchSize, lingerMs: o.lingerMs, idleMs: 20, countryLookup: o.lookup ?? null,
  });
  open.push({ hot, consumer });
  return { hot, consumer, batches };
}

async function until(check: () => boolean, ms = 5_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await Bun.sleep(10);
  }
}

afterEach(async () => {
  for (const { hot, consumer } of open.splice(0)) {
    await consumer.stop(1_000);
    await hot.close();
  }
});

afterAll(async () => {
  const admin = new Redis(url, { maxRetriesPerRequest: 1 });
  for (const p of prefixes) {
    const keys = await admin.keys(`${p}:*`);
    if (keys.length) await admin.del(...keys);
  }
  admin.disconnect();
});

describe("ClickConsumer", () => {
  test("after a partial batch it pauses (lingerMs), so clicks queued meanwhile are written in one statement", async () => {
    const { hot, consumer, batches } = await setUp({ batchSize: 1_000, lingerMs: 400 });
    await hot.enqueueClicks([click(1)]);
    consumer.start();
    await until(() => batches.length === 1);
    // Three separate stream entries while the consumer lingers: one write, not three.
    for (let i = 2; i <= 4; i++) await hot.enqueueClicks([click(i)]);
    await until(() => batches.flat().length === 4);
    expect(batches.map((b) => b.map((c) => c.ts - T))).toEqual([[1], [2, 3, 4]]);
    // Each stream entry is its own batch for the store (what makes a redelivery harmless).
    expect(new Set(batches.flat().map((c) => c.batch)).size).toBe(4);
  });

  test("a full batch is followed at once by the next one (no pause under a backlog)", async () => {
    const { hot, consumer, batches } = await setUp({ batchSize: 128, lingerMs: 10_000 });
    // Four entries of 64 clicks: each read takes two of them, a full batch.
    for (let e = 0; e < 4; e++) await hot.enqueueClicks(Array.from({ length: 64 }, (_, i) => click(e * 64 + i)));
    consumer.start();
    await until(() => batches.flat().length === 256, 3_000);
    expect(batches.map((b) => b.length)).toEqual([128, 128]);
    expect(batches.flat().map((c) => c.ts - T)).toEqual(Array.from({ length: 256 }, (_, i) => i));
    expect([...Map.groupBy(batches.flat(), (c) => c.batch).values()].map((b) => b.length)).toEqual([64, 64, 64, 64]);
  });

  test("looks up each distinct address once per batch", async () => {
    const asked: string[] = [];
    const lookup = (ip: string) => (asked.push(ip), ip === "8.8.8.8" ? "US" : "DE");
    const { hot, consumer, batches } = await setUp({ batchSize: 100, lingerMs: 10, lookup });
    await hot.enqueueClicks([click(1), click(2), click(3, "1.1.1.1"), click(4), click(5, "1.1.1.1")]);
    consumer.start();
    await until(() => batches.flat().length === 5);
    expect(batches.flat().map((c) => c.country)).toEqual(["US", "US", "DE", "US", "DE"]);
    expect(asked.sort()).toEqual(["1.1.1.1", "8.8.8.8"]);
  });
});

describe("ClickConsumer and a batch the store refuses", () => {
  test("the other batches of the read are written, the refused one is counted and acknowledged", async () => {
    const prefix = `clinktest-${crypto.randomUUID().slice(0, 8)}`;
    prefixes.push(prefix);
    const hot = createRedisHotState({ url, prefix });
    const written: StoredClick[][] = [];
    const errors: unknown[] = [];
    // Refuses (as a store refuses bad data) every write that holds a click served at T + 2.
    const sink = {
      recordClicks: async (c: StoredClick[]) => {
        if (c.some((x) => x.ts === T + 2)) throw new RangeError("refused");
        written.push(c);
      },
    };
    const consumer = new ClickConsumer(hot, sink, { consumerName: "c1", batchSize: 100, countryLookup: null, onError: (e) => errors.push(e) });
    open.push({ hot, consumer });
    await hot.enqueueClicks([click(1)]);
    await hot.enqueueClicks([click(2), click(3)]);
    await hot.enqueueClicks([click(4)]);
    let read = 0;
    for (let n = await consumer.drainOnce(); n > 0; n = await consumer.drainOnce()) read += n;
    expect(read).toBe(4);
    expect(written.flat().map((c) => c.ts - T)).toEqual([1, 4]);
    expect(consumer.rejected).toBe(2);
    expect(errors).toHaveLength(1);
    expect(await hot.queueDepth()).toBe(0);
  });
});

describe("batchCountryLookup", () => {
  test("memoises per instance, including addresses without a country", () => {
    let calls = 0;
    const lookup = batchCountryLookup((ip) => (calls++, ip === "10.0.0.1" ? null : "FR"))!;
    expect([lookup("10.0.0.1"), lookup("10.0.0.1"), lookup("2.2.2.2"), lookup("2.2.2.2")]).toEqual([null, null, "FR", "FR"]);
    expect(calls).toBe(2);
    expect(batchCountryLookup(null)).toBeNull();
  });
});

/**
 * The click drain loop (control/clicks/drain.ts) that both the scale-mode consumer and the embedded writer thread
 * run, on a real Redis stream and on the memory queue: how it sizes its store batches (a pause after a partial
 * read lets the next one fill up), how it looks up places (once per distinct address, remembered across reads), how it marks first
 * visits (once per link, visitor and day, forgotten again when a write fails), how it isolates a batch the store
 * refuses and retries a store that is down. The sink records what it is given: the loop, not the store, is under
 * test here.
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { ClickDrain, type ClickDrainOptions, type ClickSink } from "../../control/clicks/drain.ts";
import { batchLookups } from "../../control/clicks/convert.ts";
import { MemoryClickQueue } from "../../shared/adapters/memory/click-queue.ts";
import { MemoryVisitorLedger } from "../../shared/adapters/memory/visitors.ts";
import { NOWHERE } from "../../shared/facts/geo.ts";
import { createRedisHotState } from "../../shared/adapters/redis/hot-state.ts";
import { deleteKeys } from "../helpers/redis-keys.ts";
import type { ClickEvent, ClickQueue, StoredClick } from "../../shared/ports.ts";

const url = process.env.REDIS_URL_TEST || process.env.REDIS_URL || "redis://127.0.0.1:6379";
const prefixes: string[] = [];
const open: { queue: ClickQueue & { close?: () => Promise<void> }; drain: ClickDrain }[] = [];

const T = 1_893_499_200_000;
/** Click `i` is served at T + i, which tells the stored clicks apart (a StoredClick keeps no click id). */
function click(i: number, ip = "8.8.8.8", linkId = "L1"): ClickEvent {
  return { id: `t-${i}`, linkId, ts: T + i, ua: "Mozilla/5.0", ip, country: null, referrer: null, variant: null, rule: null, qr: false };
}

const queues: { name: string; open: () => Promise<ClickQueue & { close?: () => Promise<void> }> }[] = [
  { name: "memory", open: async () => new MemoryClickQueue() },
  {
    name: "Redis",
    open: async () => {
      const prefix = `clinktest-${crypto.randomUUID().slice(0, 8)}`;
      prefixes.push(prefix);
      const hot = createRedisHotState({ url, prefix });
      await hot.ping();
      return hot;
    },
  },
];

type Policy = { batchSize: number; lingerMs: number; idleMs?: number };

async function setUp(openQueue: () => Promise<ClickQueue>, policy: Policy, o: Partial<ClickDrainOptions> & { sink?: ClickSink } = {}) {
  const queue = await openQueue();
  const batches: StoredClick[][] = [];
  const { sink = { recordClicks: async (c: StoredClick[]) => void batches.push(c) }, ...options } = o;
  const drain = new ClickDrain(queue, sink, {
    consumerName: "c1", placeLookup: null, visitors: new MemoryVisitorLedger(), ...options,
    policy: { idleMs: 20, retryFirstMs: 20, retryMaxMs: 100, ...policy },
  });
  open.push({ queue, drain });
  return { queue, drain, batches };
}

async function until(check: () => boolean | Promise<boolean>, ms = 5_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await Bun.sleep(10);
  }
}

afterEach(async () => {
  for (const { queue, drain } of open.splice(0)) {
    await drain.stop(1_000);
    await queue.close?.();
  }
});

afterAll(() => deleteKeys(prefixes, url));

for (const q of queues) {
  describe(`ClickDrain on the ${q.name} queue`, () => {
    test("after a partial read it pauses (lingerMs), so clicks queued meanwhile are written in one statement", async () => {
      const { queue, drain, batches } = await setUp(q.open, { batchSize: 1_000, lingerMs: 400 });
      await queue.enqueueClicks([click(1)]);
      drain.start();
      await until(() => batches.length === 1);
      // Three separate batches while the drain lingers: one write, not three.
      for (let i = 2; i <= 4; i++) await queue.enqueueClicks([click(i)]);
      await until(() => batches.flat().length === 4);
      expect(batches.map((b) => b.map((c) => c.ts - T))).toEqual([[1], [2, 3, 4]]);
      // Each queued batch is its own batch for the store (what makes a redelivery harmless).
      expect(new Set(batches.flat().map((c) => c.batch)).size).toBe(4);
    });

    test("a full read is followed at once by the next one (no pause under a backlog)", async () => {
      const { queue, drain, batches } = await setUp(q.open, { batchSize: 128, lingerMs: 10_000 });
      // Four batches of 64 clicks: each read takes two of them, a full read.
      for (let e = 0; e < 4; e++) await queue.enqueueClicks(Array.from({ length: 64 }, (_, i) => click(e * 64 + i)));
      drain.start();
      await until(() => batches.flat().length === 256, 3_000);
      expect(batches.map((b) => b.length)).toEqual([128, 128]);
      expect(batches.flat().map((c) => c.ts - T)).toEqual(Array.from({ length: 256 }, (_, i) => i));
      expect([...Map.groupBy(batches.flat(), (c) => c.batch).values()].map((b) => b.length)).toEqual([64, 64, 64, 64]);
    });

    test("looks up each distinct address once, across reads", async () => {
      const asked: string[] = [];
      const placeLookup = (ip: string) => (asked.push(ip), { country: ip === "8.8.8.8" ? "US" : "DE", region: null, city: null });
      const { queue, drain, batches } = await setUp(q.open, { batchSize: 100, lingerMs: 10 }, { placeLookup });
      await queue.enqueueClicks([click(1), click(2), click(3, "1.1.1.1"), click(4), click(5, "1.1.1.1")]);
      drain.start();
      await until(() => batches.flat().length === 5);
      await queue.enqueueClicks([click(6, "1.1.1.1"), click(7, "3.3.3.3"), click(8)]);
      await until(() => batches.flat().length === 8);
      expect(batches.length).toBe(2);
      expect(batches.flat().map((c) => c.dims.country)).toEqual(["US", "US", "DE", "US", "DE", "DE", "DE", "US"]);
      expect(asked.sort()).toEqual(["1.1.1.1", "3.3.3.3", "8.8.8.8"]);
    });

    test("marks a first visit once per (link, visitor, UTC day), across batches", async () => {
      const { queue, drain, batches } = await setUp(q.open, { batchSize: 100, lingerMs: 10 });
      const nextDay = (c: ClickEvent) => ({ ...c, ts: c.ts + 86_400_000 });
      // Visitor A twice on L1 and once on L2, visitor B (another address) on L1; then a second batch.
      await queue.enqueueClicks([click(1), click(2), click(3, "8.8.8.8", "L2"), click(4, "1.1.1.1")]);
      drain.start();
      await until(() => batches.flat().length === 4);
      await queue.enqueueClicks([click(5), click(6, "1.1.1.1"), click(7, "9.9.9.9"), nextDay(click(8))]);
      await until(() => batches.flat().length === 8);
      const first = batches.flat().map((c) => [c.ts - T, c.firstVisit]);
      expect(first).toEqual([[1, true], [2, false], [3, true], [4, true], [5, false], [6, false], [7, true], [86_400_008, true]]);
    });

    /**
     * Two reads through a MemoryVisitorLedger that records the pairs of each call: one visitor's run of clicks, another
     * visitor between, the first again; then both visitors and a new one.
     */
    const twoReads = async (options: Partial<ClickDrainOptions>) => {
      const ledger = new MemoryVisitorLedger();
      const asked: string[][] = [];
      const firstVisits = ledger.firstVisits.bind(ledger);
      ledger.firstVisits = async (day, pairs) => (asked.push([...pairs]), firstVisits(day, pairs));
      const { queue, drain, batches } = await setUp(q.open, { batchSize: 100, lingerMs: 10 }, { visitors: ledger, ...options });
      await queue.enqueueClicks([click(1), click(2), click(3, "1.1.1.1"), click(4), click(5)]);
      drain.start();
      await until(() => batches.flat().length === 5);
      await queue.enqueueClicks([click(6), click(7, "1.1.1.1"), click(8, "9.9.9.9")]);
      await until(() => batches.flat().length === 8);
      return { asked: asked.map((pairs) => pairs.length), firstVisits: batches.flat().map((c) => c.firstVisit) };
    };
    const FIRST_VISITS = [true, false, true, false, false, false, false, true];

    test("remembering first visits (the writer thread), the ledger is asked once per distinct pair of a read, and not again for pairs this drain saw first", async () => {
      // Two pairs asked in the first read; in the second both were first here, so only the new visitor is asked.
      expect(await twoReads({ rememberFirstVisits: 1_000 })).toEqual({ asked: [2, 1], firstVisits: FIRST_VISITS });
    });

    test("remembering nothing (scale mode, the default), every pair but a visitor's run is asked and the ledger tells repeats apart: the same first visits", async () => {
      // The run of clicks 1-2 is asked once; the first visitor again after another one is asked again.
      expect(await twoReads({})).toEqual({ asked: [3, 3], firstVisits: FIRST_VISITS });
    });

    test("a write that fails forgets the read's first visits, so the retry marks them again", async () => {
      let failures = 1;
      const written: StoredClick[][] = [];
      const sink = {
        recordClicks: async (c: StoredClick[]) => {
          if (failures-- > 0) throw new Error("connection refused");
          written.push(c);
        },
      };
      const { queue, drain } = await setUp(q.open, { batchSize: 100, lingerMs: 10 }, { sink });
      await queue.enqueueClicks([click(1), click(2, "1.1.1.1"), click(3)]);
      drain.start();
      await until(() => written.length === 1);
      expect(written[0]!.map((c) => c.firstVisit)).toEqual([true, true, false]);
    });

    test("a batch the store refuses: the read's other batches are written, the refused one counted and acknowledged", async () => {
      const written: StoredClick[][] = [];
      const errors: Error[] = [];
      const reports: number[][] = [];
      // Refuses (as a store refuses bad data) every write that holds a click served at T + 2.
      const sink = {
        recordClicks: async (c: StoredClick[]) => {
          if (c.some((x) => x.ts === T + 2)) throw new RangeError("refused");
          written.push(c);
        },
      };
      const { queue, drain } = await setUp(q.open, { batchSize: 100, lingerMs: 10 }, {
        sink, onError: (e) => errors.push(e), onDrained: (r) => reports.push([r.read, r.written, r.rejected, r.oldestTs - T]),
      });
      await queue.enqueueClicks([click(1)]);
      await queue.enqueueClicks([click(2), click(3)]);
      await queue.enqueueClicks([click(4)]);
      let read = 0;
      for (let n = await drain.drainOnce(); n > 0; n = await drain.drainOnce()) read += n;
      expect(read).toBe(4);
      expect(written.flat().map((c) => c.ts - T)).toEqual([1, 4]);
      expect(drain.rejected).toBe(2);
      // Per read (Redis may take the batches in more than one): read = written + refused; the oldest written is click 1.
      const sum = (i: number) => reports.reduce((n, r) => n + r[i]!, 0);
      expect([sum(0), sum(1), sum(2)]).toEqual([4, 2, 2]);
      expect(reports[0]![3]).toBe(1);
      expect(errors.map((e) => e.message)).toEqual(["2 clicks refused: refused"]);
      expect(await queue.queueDepth()).toBe(0);
    });

    test("while the store is down nothing is acknowledged; the same clicks are written once it is back", async () => {
      let failures = 2;
      const written: StoredClick[][] = [];
      const errors: string[] = [];
      const sink = {
        recordClicks: async (c: StoredClick[]) => {
          if (failures-- > 0) throw new Error("connection refused");
          written.push(c);
        },
      };
      const { queue, drain } = await setUp(q.open, { batchSize: 100, lingerMs: 10 }, { sink, onError: (e) => errors.push(e.message) });
      await queue.enqueueClicks([click(1), click(2)]);
      drain.start();
      await until(() => written.length === 1);
      expect(written[0]!.map((c) => c.ts - T)).toEqual([1, 2]);
      // Backing off: 20 ms, then 40 ms (retryFirstMs, doubled).
      expect(errors).toEqual(["connection refused (retrying in 20 ms)", "connection refused (retrying in 40 ms)"]);
      expect(drain.rejected).toBe(0);
      // The ack follows the write: wait for it rather than race it.
      let depth = -1;
      await until(async () => (depth = await queue.queueDepth()) === 0);
      expect(depth).toBe(0);
    });
  });
}

describe("ClickDrain notified by its producer (the writer thread's queue)", () => {
  test("a notify while idle starts the linger, so batches posted close together share one write", async () => {
    const { queue, drain, batches } = await setUp(async () => new MemoryClickQueue(), { batchSize: 4_096, lingerMs: 150, idleMs: 60_000 });
    drain.start();
    await Bun.sleep(30); // idle: the queue was empty, and without a notify it would not be read for a minute
    for (let i = 1; i <= 3; i++) {
      await queue.enqueueClicks([click(i)]);
      drain.notify(1);
      await Bun.sleep(10);
    }
    await until(() => batches.length === 1);
    expect(batches.map((b) => b.map((c) => c.ts - T))).toEqual([[1, 2, 3]]);
  });

  test("a notify that completes a full batch ends the linger at once", async () => {
    const { queue, drain, batches } = await setUp(async () => new MemoryClickQueue(), { batchSize: 100, lingerMs: 60_000, idleMs: 60_000 });
    drain.start();
    await Bun.sleep(30);
    await queue.enqueueClicks(Array.from({ length: 60 }, (_, i) => click(i)));
    drain.notify(60); // starts a one-minute linger
    await Bun.sleep(50);
    expect(batches).toEqual([]);
    await queue.enqueueClicks(Array.from({ length: 40 }, (_, i) => click(60 + i)));
    drain.notify(40);
    await until(() => batches.length === 1, 2_000);
    expect(batches[0]).toHaveLength(100);
  });
});

describe("batchLookups", () => {
  test("memoises per instance, including addresses without a place and referrers without a host", () => {
    let calls = 0;
    const fr = { country: "FR", region: null, city: null };
    const { place } = batchLookups((ip) => (calls++, ip === "10.0.0.1" ? NOWHERE : fr));
    expect([place!("10.0.0.1"), place!("10.0.0.1"), place!("2.2.2.2"), place!("2.2.2.2")]).toEqual([NOWHERE, NOWHERE, fr, fr]);
    expect(calls).toBe(2);
    expect(batchLookups(null).place).toBeNull();
    const { referrerHost } = batchLookups(null);
    expect([referrerHost("about:blank"), referrerHost("about:blank"), referrerHost("https://A.example/x")]).toEqual([null, null, "a.example"]);
  });

  test("forgets everything once it remembers its maximum of distinct keys, then remembers again", () => {
    const asked: string[] = [];
    const { place } = batchLookups((ip) => (asked.push(ip), NOWHERE), 2);
    for (const ip of ["a", "b", "a", "b", "c", "a", "c", "a"]) place!(ip);
    expect(asked).toEqual(["a", "b", "c", "a"]);
  });
});

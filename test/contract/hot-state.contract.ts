/**
 * The HotState contract (design §2): one suite, run against every adapter (memory, Redis, Redis Cluster).
 *
 * `make()` returns an instance on the suite's current backend; two calls within one test must share that
 * backend (two redirector processes on one Redis). An adapter file may give each test a fresh backend
 * (memory: a new instance; Redis: a new key prefix) from its own `beforeEach`.
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import type { CompiledLink } from "../../shared/link.ts";
import type { ClickEvent, HotState, QueuedClick } from "../../shared/ports.ts";

const uid = () => crypto.randomUUID().slice(0, 8);

function compiled(id: string): CompiledLink {
  return {
    v: 1,
    id,
    accountId: "acc1",
    slug: `s-${id}`,
    target: "https://example.com/?utm_source=x",
    rawTarget: "https://example.com/",
    status: "active",
    expiresAt: null,
    startsAt: null,
    maxHits: 10,
    passwordHash: null,
    rules: [{ kind: "country", match: "DE", url: "https://example.de/" }],
    ab: [{ url: "https://a.example/", upTo: 0.5 }, { url: "https://b.example/", upTo: 1 }],
    needsCountry: true,
    needsDevice: false,
    webhookUrl: null,
    webhookSecret: null,
    og: { title: "T <b>", description: null, imageUrl: null },
    expiredUrl: null,
    updatedAt: 1_700_000_000_000,
  };
}

/** An event without its id, which the queue may replace (HotState.enqueueClicks). */
const withoutId = ({ id: _id, ...rest }: ClickEvent) => rest;

/** The batches of a read, each once, in order. */
const batchesOf = (read: QueuedClick[]) => [...new Set(read.map((c) => c.batch))];

function click(n: number): ClickEvent {
  return {
    id: `click-${uid()}-${n}`,
    linkId: "link1",
    ts: 1_700_000_000_000 + n,
    ua: "Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/128.0",
    ip: n % 2 ? "203.0.113.7" : null,
    country: n % 2 ? null : "FR",
    referrer: null,
    variant: n % 3 === 0 ? 1 : null,
  };
}

/** Polls until `check` holds; returns the elapsed milliseconds, or fails after `ms`. */
async function within(ms: number, check: () => boolean): Promise<number> {
  const start = performance.now();
  while (!check()) {
    if (performance.now() - start > ms) throw new Error(`condition not met within ${ms} ms`);
    await Bun.sleep(2);
  }
  return performance.now() - start;
}

export function runHotStateContract(name: string, make: () => Promise<HotState>, cleanup?: () => Promise<void>) {
  describe(`HotState contract: ${name}`, () => {
    const opened: HotState[] = [];
    const instance = async () => {
      const h = await make();
      opened.push(h);
      return h;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((h) => h.close()));
    });
    if (cleanup) afterAll(cleanup);

    /** Acknowledges everything a consumer holds, so each click test starts from an empty queue. */
    async function drain(h: HotState, consumer: string) {
      for (let batch = await h.readClicks(consumer, 1000); batch.length; batch = await h.readClicks(consumer, 1000)) {
        await h.ackBatches(batchesOf(batch));
      }
    }

    describe("link cache", () => {
      test("an unknown key is not cached (undefined)", async () => {
        const h = await instance();
        expect(await h.getLink(`d/${uid()}`)).toBeUndefined();
      });

      test("setLink then getLink returns the compiled link, also to a second instance", async () => {
        const [a, b] = [await instance(), await instance()];
        const key = `d/${uid()}`;
        const link = compiled(uid());
        await a.setLink(key, link);
        expect(await a.getLink(key)).toEqual(link);
        expect(await b.getLink(key)).toEqual(link);
      });

      test("negative cache: null is stored as 'known unknown', distinct from a miss", async () => {
        const h = await instance();
        const key = `d/${uid()}`;
        await h.setLink(key, null);
        expect(await h.getLink(key)).toBeNull();
      });

      test("entries expire after their TTL, negative ones too", async () => {
        const h = await instance();
        const [pos, neg] = [`d/${uid()}`, `d/${uid()}`];
        await h.setLink(pos, compiled(uid()), 60);
        await h.setLink(neg, null, 60);
        expect(await h.getLink(pos)).toBeDefined();
        await Bun.sleep(120);
        expect(await h.getLink(pos)).toBeUndefined();
        expect(await h.getLink(neg)).toBeUndefined();
      });

      test("setLink overwrites the previous entry", async () => {
        const h = await instance();
        const key = `d/${uid()}`;
        await h.setLink(key, null);
        const link = compiled(uid());
        await h.setLink(key, link);
        expect(await h.getLink(key)).toEqual(link);
      });

      test("invalidateLink drops the entry and reaches a second instance's listener within 100 ms", async () => {
        const [a, b] = [await instance(), await instance()];
        const key = `d/${uid()}`;
        const heard: string[] = [];
        b.onLinkInvalidated((k) => heard.push(k));
        await b.ping(); // the listener's subscription is in place
        await a.setLink(key, compiled(uid()));
        const start = performance.now();
        await a.invalidateLink(key);
        await within(100 - (performance.now() - start), () => heard.includes(key));
        expect(await a.getLink(key)).toBeUndefined();
        expect(await b.getLink(key)).toBeUndefined();
      });

      test("every invalidation listener is called, once per invalidation", async () => {
        const [a, b] = [await instance(), await instance()];
        const key = `d/${uid()}`;
        const first: string[] = [];
        const second: string[] = [];
        b.onLinkInvalidated((k) => k === key && first.push(k));
        b.onLinkInvalidated((k) => k === key && second.push(k));
        await b.ping();
        await a.invalidateLink(key);
        await a.invalidateLink(key);
        await within(500, () => first.length === 2 && second.length === 2);
        await Bun.sleep(30);
        expect([first.length, second.length]).toEqual([2, 2]);
      });
    });

    describe("hit counters (maxHits)", () => {
      test("a missing counter is seeded from seed() before the first increment", async () => {
        const h = await instance();
        const id = uid();
        let seeds = 0;
        expect(await h.peekHits(id)).toBeNull();
        expect(await h.takeHit(id, 10, async () => (seeds++, 7))).toBe(8);
        expect(seeds).toBe(1);
        expect(await h.peekHits(id)).toBe(8);
      });

      test("seed() is never called when the counter exists, even from another instance", async () => {
        const [a, b] = [await instance(), await instance()];
        const id = uid();
        await a.takeHit(id, 10, async () => 0);
        const never = async (): Promise<number> => {
          throw new Error("seed called although the counter exists");
        };
        expect(await a.takeHit(id, 10, never)).toBe(2);
        expect(await b.takeHit(id, 10, never)).toBe(3);
      });

      test("the click that reaches max is served (returns max), the next is refused (-1)", async () => {
        const h = await instance();
        const id = uid();
        expect(await h.takeHit(id, 3, async () => 1)).toBe(2);
        expect(await h.takeHit(id, 3, async () => 0)).toBe(3);
        expect(await h.takeHit(id, 3, async () => 0)).toBe(-1);
        expect(await h.peekHits(id)).toBe(3);
      });

      test("a counter seeded at or above max refuses at once", async () => {
        const h = await instance();
        const id = uid();
        expect(await h.takeHit(id, 5, async () => 5)).toBe(-1);
        expect(await h.peekHits(id)).toBe(5);
      });

      test("exact under concurrency: 500 parallel clicks over two instances, max 120", async () => {
        const [a, b] = [await instance(), await instance()];
        const id = uid();
        let seeds = 0;
        const seed = async () => {
          seeds++;
          await Bun.sleep(5); // a database read
          return 0;
        };
        const results = await Promise.all(
          Array.from({ length: 500 }, (_, i) => (i % 2 ? a : b).takeHit(id, 120, seed)),
        );
        const served = results.filter((n) => n > 0).sort((x, y) => x - y);
        expect(served).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
        expect(results.filter((n) => n === -1)).toHaveLength(380);
        expect(await a.peekHits(id)).toBe(120);
        expect(seeds).toBeGreaterThanOrEqual(1);
        expect(seeds).toBeLessThanOrEqual(2); // one per instance at most, not one per click
      });

      test("resetHits forgets the counter, so the next click seeds again", async () => {
        const h = await instance();
        const id = uid();
        await h.takeHit(id, 10, async () => 4);
        await h.resetHits(id);
        expect(await h.peekHits(id)).toBeNull();
        expect(await h.takeHit(id, 10, async () => 0)).toBe(1);
      });

      test("a failing seed() rejects takeHit and leaves no counter behind", async () => {
        const h = await instance();
        const id = uid();
        await expect(h.takeHit(id, 10, async () => Promise.reject(new Error("db down")))).rejects.toThrow("db down");
        expect(await h.peekHits(id)).toBeNull();
        expect(await h.takeHit(id, 10, async () => 2)).toBe(3);
      });
    });

    describe("rate limit", () => {
      test("exact under concurrency: 200 parallel calls over two instances, limit 120", async () => {
        const [a, b] = [await instance(), await instance()];
        const bucket = `key:${uid()}`;
        const results = await Promise.all(
          Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).rateLimit(bucket, 120, 60_000)),
        );
        const allowed = results.filter((r) => r.allowed);
        expect(allowed).toHaveLength(120);
        expect(allowed.map((r) => r.remaining).sort((x, y) => x - y)).toEqual(Array.from({ length: 120 }, (_, i) => i));
        for (const r of results) {
          expect(r.limit).toBe(120);
          expect(r.resetSeconds).toBeGreaterThanOrEqual(1);
          expect(r.resetSeconds).toBeLessThanOrEqual(60);
          if (!r.allowed) expect(r.remaining).toBe(0);
        }
      });

      test("remaining counts down and resetSeconds is the time left in the window", async () => {
        const h = await instance();
        const bucket = `key:${uid()}`;
        const first = await h.rateLimit(bucket, 3, 60_000);
        expect(first).toMatchObject({ allowed: true, limit: 3, remaining: 2 });
        expect(first.resetSeconds).toBeGreaterThanOrEqual(1);
        expect(first.resetSeconds).toBeLessThanOrEqual(60);
        expect((await h.rateLimit(bucket, 3, 60_000)).remaining).toBe(1);
        expect((await h.rateLimit(bucket, 3, 60_000)).remaining).toBe(0);
        expect(await h.rateLimit(bucket, 3, 60_000)).toMatchObject({ allowed: false, remaining: 0 });
        const short = await h.rateLimit(`key:${uid()}`, 3, 1_000);
        expect(short.resetSeconds).toBe(1);
      });

      test("a call may weigh several units: allowed while the window's total stays within the limit, refused ones count", async () => {
        const h = await instance();
        const bucket = `key:${uid()}`;
        expect(await h.rateLimit(bucket, 5, 60_000, 3)).toMatchObject({ allowed: true, remaining: 2 });
        expect(await h.rateLimit(bucket, 5, 60_000, 3)).toMatchObject({ allowed: false, remaining: 0 });
        // The refused call took its units: the budget is spent, as it is after single calls past the limit.
        expect(await h.rateLimit(bucket, 5, 60_000)).toMatchObject({ allowed: false, remaining: 0 });
        expect(await h.rateLimit(`key:${uid()}`, 5, 60_000, 5)).toMatchObject({ allowed: true, remaining: 0 });
      });

      test("a new window allows again", async () => {
        const h = await instance();
        const bucket = `pw:${uid()}`;
        expect((await h.rateLimit(bucket, 1, 150)).allowed).toBe(true);
        expect((await h.rateLimit(bucket, 1, 150)).allowed).toBe(false);
        await Bun.sleep(320);
        expect((await h.rateLimit(bucket, 1, 150)).allowed).toBe(true);
      });

      test("buckets are independent", async () => {
        const h = await instance();
        const [x, y] = [`key:${uid()}`, `key:${uid()}`];
        expect((await h.rateLimit(x, 1, 60_000)).allowed).toBe(true);
        expect((await h.rateLimit(x, 1, 60_000)).allowed).toBe(false);
        expect((await h.rateLimit(y, 1, 60_000)).allowed).toBe(true);
      });
    });

    describe("click queue", () => {
      test("enqueued clicks are read oldest first, intact, and leave the queue once acknowledged", async () => {
        const h = await instance();
        await drain(h, "c1");
        const events = [click(1), click(2), click(3)];
        await h.enqueueClicks(events);
        expect(await h.queueDepth()).toBe(3);
        const read = await h.readClicks("c1", 10);
        expect(read.map((c) => withoutId(c.event))).toEqual(events.map(withoutId));
        expect(new Set(read.map((c) => c.id)).size).toBe(3);
        expect(new Set(read.map((c) => c.batch)).size).toBe(1); // one enqueue, one batch
        expect(await h.queueDepth()).toBe(3); // read but unacknowledged still counts
        await h.ackBatches(batchesOf(read));
        expect(await h.queueDepth()).toBe(0);
        expect(await h.readClicks("c1", 10)).toEqual([]);
      });

      test("unacknowledged clicks are delivered again, a batch as a whole (the consumer failed to write them)", async () => {
        const h = await instance();
        await drain(h, "c1");
        await h.enqueueClicks([click(1)]);
        await h.enqueueClicks([click(2), click(3)]);
        const first = await h.readClicks("c1", 1000);
        expect(first).toHaveLength(3);
        expect(batchesOf(first)).toHaveLength(2);
        await h.ackBatches([first[0].batch]); // the whole first batch
        expect(await h.queueDepth()).toBe(2);
        const again = await h.readClicks("c1", 1000);
        expect(again.map((c) => c.id)).toEqual(first.slice(1).map((c) => c.id));
        expect(again.map((c) => c.batch)).toEqual([first[1].batch, first[1].batch]);
        expect(again.map((c) => c.event)).toEqual(first.slice(1).map((c) => c.event));
        await h.ackBatches(batchesOf(again));
        expect(await h.queueDepth()).toBe(0);
        expect(await h.readClicks("c1", 1000)).toEqual([]);
      });

      test("readClicks returns about max, oldest first, more only to keep a batch together, and the rest later", async () => {
        const h = await instance();
        await drain(h, "c1");
        const batches = [[1, 2, 3, 4, 5], [6], [7], [8, 9], [10]].map((b) => b.map(click));
        for (const b of batches) await h.enqueueClicks(b);
        const max = 2;
        const delivered: ClickEvent[] = [];
        const sizes = new Map<string, number>();
        for (let read = await h.readClicks("c1", max); read.length; read = await h.readClicks("c1", max)) {
          // Beyond max, only the rest of the batch the max-th click belongs to.
          for (const c of read.slice(max)) expect(c.batch).toBe(read[max - 1].batch);
          for (const c of read) sizes.set(c.batch, (sizes.get(c.batch) ?? 0) + 1);
          delivered.push(...read.map((c) => c.event));
          await h.ackBatches(batchesOf(read));
        }
        expect(delivered.map(withoutId)).toEqual(batches.flat().map(withoutId));
        expect([...sizes.values()]).toEqual(batches.map((b) => b.length)); // never split
        expect(await h.queueDepth()).toBe(0);
      });

      test("a read never returns more than max beyond one batch, even when batches grow after small ones", async () => {
        const h = await instance();
        await drain(h, "c1");
        // Small batches first: a reader that sizes its next read by them would fetch far too many large ones.
        for (let i = 0; i < 3; i++) await h.enqueueClicks([click(i)]);
        await drain(h, "c1");
        const large = Array.from({ length: 12 }, (_, b) => Array.from({ length: 100 }, (_, i) => click(1_000 + b * 100 + i)));
        for (const b of large) await h.enqueueClicks(b);
        const max = 250;
        const delivered: ClickEvent[] = [];
        for (let read = await h.readClicks("c1", max); read.length; read = await h.readClicks("c1", max)) {
          expect(read.length).toBeLessThanOrEqual(max); // whole batches of 100: two per read
          expect(read.length).toBeGreaterThan(0);
          delivered.push(...read.map((c) => c.event));
          await h.ackBatches(batchesOf(read));
        }
        // Everything, once, oldest first: what a read left over came first in the next one.
        expect(delivered.map(withoutId)).toEqual(large.flat().map(withoutId));
        expect(await h.queueDepth()).toBe(0);
      });

      test("clicks enqueued by two instances are all read once", async () => {
        const [a, b] = [await instance(), await instance()];
        await drain(a, "c1");
        const events = Array.from({ length: 300 }, (_, i) => click(i));
        await Promise.all([a.enqueueClicks(events.slice(0, 150)), b.enqueueClicks(events.slice(150))]);
        expect(await a.queueDepth()).toBe(300);
        const seen: number[] = [];
        for (let batch = await b.readClicks("c1", 100); batch.length; batch = await b.readClicks("c1", 100)) {
          for (const c of batch) seen.push(c.event.ts);
          await b.ackBatches(batchesOf(batch));
        }
        expect(seen.sort()).toEqual(events.map((e) => e.ts).sort());
        expect(await a.queueDepth()).toBe(0);
      });

      test("clicks a dead consumer left unacknowledged are taken over by another one", async () => {
        const h = await instance();
        await drain(h, "c1");
        await h.enqueueClicks([click(1), click(2)]);
        const lost = await h.readClicks("dead", 10);
        expect(lost).toHaveLength(2);
        // Redis adapters under test are configured with a short idle time before takeover.
        let taken = await h.readClicks("c1", 10);
        for (const deadline = performance.now() + 2_000; taken.length === 0 && performance.now() < deadline; ) {
          await Bun.sleep(20);
          taken = await h.readClicks("c1", 10);
        }
        expect(taken.map((c) => c.id)).toEqual(lost.map((c) => c.id));
        await h.ackBatches(batchesOf(taken));
        expect(await h.queueDepth()).toBe(0);
      });

      test("a read holds each batch once, also when its own pending batches are old enough to be taken over", async () => {
        const h = await instance();
        await drain(h, "c1");
        await h.enqueueClicks([click(1), click(2)]);
        await h.enqueueClicks([click(3)]);
        expect(await h.readClicks("c1", 1000)).toHaveLength(3); // pending with c1, not acknowledged (a failed write)
        await Bun.sleep(300); // past the takeover idle time of the Redis adapters under test
        for (let i = 0; i < 3; i++) {
          const again = await h.readClicks("c1", 1000);
          expect(again.map((c) => c.event.ts)).toEqual([click(1).ts, click(2).ts, click(3).ts]);
          await Bun.sleep(60);
        }
        await drain(h, "c1");
        expect(await h.queueDepth()).toBe(0);
      });

      test("empty enqueue and empty ack are no-ops", async () => {
        const h = await instance();
        await drain(h, "c1");
        await h.enqueueClicks([]);
        await h.ackBatches([]);
        expect(await h.queueDepth()).toBe(0);
        expect(await h.readClicks("c1", 10)).toEqual([]);
      });
    });

    describe("pub/sub", () => {
      test("a message published by one instance reaches subscribers of another, on that channel only", async () => {
        const [a, b] = [await instance(), await instance()];
        const [chan, other] = [`keys-${uid()}`, `other-${uid()}`];
        const got: string[] = [];
        const wrong: string[] = [];
        b.subscribe(chan, (m) => got.push(m));
        b.subscribe(other, (m) => wrong.push(m));
        await b.ping();
        await a.publish(chan, "revoked:k1");
        await a.publish(chan, "revoked:k2");
        await within(200, () => got.length === 2);
        expect(got).toEqual(["revoked:k1", "revoked:k2"]);
        expect(wrong).toEqual([]);
      });
    });

    describe("health", () => {
      test("ping resolves while the backend is up", async () => {
        const h = await instance();
        await h.ping();
      });
    });
  });
}

/**
 * The ClickQueue contract: run against every adapter, memory (the embedded writer thread's queue and the memory
 * HotState's), Redis and Redis Cluster (by hot-state.contract.ts and click-queue-memory.test.ts).
 */
import { describe, expect, test } from "bun:test";
import type { ClickEvent, ClickQueue, QueuedClick } from "../../shared/ports.ts";
import { instances, uid } from "./hot-state-harness.ts";

/** An event without its id, which the queue may replace (ClickQueue.enqueueClicks). */
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
    rule: n % 4 === 0 ? 2 : null,
    qr: n % 5 === 0,
  };
}

/** Acknowledges everything a consumer holds, so each test starts from an empty queue. */
async function drain(h: ClickQueue, consumer: string) {
  for (let batch = await h.readClicks(consumer, 1000); batch.length; batch = await h.readClicks(consumer, 1000)) {
    await h.ackBatches(batchesOf(batch));
  }
}

export function runClickQueueContract(make: () => Promise<ClickQueue>) {
  describe("click queue", () => {
    const instance = instances(make);

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
}

/**
 * The ClickQueue contract against the memory queue as the embedded writer thread configures it (a limit on held
 * clicks), and that limit: past it, a read first drops the oldest batches and keeps the newest.
 */
import { beforeEach, describe, expect, test } from "bun:test";
import { MemoryClickQueue } from "../../shared/adapters/memory/click-queue.ts";
import type { ClickEvent } from "../../shared/ports.ts";
import { runClickQueueContract } from "./click-queue.contract.ts";

// One process holds one memory queue: every instance of a test is the same object, and each test gets a fresh one.
let current: MemoryClickQueue;
beforeEach(() => {
  current = new MemoryClickQueue({ maxClicks: 1_000_000 });
});

describe("ClickQueue contract: memory (the writer thread's)", () => {
  runClickQueueContract(async () => current);
});

function click(id: string): ClickEvent {
  return { id, linkId: "L1", ts: 1, ua: "", ip: null, country: null, referrer: null, variant: null, rule: null, qr: false };
}

describe("memory click queue limit", () => {
  test("past maxClicks a read drops the oldest batches, read or not, keeps the newest, and reports how many", async () => {
    const dropped: number[] = [];
    const q = new MemoryClickQueue({ maxClicks: 3, onDropped: (n) => dropped.push(n) });
    await q.enqueueClicks([click("a1"), click("a2")]);
    const failed = await q.readClicks("w", 10); // read and never acknowledged: its write failed
    await q.enqueueClicks([click("b1")]);
    await q.enqueueClicks([click("c1"), click("c2")]);
    expect(await q.queueDepth()).toBe(5); // the limit is applied at reads, when no write of an earlier read is under way
    const next = await q.readClicks("w", 10);
    expect(next.map((c) => c.event.id)).toEqual(["b1", "c1", "c2"]);
    expect(dropped).toEqual([2]);
    expect(await q.queueDepth()).toBe(3);
    await q.ackBatches([failed[0]!.batch]); // a dropped batch: nothing to acknowledge
    expect(await q.queueDepth()).toBe(3);
  });

  test("the newest batch is kept even when it alone is over the limit", async () => {
    const dropped: number[] = [];
    const q = new MemoryClickQueue({ maxClicks: 1, onDropped: (n) => dropped.push(n) });
    await q.enqueueClicks([click("a1")]);
    await q.enqueueClicks([click("b1"), click("b2")]);
    expect((await q.readClicks("w", 10)).map((c) => c.event.id)).toEqual(["b1", "b2"]);
    expect(dropped).toEqual([1]);
  });

  test("two queues never name a batch alike (a restarted writer thread's store keeps the batches written before)", async () => {
    const [a, b] = [new MemoryClickQueue(), new MemoryClickQueue()];
    await a.enqueueClicks([click("x")]);
    await b.enqueueClicks([click("x")]);
    const [ra, rb] = [await a.readClicks("w", 10), await b.readClicks("w", 10)];
    expect(ra[0]!.batch).not.toBe(rb[0]!.batch);
  });
});

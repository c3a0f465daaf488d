/**
 * How the redirector's click buffer cuts the click stream into batches for the queue. The queue here records
 * the batches it is handed (and can be slow or failing): the buffer, not a queue adapter, is under test.
 */
import { describe, expect, test } from "bun:test";
import { ClickBuffer } from "../../redirector/click-buffer.ts";
import type { ClickEvent, ClickIntake } from "../../shared/ports.ts";

function click(i: number): ClickEvent {
  return { id: `c${i}`, linkId: "L1", ts: i, ua: "", ip: null, country: null, referrer: null, variant: null, rule: null, qr: false };
}

/** A queue that takes `delayMs` per batch and fails while `failing` is set. */
function recordingQueue(delayMs = 0) {
  const batches: string[][] = [];
  const q = {
    batches,
    failing: false,
    async enqueueClicks(events: ClickEvent[]) {
      if (delayMs) await Bun.sleep(delayMs);
      if (q.failing) throw new Error("queue down");
      batches.push(events.map((e) => e.id));
    },
    async queueDepth() {
      return 0;
    },
  };
  return q satisfies ClickIntake & { batches: string[][] };
}

const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `c${from + i}`);

describe("ClickBuffer", () => {
  test("fewer clicks than a batch go out together once flushMs has passed", async () => {
    const q = recordingQueue();
    const b = new ClickBuffer(q, { batchSize: 10, flushMs: 30 });
    for (let i = 1; i <= 3; i++) b.push(click(i));
    expect(q.batches).toEqual([]);
    await Bun.sleep(80);
    expect(q.batches).toEqual([ids(1, 3)]);
  });

  test("under load the queue gets full batches; the remainder waits for the timer instead of going out at once", async () => {
    const q = recordingQueue(20);
    const b = new ClickBuffer(q, { batchSize: 10, flushMs: 200 });
    for (let i = 1; i <= 10; i++) b.push(click(i)); // a full batch: sent, and in flight for 20 ms
    for (let i = 11; i <= 35; i++) b.push(click(i)); // arrive meanwhile: two full batches and 5 more
    await Bun.sleep(5);
    expect(q.batches).toEqual([]);
    await Bun.sleep(110); // the in-flight batch and the two full ones are done (60 ms); the 5 wait for flushMs
    expect(q.batches).toEqual([ids(1, 10), ids(11, 20), ids(21, 30)]);
    await Bun.sleep(250);
    expect(q.batches).toEqual([ids(1, 10), ids(11, 20), ids(21, 30), ids(31, 35)]);
    expect(b.delivered).toBe(35);
  });

  test("flush() hands over everything at once, in order", async () => {
    const q = recordingQueue();
    const b = new ClickBuffer(q, { batchSize: 4, flushMs: 10_000 });
    for (let i = 1; i <= 3; i++) b.push(click(i));
    await b.flush();
    expect(q.batches).toEqual([ids(1, 3)]);
    expect(b.size).toBe(0);
  });

  test("flush() while a full batch is in flight also hands over the partial one behind it", async () => {
    const q = recordingQueue(20);
    const b = new ClickBuffer(q, { batchSize: 4, flushMs: 10_000 });
    for (let i = 1; i <= 6; i++) b.push(click(i)); // 1-4 in flight, 5-6 would wait for the timer
    await b.flush();
    expect(q.batches).toEqual([ids(1, 4), ids(5, 6)]);
    expect(b.size).toBe(0);
  });

  test("a failed batch stays buffered in order and is retried; drain() delivers it once the queue is back", async () => {
    const q = recordingQueue();
    const b = new ClickBuffer(q, { batchSize: 2, flushMs: 10 });
    q.failing = true;
    for (let i = 1; i <= 3; i++) b.push(click(i));
    await Bun.sleep(50);
    expect(q.batches).toEqual([]);
    expect(b.size).toBe(3);
    q.failing = false;
    expect(await b.drain(3_000)).toBe(0);
    expect(q.batches.flat()).toEqual(ids(1, 3));
  });

  test("beyond maxBuffered the oldest clicks are dropped and counted", async () => {
    const q = recordingQueue();
    q.failing = true;
    const b = new ClickBuffer(q, { batchSize: 100, flushMs: 10_000, maxBuffered: 5 });
    for (let i = 1; i <= 8; i++) b.push(click(i));
    expect(b.dropped).toBe(3);
    q.failing = false;
    await b.flush();
    expect(q.batches).toEqual([ids(4, 8)]);
  });
});

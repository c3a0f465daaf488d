/**
 * FairLimiter: the global bound holds, owners with work waiting take turns (the one running fewest first), each
 * owner's own tasks keep their order, and a failing task frees its slot.
 */
import { describe, expect, test } from "bun:test";
import { FairLimiter, nextLane, type Lane } from "../../shared/limiter.ts";

/** A task that finishes when told to. */
function gate() {
  let open!: () => void;
  const done = new Promise<void>((r) => (open = r));
  return { open, done };
}

/** Queues `count` tasks per owner, in the order given, each held until its gate opens; records start order. */
function queue(limiter: FairLimiter, plan: [owner: string, count: number][]) {
  const started: string[] = [];
  const gates = new Map<string, ReturnType<typeof gate>>();
  const runs: Promise<string>[] = [];
  let peak = 0;
  for (const [owner, count] of plan) {
    for (let i = 0; i < count; i++) {
      const name = `${owner}${i}`;
      const g = gate();
      gates.set(name, g);
      runs.push(
        limiter.run(owner, async () => {
          started.push(name);
          peak = Math.max(peak, limiter.active);
          await g.done;
          return name;
        }),
      );
    }
  }
  return { started, gates, runs, peak: () => peak };
}

/** Opens the gates of the running tasks one at a time, oldest first, until every task has run. */
async function drain(q: ReturnType<typeof queue>, total: number): Promise<void> {
  for (let finished = 0; finished < total; finished++) {
    await Bun.sleep(0);
    q.gates.get(q.started[finished])!.open();
  }
  await Promise.all(q.runs);
}

describe("FairLimiter", () => {
  test("one slot: owners with work waiting take turns, round-robin, each owner's tasks in its own order", async () => {
    const limiter = new FairLimiter(1);
    const q = queue(limiter, [["A", 5], ["B", 3], ["C", 2]]);
    await drain(q, 10);
    // A0 started at once; A's lane was first in the round, then B's and C's joined behind it.
    expect(q.started).toEqual(["A0", "A1", "B0", "C0", "A2", "B1", "C1", "A3", "B2", "A4"]);
    expect(q.peak()).toBe(1);
    expect([limiter.active, limiter.queued]).toEqual([0, 0]);
  });

  test("two slots held by a 40-task burst: the next owner's one task takes the first slot that frees", async () => {
    const limiter = new FairLimiter(2);
    const q = queue(limiter, [["A", 40], ["B", 1]]);
    await Bun.sleep(0);
    expect(q.started).toEqual(["A0", "A1"]);
    expect([limiter.active, limiter.queued]).toEqual([2, 39]);
    await drain(q, 41);
    expect(q.started.indexOf("B0")).toBe(2);
    expect(q.started.filter((n) => n !== "B0")).toEqual(Array.from({ length: 40 }, (_, i) => `A${i}`));
    expect(q.peak()).toBe(2);
  });

  test.each([1, 2, 3])("max %i: never more than that many at once across owners, and every task runs", async (max) => {
    const limiter = new FairLimiter(max);
    const q = queue(limiter, [["A", 6], ["B", 4], ["C", 1], ["D", 3]]);
    await Bun.sleep(0);
    expect(q.started).toHaveLength(max);
    await drain(q, 14);
    expect((await Promise.all(q.runs)).sort()).toEqual([...q.started].sort());
    expect(q.peak()).toBe(max);
    expect([limiter.active, limiter.queued]).toEqual([0, 0]);
  });

  test("a task that throws frees its slot for the next owner's waiter", async () => {
    const limiter = new FairLimiter(1);
    const failing = limiter.run("A", async () => {
      throw new Error("boom");
    });
    const next = limiter.run("B", async () => "ran");
    await expect(failing).rejects.toThrow("boom");
    expect(await next).toBe("ran");
    expect([limiter.active, limiter.queued]).toEqual([0, 0]);
  });
});

describe("nextLane", () => {
  const lane = (running: number, waiting: number): Lane => ({ running, waiting: Array.from({ length: waiting }, () => () => {}) });
  test.each<[string, [string, Lane][], string | undefined]>([
    ["nobody waiting", [["A", lane(2, 0)], ["B", lane(0, 0)]], undefined],
    ["the only owner waiting, however much it runs", [["A", lane(2, 9)]], "A"],
    ["fewest running wins over the order", [["A", lane(1, 9)], ["B", lane(0, 1)]], "B"],
    ["a tie goes to the lane served longest ago (first)", [["A", lane(1, 9)], ["B", lane(1, 1)]], "A"],
    ["a lane with nothing waiting is passed over", [["A", lane(0, 0)], ["B", lane(1, 3)]], "B"],
  ])("%s", (_name, lanes, expected) => {
    expect(nextLane(new Map(lanes))).toBe(expected);
  });
});

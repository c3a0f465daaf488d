/** Limiter: never more than `max` tasks at once, waiters served in order, a failing task frees its slot. */
import { describe, expect, test } from "bun:test";
import { Limiter } from "../../shared/limiter.ts";

/** A task that finishes when told to. */
function gate() {
  let open!: () => void;
  const done = new Promise<void>((r) => (open = r));
  return { open, done };
}

describe("Limiter", () => {
  test.each([1, 2, 3])("max %i: at most that many run; the others start in order as slots free up", async (max) => {
    const limiter = new Limiter(max);
    const gates = Array.from({ length: 6 }, gate);
    const started: number[] = [];
    let peak = 0;
    const runs = gates.map((g, i) =>
      limiter.run(async () => {
        started.push(i);
        peak = Math.max(peak, limiter.active);
        await g.done;
        return i;
      }),
    );
    await Bun.sleep(0);
    expect(started).toEqual(Array.from({ length: max }, (_, i) => i));
    expect(limiter.queued).toBe(6 - max);
    for (const g of gates) {
      g.open();
      await Bun.sleep(0);
    }
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(started).toEqual([0, 1, 2, 3, 4, 5]);
    expect(peak).toBe(max);
    expect(limiter.active).toBe(0);
  });

  test("a task that throws frees its slot for the next one", async () => {
    const limiter = new Limiter(1);
    const failing = limiter.run(async () => {
      throw new Error("boom");
    });
    const next = limiter.run(async () => "ran");
    await expect(failing).rejects.toThrow("boom");
    expect(await next).toBe("ran");
    expect(limiter.active).toBe(0);
  });
});

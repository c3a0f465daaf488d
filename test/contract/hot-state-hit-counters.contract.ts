/** The HitCounters contract (HotState role, maxHits): run against every adapter by hot-state.contract.ts. */
import { describe, expect, test } from "bun:test";
import type { HitCounters } from "../../shared/ports.ts";
import { instances, uid } from "./hot-state-harness.ts";

export function runHitCountersContract(make: () => Promise<HitCounters>) {
  describe("hit counters (maxHits)", () => {
    const instance = instances(make);

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
}

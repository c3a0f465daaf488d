/** The RateLimiter contract (HotState role): run against every adapter by hot-state.contract.ts. */
import { describe, expect, test } from "bun:test";
import type { RateLimiter } from "../../shared/ports.ts";
import { instances, uid } from "./hot-state-harness.ts";

export function runRateLimiterContract(make: () => Promise<RateLimiter>) {
  describe("rate limit", () => {
    const instance = instances(make);

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
}

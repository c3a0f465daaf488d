/** The HotState contract against the in-process adapter (embedded default). */
import { beforeEach, describe, expect, test } from "bun:test";
import { MemoryHotState } from "../../shared/adapters/memory/hot-state.ts";
import { MemoryRateLimiter } from "../../shared/adapters/memory/rate-limiter.ts";
import { runHotStateContract } from "./hot-state.contract.ts";

// One process holds one memory backend: every instance of a test is the same object, and each test gets a
// fresh one.
let current: MemoryHotState;
beforeEach(() => {
  current = new MemoryHotState();
});

runHotStateContract("memory", async () => current);

describe("memory rate limit windows", () => {
  test("a window starts at a bucket's first hit, as in Redis, so a clock boundary does not reset it", async () => {
    let now = 59_999; // one millisecond before a multiple of the window
    const h = new MemoryRateLimiter(() => now);
    expect((await h.rateLimit("k", 1, 60_000)).allowed).toBe(true);
    now = 60_001;
    expect(await h.rateLimit("k", 1, 60_000)).toMatchObject({ allowed: false, resetSeconds: 60 });
    now = 59_999 + 60_000;
    expect((await h.rateLimit("k", 1, 60_000)).allowed).toBe(true);
  });
});

/** RateLimiter in process memory (embedded default): a window's count changes synchronously, so it is exact. */
import type { RateLimiter, RateLimitResult } from "../../ports.ts";

export class MemoryRateLimiter implements RateLimiter {
  private windows = new Map<string, { end: number; count: number }>();

  constructor(private now: () => number = Date.now) {}

  async rateLimit(bucket: string, limit: number, windowMs: number, cost = 1): Promise<RateLimitResult> {
    const now = this.now();
    // As in Redis, a bucket's first hit starts its window. Windows aligned to the clock instead reset every bucket
    // at each multiple of windowMs, so a burst that straddled one got twice the limit (and a test, a flaky 429).
    let w = this.windows.get(bucket);
    if (!w || w.end <= now) {
      w = { end: now + windowMs, count: 0 };
      this.windows.set(bucket, w);
    }
    const resetSeconds = Math.max(1, Math.ceil((w.end - now) / 1000));
    w.count += cost;
    if (w.count > limit) return { allowed: false, limit, remaining: 0, resetSeconds };
    return { allowed: true, limit, remaining: limit - w.count, resetSeconds };
  }

  /** Drops ended windows, which would otherwise accumulate one entry per bucket forever. */
  sweep() {
    const now = this.now();
    // By the window's own end: a fixed one-hour horizon would reset windows longer than an hour.
    for (const [k, w] of this.windows) if (w.end <= now) this.windows.delete(k);
  }
}

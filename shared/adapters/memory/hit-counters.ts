/**
 * HitCounters in process memory (embedded default). An attempt completes synchronously inside one JavaScript
 * turn, which is what makes it atomic here; only starting a counter and reserving its next block wait (for the
 * store). This process owns its links' counters, so it gives back what they reserved and did not serve on close.
 */
import type { HitCounters, HitLedger } from "../../ports.ts";
import { HIT_LIMIT, NO_COUNTER, NO_ROOM, StoreCallsInFlight } from "../hit-taking.ts";

interface Counter {
  n: number;
  /** Hits the store reserved for this counter: it serves none beyond. */
  reserved: number;
  ledger: HitLedger;
}

export class MemoryHitCounters implements HitCounters {
  private readonly counters = new Map<string, Counter>();
  private readonly store = new StoreCallsInFlight();

  takeHit(linkId: string, max: number, ledger: HitLedger): Promise<number> {
    return this.store.take(linkId, () => this.attempt(linkId, max), ledger, {
      start: (s) => {
        if (!this.counters.has(linkId)) this.counters.set(linkId, { n: s.count, reserved: s.reserved, ledger });
      },
      raise: (g) => {
        const c = this.counters.get(linkId);
        if (c !== undefined) c.reserved = Math.max(c.reserved, g.reserved);
      },
    });
  }

  /** The take when it needs nothing from the store (counter started, reserved hits left); undefined otherwise. */
  takeHitSync(linkId: string, max: number): number | undefined {
    const n = this.attempt(linkId, max);
    return n === NO_COUNTER || n === NO_ROOM ? undefined : n;
  }

  private attempt(linkId: string, max: number): number {
    const c = this.counters.get(linkId);
    if (c === undefined) return NO_COUNTER;
    if (c.n >= max) return HIT_LIMIT;
    if (c.n >= c.reserved) return NO_ROOM;
    return ++c.n;
  }

  async peekHits(linkId: string) {
    return this.counters.get(linkId)?.n ?? null;
  }

  async resetHits(linkId: string) {
    this.counters.delete(linkId);
    this.store.forget(linkId);
  }

  /**
   * Gives back each counter's reserved hits it did not serve (a graceful stop then restarts exactly where it
   * was); a counter whose store cannot be reached keeps its reservation, which can only under-serve.
   */
  async close(): Promise<void> {
    const stopping = [...this.counters.values()];
    this.counters.clear();
    await Promise.all(stopping.map((c) => (c.n < c.reserved ? c.ledger.release(c.n).catch(() => {}) : undefined)));
  }
}

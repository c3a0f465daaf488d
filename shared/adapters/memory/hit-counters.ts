/**
 * HitCounters in process memory (embedded default). An increment completes synchronously inside one JavaScript
 * turn, which is what makes takeHit atomic here.
 */
import type { HitCounters } from "../../ports.ts";

export class MemoryHitCounters implements HitCounters {
  private hits = new Map<string, number>();
  private seeding = new Map<string, Promise<number>>();

  async takeHit(linkId: string, max: number, seed: () => Promise<number>): Promise<number> {
    if (!this.hits.has(linkId)) {
      // Concurrent first clicks share one seed read, then all increment the same counter.
      let p = this.seeding.get(linkId);
      if (!p) {
        p = seed();
        this.seeding.set(linkId, p);
      }
      try {
        const seeded = await p;
        if (!this.hits.has(linkId)) this.hits.set(linkId, seeded);
      } finally {
        this.seeding.delete(linkId);
      }
    }
    return this.takeHitSync(linkId, max)!;
  }

  /** Synchronous variant once the counter is seeded; undefined when it is not. */
  takeHitSync(linkId: string, max: number): number | undefined {
    const n = this.hits.get(linkId);
    if (n === undefined) return undefined;
    if (n >= max) return -1;
    this.hits.set(linkId, n + 1);
    return n + 1;
  }

  async peekHits(linkId: string) {
    return this.hits.get(linkId) ?? null;
  }

  async resetHits(linkId: string) {
    this.hits.delete(linkId);
  }
}

/**
 * How both HitCounters adapters (memory, Redis) take a hit within the store's reservations (ports/hot-state.ts):
 * the adapter's one atomic attempt, and when it finds no counter or no reserved hit left, one reservation per
 * link at a time in this process, applied to the counter before the attempt is made again.
 */
import { AppError } from "../errors.ts";
import type { HitGrant, HitLedger } from "../ports.ts";

/** What an attempt can answer besides the new count: the limit is reached. */
export const HIT_LIMIT = -1;
/** The link has no counter yet (or it was lost): start one from a grant. */
export const NO_COUNTER = -2;
/** The counter used up its reservation (below the limit): reserve the next block. */
export const NO_ROOM = -3;

/** Counters started for one take before giving up: a counter reset over and over while it is started. */
const MAX_STARTS = 3;

/**
 * One take: `attempt` until it answers a count or HIT_LIMIT, reserving through `reserve` when it has to. A take
 * that finds no room after a final grant is refused: the store has nothing more to give.
 */
export async function takeWithinReservation(attempt: () => number | Promise<number>, reserve: () => Promise<HitGrant | null>): Promise<number> {
  let final = false;
  for (let starts = 0; ; ) {
    const n = await attempt();
    if (n !== NO_COUNTER && n !== NO_ROOM) return n;
    if (n === NO_ROOM && final) return HIT_LIMIT;
    if (n === NO_COUNTER && ++starts > MAX_STARTS) throw new AppError("unavailable", "Hit counter could not be started", { retryAfter: 1 });
    const grant = await reserve();
    if (grant === null) return HIT_LIMIT; // the stored link has no limit any more: refuse until its new copy arrives
    final = grant.final;
  }
}

/**
 * The reservations this process has in flight, one per link: concurrent takes that need one share it, so a
 * burst costs one store write per block, not one per click. A grant is applied (to the counter) only if its
 * reservation was not forgotten meanwhile (the counter was reset).
 */
export class ReservationsInFlight {
  private readonly pending = new Map<string, Promise<HitGrant | null>>();

  reserve(linkId: string, ledger: HitLedger, apply: (grant: HitGrant) => unknown): Promise<HitGrant | null> {
    const running = this.pending.get(linkId);
    if (running) return running;
    const p: Promise<HitGrant | null> = ledger
      .reserve()
      .then(async (grant) => {
        if (grant !== null && this.pending.get(linkId) === p) await apply(grant);
        return grant;
      })
      .finally(() => {
        if (this.pending.get(linkId) === p) this.pending.delete(linkId);
      });
    this.pending.set(linkId, p);
    return p;
  }

  forget(linkId: string): void {
    this.pending.delete(linkId);
  }
}

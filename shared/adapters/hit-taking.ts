/**
 * How both HitCounters adapters (memory, Redis) take a hit within the store's reservations (ports/hot-state.ts):
 * the adapter's one atomic attempt and, when it finds no counter or no reserved hit left, one store call per link
 * at a time in this process (start the counter from a read, or reserve the next block), applied to the counter
 * before the attempt is made again.
 */
import { AppError } from "../errors.ts";
import type { HitGrant, HitLedger, HitStart } from "../ports.ts";

/** What an attempt can answer besides the new count: the limit is reached. */
export const HIT_LIMIT = -1;
/** The link has no counter yet (or it was lost): start one from the store. */
export const NO_COUNTER = -2;
/** The counter used up its reservation (below the limit): reserve the next block. */
export const NO_ROOM = -3;

/** Counters started for one take before giving up: a counter reset over and over while it is started. */
const MAX_STARTS = 3;

/** What an adapter does with the store's answers: start its counter, or raise its reservation. */
export interface CounterUpdates {
  start(s: HitStart): unknown;
  raise(g: HitGrant): unknown;
}

/** A store call's outcome for the takes waiting on it: go on, nothing more to reserve, or no limit (refuse). */
type StoreStep = "more" | "final" | "refuse";

/**
 * The store calls this process has in flight, one per link: concurrent takes that need one share it, so a burst
 * costs one store call per block, not one per click. An answer is applied (to the counter) only if the call was
 * not forgotten meanwhile (the counter was reset).
 */
export class StoreCallsInFlight {
  private readonly pending = new Map<string, Promise<StoreStep>>();

  /** The take of one hit: `attempt` until it answers a count or HIT_LIMIT, starting or reserving when it must. */
  async take(linkId: string, attempt: () => number | Promise<number>, ledger: HitLedger, counter: CounterUpdates): Promise<number> {
    let final = false;
    for (let starts = 0; ; ) {
      const n = await attempt();
      if (n !== NO_COUNTER && n !== NO_ROOM) return n;
      if (n === NO_ROOM && final) return HIT_LIMIT; // the store has nothing more to give
      if (n === NO_COUNTER && ++starts > MAX_STARTS) throw new AppError("unavailable", "Hit counter could not be started", { retryAfter: 1 });
      const step = await this.call(linkId, n === NO_COUNTER ? (ours) => started(ledger, counter, ours) : (ours) => raised(ledger, counter, ours));
      if (step === "refuse") return HIT_LIMIT; // gone, or no limit any more: refuse until the new copy of the link arrives
      final = step === "final";
    }
  }

  forget(linkId: string): void {
    this.pending.delete(linkId);
  }

  private call(linkId: string, step: (stillOurs: () => boolean) => Promise<StoreStep>): Promise<StoreStep> {
    const running = this.pending.get(linkId);
    if (running) return running;
    const p: Promise<StoreStep> = step(() => this.pending.get(linkId) === p).finally(() => {
      if (this.pending.get(linkId) === p) this.pending.delete(linkId);
    });
    this.pending.set(linkId, p);
    return p;
  }
}

async function started(ledger: HitLedger, counter: CounterUpdates, stillOurs: () => boolean): Promise<StoreStep> {
  const s = await ledger.start();
  if (s === null) return "refuse";
  if (stillOurs()) await counter.start(s);
  return "more";
}

async function raised(ledger: HitLedger, counter: CounterUpdates, stillOurs: () => boolean): Promise<StoreStep> {
  const g = await ledger.reserve();
  if (g === null) return "refuse";
  if (stillOurs()) await counter.raise(g);
  return g.final ? "final" : "more";
}

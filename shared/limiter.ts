/**
 * Bounded concurrency for costly work. `FairLimiter` shares its slots among owners (accounts), so one owner's
 * burst waits behind itself and not in front of everyone else; `Limiter` is the same bound with one owner, first
 * come first served.
 */

/** One owner's share: its tasks running now, and its waiters in arrival order. */
export interface Lane {
  running: number;
  readonly waiting: (() => void)[];
}

/**
 * The lane whose waiter gets the next free slot: among lanes with work waiting, the one running the fewest tasks,
 * ties going to the lane served longest ago (the map's order). With one slot that is plain round-robin; with more,
 * an owner arriving while another holds every slot gets the very next one.
 */
export function nextLane(lanes: Map<string, Lane>): string | undefined {
  let best: string | undefined;
  let bestRunning = Infinity;
  for (const [owner, lane] of lanes) {
    if (lane.waiting.length > 0 && lane.running < bestRunning) {
      best = owner;
      bestRunning = lane.running;
    }
  }
  return best;
}

/**
 * At most `max` tasks at a time in all; waiters are served owner by owner (see nextLane), each owner's own tasks
 * in order. A finishing task hands its slot straight to the chosen waiter, so the bound holds even while the
 * waiter is being woken.
 */
export class FairLimiter {
  private running = 0;
  /** Owners with tasks running or waiting, least recently served first (a Map keeps insertion order). */
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly max: number) {}

  async run<T>(owner: string, task: () => Promise<T>): Promise<T> {
    const lane = this.lanes.get(owner) ?? { running: 0, waiting: [] };
    if (this.running < this.max) {
      this.running++;
      this.serve(owner, lane);
    } else {
      this.lanes.set(owner, lane); // a new owner joins at the end of the round
      await new Promise<void>((resolve) => lane.waiting.push(resolve));
    }
    try {
      return await task();
    } finally {
      this.finish(owner, lane);
    }
  }

  /** Tasks running now (for tests and metrics). */
  get active(): number {
    return this.running;
  }

  /** Tasks waiting for a slot, all owners together. */
  get queued(): number {
    let n = 0;
    for (const lane of this.lanes.values()) n += lane.waiting.length;
    return n;
  }

  /** Counts a task of this owner as running and moves the owner to the end of the round. */
  private serve(owner: string, lane: Lane): void {
    lane.running++;
    this.lanes.delete(owner);
    this.lanes.set(owner, lane);
  }

  private finish(owner: string, lane: Lane): void {
    lane.running--;
    if (lane.running === 0 && lane.waiting.length === 0) this.lanes.delete(owner);
    const next = nextLane(this.lanes);
    if (next === undefined) {
      this.running--;
      return;
    }
    const nextOwnerLane = this.lanes.get(next)!;
    this.serve(next, nextOwnerLane);
    nextOwnerLane.waiting.shift()!();
  }
}

/** At most `max` tasks at a time; the rest wait their turn, first come first served. */
export class Limiter {
  private readonly slots: FairLimiter;

  constructor(max: number) {
    this.slots = new FairLimiter(max);
  }

  run<T>(task: () => Promise<T>): Promise<T> {
    return this.slots.run("", task);
  }

  /** Tasks running now (for tests and metrics). */
  get active(): number {
    return this.slots.active;
  }

  /** Tasks waiting for a slot. */
  get queued(): number {
    return this.slots.queued;
  }
}

/**
 * Click storage upkeep: settles each UTC day once it is over and each hour of today once it is over (the settled
 * totals that keep long-range stats cheap, see docs/analytics.md), and deletes raw clicks older than CLICK_RETENTION_DAYS. Scale mode: every control-plane
 * process runs it (async Postgres calls, off the event loop's critical path). Embedded default: the click writer
 * thread runs it on its own connection (sqlite-writer-thread.ts), because bun:sqlite is synchronous and a settle on
 * the server thread would hold up redirects. Both store calls are idempotent and safe from several processes at
 * once, so no process needs to be elected for it. A failure (the database away for a while) is reported and tried
 * again next time.
 *
 * Days are settled one at a time, each its own transaction with a turn of the event loop after it: the first
 * settle after an upgrade covers every migrated day, and it must never hold the write lock (which the click writes
 * share) for all of them at once.
 */
import type { ClickStore } from "../../shared/ports.ts";

export const CLICK_MAINTENANCE_INTERVAL_MS = 10 * 60_000;
/**
 * How often busy link-hours are folded into their digests (shared/adapters/hour-digests.ts): a read of such an hour
 * takes its digest plus the cells of at most this long (a link of 10,000,000 clicks in 90 days: about 80).
 */
export const FOLD_INTERVAL_MS = 60_000;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

export interface ClickMaintenanceDeps {
  store: Pick<ClickStore, "settledBefore" | "settleDays" | "settleHours" | "pruneClickLog">;
  /**
   * The start of the first UTC day with cells (null: none), asked only while nothing was ever settled, so that
   * day can be settled alone. Without it, that first settle covers every day before today at once.
   */
  firstCellDay?: () => Promise<number | null>;
  /** Days raw clicks are kept; 0: for ever. */
  retentionDays: number;
  now: () => number;
  /** A pass that failed, with what failed; never thrown. */
  onError: (err: unknown) => void;
}

/** Lets timers and messages that are due (a click write) run between two days' transactions. */
const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** The bound of the first settleDays call of a pass: one day past the first day not settled. */
async function firstBound(deps: ClickMaintenanceDeps, today: number): Promise<number> {
  const done = await deps.store.settledBefore();
  if (done > 0) return done + DAY_MS;
  if (!deps.firstCellDay) return today;
  const first = await deps.firstCellDay();
  return first === null ? Infinity : first + DAY_MS; // no cells: nothing to settle
}

/** Settles the days before `today` oldest first, one settleDays call (transaction) a day; after a day, `stopped()` ends it. */
async function settleDayByDay(deps: ClickMaintenanceDeps, today: number, stopped: () => boolean): Promise<void> {
  for (let to = await firstBound(deps, today); to <= today; ) {
    const done = await deps.store.settleDays(to);
    if (done >= today || stopped()) return;
    await nextTurn();
    // Another process may have settled further meanwhile; a day without cells still moves the bound on.
    to = Math.max(done, to) + DAY_MS;
  }
}

/**
 * One pass: settle every day before today (UTC), then today's whole hours (so "the last 90 days" reads today as
 * settled rows and only the current hour's cells), then prune the raw log. Never rejects.
 */
export async function maintainClicks(deps: ClickMaintenanceDeps, stopped: () => boolean = () => false): Promise<void> {
  const now = deps.now();
  try {
    await settleDayByDay(deps, Math.floor(now / DAY_MS) * DAY_MS, stopped);
    if (!stopped()) await deps.store.settleHours(Math.floor(now / HOUR_MS) * HOUR_MS);
  } catch (err) {
    deps.onError(err);
  }
  if (deps.retentionDays <= 0 || stopped()) return;
  try {
    await deps.store.pruneClickLog(now - deps.retentionDays * DAY_MS);
  } catch (err) {
    deps.onError(err);
  }
}

/** What the loop needs besides a pass's: a store that folds busy link-hours. */
export type ClickUpkeepDeps = ClickMaintenanceDeps & { store: Pick<ClickStore, "foldBusyHours"> };

/** Folds the busy link-hours into their digests. Never rejects. */
export async function foldBusyHours(deps: ClickUpkeepDeps): Promise<void> {
  try {
    await deps.store.foldBusyHours();
  } catch (err) {
    deps.onError(err);
  }
}

/**
 * Runs a pass now and every `everyMs` (default 10 minutes), and a fold of busy link-hours every `foldEveryMs`
 * (default a minute), each one at a time and never both at once. stop() waits for the one under way; a pass ends
 * after the day it is settling (the next pass goes on from there).
 */
export function startClickMaintenance(deps: ClickUpkeepDeps, everyMs = CLICK_MAINTENANCE_INTERVAL_MS, foldEveryMs = FOLD_INTERVAL_MS): { stop(): Promise<void> } {
  let running: Promise<void> | null = null;
  let stopping = false;
  const start = (work: () => Promise<void>) => () => {
    running ??= work().finally(() => {
      running = null;
    });
  };
  const pass = start(() => maintainClicks(deps, () => stopping));
  pass();
  const timer = setInterval(pass, everyMs);
  timer.unref?.();
  const folds = setInterval(start(() => foldBusyHours(deps)), foldEveryMs);
  folds.unref?.();
  return {
    async stop() {
      stopping = true;
      clearInterval(timer);
      clearInterval(folds);
      await running;
    },
  };
}

/**
 * Audit-log retention (AUDIT_RETENTION_DAYS, default 365; 0 keeps entries for ever): every control-plane process
 * deletes entries older than that at start and hourly. The prune is a bounded statement (PRUNE_BATCH entries, the
 * oldest first, each its own transaction) repeated with a turn of the event loop between, so SQLite's write lock
 * is held briefly and a year of backlog after an upgrade or a lowered setting goes in many short steps; a round
 * stops after PRUNE_BATCHES_PER_ROUND and the next one, an hour later, goes on. Several processes pruning at once
 * is harmless: each statement deletes what is still there.
 */
import type { AuditStore } from "../../shared/ports.ts";

export const AUDIT_PRUNE_EVERY_MS = 3_600_000;
export const PRUNE_BATCH = 2_000;
export const PRUNE_BATCHES_PER_ROUND = 100;
const DAY_MS = 86_400_000;

export interface AuditRetentionDeps {
  store: Pick<AuditStore, "pruneAudit">;
  /** Days entries are kept; 0: for ever. */
  retentionDays: number;
  now: () => number;
  /** A round that failed (the database away for a while); never thrown, tried again next round. */
  onError: (err: unknown) => void;
}

const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** The instant before which entries go, or null when they are kept for ever. */
export const auditPruneBound = (now: number, retentionDays: number): number | null => (retentionDays > 0 ? now - retentionDays * DAY_MS : null);

/** One round: prunes batch by batch until a batch comes back short, at most PRUNE_BATCHES_PER_ROUND; returns how many went. */
export async function pruneAuditLog(deps: AuditRetentionDeps, batch = PRUNE_BATCH): Promise<number> {
  const before = auditPruneBound(deps.now(), deps.retentionDays);
  if (before === null) return 0;
  let total = 0;
  for (let i = 0; i < PRUNE_BATCHES_PER_ROUND; i++) {
    const n = await deps.store.pruneAudit(before, batch);
    total += n;
    if (n < batch) break;
    await nextTurn();
  }
  return total;
}

export interface AuditRetention {
  /** Stops the hourly rounds and waits for one under way. */
  stop(): Promise<void>;
}

/** Runs a round now and every AUDIT_PRUNE_EVERY_MS. */
export function startAuditRetention(deps: AuditRetentionDeps): AuditRetention {
  let running: Promise<unknown> = Promise.resolve();
  const round = () => {
    running = pruneAuditLog(deps).catch(deps.onError);
  };
  round();
  const timer = setInterval(round, AUDIT_PRUNE_EVERY_MS);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

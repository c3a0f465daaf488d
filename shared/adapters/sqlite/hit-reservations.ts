/** maxHits reservations in the SQLite store (LinkHitReservations): the links table's reserved_hits column. */
import type { HitReservation, LinkHitReservations, StoredHits } from "../../ports.ts";
import { BUSY_TIMEOUT_MS, type SqliteConnection } from "./connection.ts";

type ReservationRow = StoredHits & { maxHits: number | null };

/** Between tries of a reservation while the write lock is taken, and when to give up (as busy_timeout would). */
const LOCKED_RETRY_MS = 1;
const LOCKED_GIVE_UP_MS = BUSY_TIMEOUT_MS;

/** The reservation reserveHits makes (see LinkHitReservations): never lower, never beyond the limit. */
export function nextReservation(row: StoredHits & { maxHits: number }, block: number): number {
  return Math.max(row.reserved, Math.min(row.maxHits, Math.max(row.reserved, row.hits) + block));
}

export function sqliteHitReservations(c: SqliteConnection): LinkHitReservations {
  const read = (linkId: string) =>
    c.st<ReservationRow>(`SELECT hits, reserved_hits AS reserved, max_hits AS maxHits FROM links WHERE id = ?`).get(linkId);
  /** One immediate transaction, refused at once (SQLITE_BUSY) when another connection holds the write lock. */
  const reserveNow = (linkId: string, block: number): HitReservation | null => {
    c.db.run("PRAGMA busy_timeout = 0");
    try {
      // IMMEDIATE: the write lock is taken before the read, so the row cannot change in between.
      return c.db
        .transaction((): HitReservation | null => {
          const row = read(linkId);
          if (!row || row.maxHits === null) return null;
          const reserved = nextReservation({ ...row, maxHits: row.maxHits }, block);
          if (reserved !== row.reserved) c.st(`UPDATE links SET reserved_hits = ? WHERE id = ?`).run(reserved, linkId);
          return { hits: row.hits, reserved, maxHits: row.maxHits };
        })
        .immediate();
    } finally {
      c.db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  };
  return {
    async storedHits(linkId: string): Promise<StoredHits | null> {
      const row = read(linkId);
      return row ? { hits: row.hits, reserved: row.reserved } : null;
    },

    /**
     * Never waits on the event loop for the write lock (the click writer thread holds it while it writes a batch):
     * a try that finds it taken is made again LOCKED_RETRY_MS later, so only this link's clicks wait meanwhile.
     */
    async reserveHits(linkId: string, block: number): Promise<HitReservation | null> {
      const giveUpAt = Date.now() + LOCKED_GIVE_UP_MS;
      for (;;) {
        try {
          return reserveNow(linkId, block);
        } catch (err) {
          if ((err as { code?: unknown }).code !== "SQLITE_BUSY" || Date.now() > giveUpAt) throw err;
        }
        await Bun.sleep(LOCKED_RETRY_MS);
      }
    },

    async releaseHits(linkId: string, served: number): Promise<void> {
      c.st(`UPDATE links SET reserved_hits = ? WHERE id = ? AND reserved_hits > ?`).run(served, linkId, served);
    },
  };
}

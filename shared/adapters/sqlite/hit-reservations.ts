/** maxHits reservations in the SQLite store (LinkHitReservations): the links table's reserved_hits column. */
import type { HitReservation, LinkHitReservations, StoredHits } from "../../ports.ts";
import type { SqliteConnection } from "./connection.ts";

type ReservationRow = StoredHits & { maxHits: number | null };

/** The reservation reserveHits makes (see LinkHitReservations): never lower, never beyond the limit. */
export function nextReservation(row: StoredHits & { maxHits: number }, block: number): number {
  return Math.max(row.reserved, Math.min(row.maxHits, Math.max(row.reserved, row.hits) + block));
}

export function sqliteHitReservations(c: SqliteConnection): LinkHitReservations {
  const read = (linkId: string) =>
    c.st<ReservationRow>(`SELECT hits, reserved_hits AS reserved, max_hits AS maxHits FROM links WHERE id = ?`).get(linkId);
  return {
    async storedHits(linkId: string): Promise<StoredHits | null> {
      const row = read(linkId);
      return row ? { hits: row.hits, reserved: row.reserved } : null;
    },

    async reserveHits(linkId: string, block: number): Promise<HitReservation | null> {
      // IMMEDIATE: the write lock is taken before the read, so the row cannot change in between.
      return c.db
        .transaction((): HitReservation | null => {
          const row = read(linkId);
          if (!row || row.maxHits === null) return null;
          const reserved = nextReservation({ ...row, maxHits: row.maxHits }, block);
          if (reserved !== row.reserved) c.st(`UPDATE links SET reserved_hits = ? WHERE id = ?`).run(reserved, linkId);
          return { hits: row.hits, reservedBefore: row.reserved, reserved, maxHits: row.maxHits };
        })
        .immediate();
    },

    async releaseHits(linkId: string, served: number): Promise<void> {
      c.st(`UPDATE links SET reserved_hits = ? WHERE id = ? AND reserved_hits > ?`).run(served, linkId, served);
    },
  };
}

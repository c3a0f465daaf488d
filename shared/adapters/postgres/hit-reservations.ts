/** maxHits reservations in the Postgres store (LinkHitReservations): the links table's reserved_hits column. */
import type { HitReservation, LinkHitReservations, StoredHits } from "../../ports.ts";
import type { PostgresConnection } from "./connection.ts";

export function postgresHitReservations(c: PostgresConnection): LinkHitReservations {
  return {
    storedHits(linkId: string): Promise<StoredHits | null> {
      return c.run(async () => {
        const [row] = await c.sql<StoredHits[]>`SELECT hits, reserved_hits AS reserved FROM links WHERE id = ${linkId}`;
        return row ?? null;
      });
    },

    /**
     * One statement: the row is locked by the subquery (FOR UPDATE), which also yields the reservation before
     * the raise; concurrent reservations (other redirectors) queue on that lock and each sees the one before.
     */
    reserveHits(linkId: string, block: number): Promise<HitReservation | null> {
      return c.run(async () => {
        const [row] = await c.sql<HitReservation[]>`
          UPDATE links AS l
          SET reserved_hits = GREATEST(l.reserved_hits, LEAST(l.max_hits, GREATEST(l.reserved_hits, l.hits) + ${block}::bigint))
          FROM (SELECT id, reserved_hits FROM links WHERE id = ${linkId} AND max_hits IS NOT NULL FOR UPDATE) AS before
          WHERE l.id = before.id
          RETURNING l.hits, before.reserved_hits AS "reservedBefore", l.reserved_hits AS reserved, l.max_hits AS "maxHits"`;
        return row ?? null;
      });
    },

    releaseHits(linkId: string, served: number): Promise<void> {
      return c.run(async () => {
        await c.sql`UPDATE links SET reserved_hits = ${served} WHERE id = ${linkId} AND reserved_hits > ${served}`;
      });
    },
  };
}

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

    /** One statement: concurrent reservations (other redirectors) queue on the row's lock, each raising the last. */
    reserveHits(linkId: string, block: number): Promise<HitReservation | null> {
      return c.run(async () => {
        const [row] = await c.sql<HitReservation[]>`
          UPDATE links
          SET reserved_hits = GREATEST(reserved_hits, LEAST(max_hits, GREATEST(reserved_hits, hits) + ${block}::bigint))
          WHERE id = ${linkId} AND max_hits IS NOT NULL
          RETURNING hits, reserved_hits AS reserved, max_hits AS "maxHits"`;
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

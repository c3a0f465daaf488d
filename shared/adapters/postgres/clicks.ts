/** The clicks-and-stats role of the Postgres store: the raw click log, hourly rollups, hit counts and stats. */
import type { ClickStore, RollupStats, StoredClick } from "../../ports.ts";
import { clickLogRows, parseClickLogRow } from "../click-log.ts";
import { EXPORT_PAGE } from "../export-support.ts";
import { foldTotals, type TotalRow } from "../link-store-support.ts";
import type { PostgresConnection } from "./connection.ts";

export function postgresClicks(c: PostgresConnection): ClickStore {
  return {
    /**
     * One statement, so one transaction: log rows of deleted links are filtered out, rows written before (a
     * redelivered batch) are skipped by ON CONFLICT, and only the rows inserted (RETURNING) let their rollup
     * cells and hit counts in. A batch of 2,000 clicks of one link is a handful of log rows and cells, not 2,000
     * rows, which took Postgres from about 5.7 to 0.7 µs of CPU per click.
     */
    recordClicks(clicks: StoredClick[]): Promise<void> {
      if (clicks.length === 0) return Promise.resolve();
      const rows = clickLogRows(clicks);
      const cells = rows.flatMap((r, i) => r.cells.map((c) => ({ row: i, c })));
      const col = <T>(pick: (r: (typeof rows)[number]) => T) => rows.map(pick);
      const cellCol = <T>(pick: (x: (typeof cells)[number]) => T) => cells.map(pick);
      // The data texts go as one string, not as a text[] parameter: postgres.js escapes every quote of an array
      // element with regular expressions (a quarter of the consumer's CPU), and these are JSON, full of quotes.
      // JSON.stringify writes control characters escaped, so U+0001 never occurs inside them and can separate them.
      const data = rows.map((r) => r.data).join("\u0001");
      return c.run(async () => {
        await c.sql`
          WITH batch AS (
            SELECT * FROM unnest(
              ${col((r) => r.linkId)}::text[], ${col((r) => r.batch)}::text[], ${col((r) => r.firstTs)}::bigint[],
              ${col((r) => r.lastTs)}::bigint[], ${col((r) => r.clicks)}::integer[], string_to_array(${data}::text, chr(1))
            ) AS t(link_id, batch_id, first_ts, last_ts, clicks, data)
          ), ins AS (
            INSERT INTO click_batches (link_id, batch_id, first_ts, last_ts, clicks, data)
            SELECT b.* FROM batch b WHERE EXISTS (SELECT 1 FROM links l WHERE l.id = b.link_id)
            ON CONFLICT (link_id, batch_id) DO NOTHING
            RETURNING link_id, batch_id, clicks
          ), cell AS (
            SELECT * FROM unnest(
              ${cellCol((x) => rows[x.row]!.linkId)}::text[], ${cellCol((x) => rows[x.row]!.batch)}::text[],
              ${cellCol((x) => x.c.hour)}::bigint[], ${cellCol((x) => x.c.device)}::text[], ${cellCol((x) => x.c.browser)}::text[],
              ${cellCol((x) => x.c.country)}::text[], ${cellCol((x) => x.c.variant)}::integer[], ${cellCol((x) => x.c.clicks)}::integer[]
            ) AS t(link_id, batch_id, hour, device, browser, country, variant, clicks)
          ), rolled AS (
            INSERT INTO click_rollups AS r (link_id, hour, device, browser, country, variant, clicks)
            SELECT c.link_id, c.hour, c.device, c.browser, c.country, c.variant, sum(c.clicks)
            FROM cell c JOIN ins i ON i.link_id = c.link_id AND i.batch_id = c.batch_id
            GROUP BY 1, 2, 3, 4, 5, 6
            ORDER BY 1, 2, 3, 4, 5, 6 -- a fixed lock order keeps concurrent batches from deadlocking
            ON CONFLICT (link_id, hour, device, browser, country, variant)
            DO UPDATE SET clicks = r.clicks + excluded.clicks
          )
          UPDATE links SET hits = links.hits + n.clicks
          FROM (SELECT link_id, sum(clicks) AS clicks FROM ins GROUP BY link_id) AS n
          WHERE links.id = n.link_id`;
      });
    },

    async *rawClicks(linkId: string): AsyncIterable<StoredClick> {
      const rows = c.sql<{ batch: string; data: string }[]>`
        SELECT batch_id AS batch, data FROM click_batches WHERE link_id = ${linkId} ORDER BY first_ts, batch_id`;
      for await (const page of rows.cursor(EXPORT_PAGE)) {
        for (const r of page) yield* parseClickLogRow(linkId, r.batch, r.data);
      }
    },

    getStats(linkId: string, fromHour: number): Promise<RollupStats> {
      return c.run(async () => {
        const [totals, hourly] = await Promise.all([
          c.sql<TotalRow[]>`SELECT dimension, value, clicks FROM click_totals WHERE link_id = ${linkId}`,
          c.sql<{ hour: number; clicks: number }[]>`
            SELECT hour, clicks FROM click_hourly WHERE link_id = ${linkId} AND hour >= ${fromHour} ORDER BY hour`,
        ]);
        return foldTotals([...totals], [...hourly]);
      });
    },
  };
}

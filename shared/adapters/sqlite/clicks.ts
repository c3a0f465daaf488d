/** The clicks-and-stats role of the SQLite store: the raw click log, hourly rollups, hit counts and stats. */
import type { ClickStore, RollupStats, StoredClick } from "../../ports.ts";
import { clickLogRows, parseClickLogRow, sumCells } from "../click-log.ts";
import { foldTotals, type TotalRow } from "../link-store-support.ts";
import { CLICK_CHUNK, type SqliteConnection } from "./connection.ts";

const INSERT_CLICK_BATCH = `INSERT INTO click_batches (link_id, batch_id, first_ts, last_ts, clicks, data)
  VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (link_id, batch_id) DO NOTHING`;

export function sqliteClicks(c: SqliteConnection): ClickStore {
  return {
    async recordClicks(clicks: StoredClick[]): Promise<void> {
      if (clicks.length === 0) return;
      const rows = clickLogRows(clicks);
      c.db
        .transaction(() => {
          // Rows of links deleted meanwhile are dropped; of the rest, only those new to the log (a redelivered
          // batch is skipped by ON CONFLICT) count towards rollups and hits, summed here and written once per
          // cell and link.
          const linkIds = [...new Set(rows.map((r) => r.linkId))];
          const live = new Set<string>();
          for (let i = 0; i < linkIds.length; i += CLICK_CHUNK) {
            const part = linkIds.slice(i, i + CLICK_CHUNK);
            const found = c.st<{ id: string }>(`SELECT id FROM links WHERE id IN (${part.map(() => "?").join(",")})`).all(...part);
            for (const r of found) live.add(r.id);
          }
          const insert = c.st(INSERT_CLICK_BATCH);
          const written = rows.filter(
            (r) => live.has(r.linkId) && insert.run(r.linkId, r.batch, r.firstTs, r.lastTs, r.clicks, r.data).changes > 0,
          );
          const rollup = c.st(
            `INSERT INTO click_rollups (link_id, hour, device, browser, country, variant, clicks)
             VALUES (?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (link_id, hour, device, browser, country, variant) DO UPDATE SET clicks = clicks + excluded.clicks`,
          );
          for (const { linkId, cell: c } of sumCells(written)) {
            rollup.run(linkId, c.hour, c.device, c.browser, c.country, c.variant, c.clicks);
          }
          const hits = new Map<string, number>();
          for (const r of written) hits.set(r.linkId, (hits.get(r.linkId) ?? 0) + r.clicks);
          const bump = c.st(`UPDATE links SET hits = hits + ? WHERE id = ?`);
          for (const [linkId, n] of hits) bump.run(n, linkId);
        })
        .immediate();
    },

    async *rawClicks(linkId: string): AsyncIterable<StoredClick> {
      // Its own statement, not a cached one: another call could run a shared statement between two yields.
      const rows = c.db.prepare<{ batch: string; data: string }, [string]>(
        `SELECT batch_id AS batch, data FROM click_batches WHERE link_id = ? ORDER BY first_ts, batch_id`,
      );
      try {
        for (const r of rows.iterate(linkId)) yield* parseClickLogRow(linkId, r.batch, r.data);
      } finally {
        rows.finalize();
      }
    },

    async getStats(linkId: string, fromHour: number): Promise<RollupStats> {
      const totals = c.st<TotalRow>(`SELECT dimension, value, clicks FROM click_totals WHERE link_id = ?`).all(linkId);
      const hourly = c.st<{ hour: number; clicks: number }>(
        `SELECT hour, clicks FROM click_hourly WHERE link_id = ? AND hour >= ? ORDER BY hour`,
      ).all(linkId, fromHour);
      return foldTotals(totals, hourly);
    },
  };
}

/**
 * SQLite reads of the account totals, the ranked link totals and the links with recent cells (migration 26,
 * migration-account-totals.ts; docs/adr/0013-account-top-links.md). Triggers on click_settled keep the totals; this
 * file reads them, notes which links have cells in hours not settled yet, and prunes those notes.
 */
import type { AccountDayTotal, ClickStore, LinkTotal, RankGrain, RankRun } from "../../ports.ts";
import { DAY_MS, type CellSum } from "../click-log.ts";
import { CLICK_CHUNK, type SqliteConnection } from "./connection.ts";

const NOTE_RECENT = `INSERT OR IGNORE INTO click_recent (hour, account_id, link_id) SELECT ?, account_id, id FROM links WHERE id = ?`;

/**
 * Notes the links of `cells` (just written) that have cells in hours not settled yet (from `hours`, the state's
 * first unsettled hour): an account's read of those hours then probes only them. One row per link and hour, so a
 * link's second batch of the hour finds its row (a primary-key probe), not a new one.
 */
export function noteRecentCells(c: SqliteConnection, cells: CellSum[], hours: number): void {
  const seen = new Set<string>();
  const note = c.st(NOTE_RECENT);
  for (const x of cells) {
    if (x.hour < hours) continue;
    // A link's cells of one hour: one probe, not one per cell.
    const key = `${x.hour}\u0001${x.linkId}`;
    if (seen.has(key)) continue;
    seen.add(key);
    note.run(x.hour, x.linkId);
  }
}

/** Forgets the notes of hours before `before` (a day before the settled hours: a reader that saw the state before keeps them). */
export function pruneRecentCells(c: SqliteConnection, settledHours: number): void {
  c.st(`DELETE FROM click_recent WHERE hour < ?`).run(settledHours - DAY_MS);
}

/** How many hours an account's read of unsettled hours seeks one by one; a longer range probes each link. */
export const RECENT_HOURS_MAX = 48;

/** An account's cells in one hour not settled: the noted links' primary-key ranges only. */
export const RECENT_CELLS = `SELECT c.link_id, c.hour, c.dims, c.bot, c.clicks, c.visitors
  FROM click_recent r CROSS JOIN click_cells c
  WHERE r.hour = ? AND r.account_id = ? AND c.link_id = r.link_id AND c.hour = r.hour`;

type Row = { linkId: string; clicks: number; visitors: number };

export function sqliteAccountTotals(c: SqliteConnection): Pick<ClickStore, "readAccountTotals" | "readRankedLinks" | "sumLinkTotals"> {
  return {
    async *readAccountTotals(accountId: string, from: number, to: number): AsyncIterable<AccountDayTotal> {
      const rows = c.st<{ bucket: number; bot: number; clicks: number; visitors: number }>(
        `SELECT bucket, bot, clicks, visitors FROM click_account_totals WHERE account_id = ? AND bucket >= ? AND bucket < ?`,
      ).all(accountId, from, to);
      for (const r of rows) yield { bucket: r.bucket, bot: r.bot === 1, clicks: r.clicks, visitors: r.visitors };
    },

    async readRankedLinks(accountId: string, grain: RankGrain, bucket: number, bot: boolean, offset: number, limit: number): Promise<LinkTotal[]> {
      return c.st<Row>(
        `SELECT link_id AS linkId, clicks, visitors FROM click_link_totals
         WHERE account_id = ? AND grain = ? AND bucket = ? AND bot = ? ORDER BY clicks DESC, link_id LIMIT ? OFFSET ?`,
      ).all(accountId, grain, bucket, bot ? 1 : 0, limit, offset);
    },

    async sumLinkTotals(accountId: string, linkIds: string[], runs: RankRun[], bots: boolean[]): Promise<LinkTotal[]> {
      if (linkIds.length === 0 || runs.length === 0 || bots.length === 0) return [];
      const within = runs.map(() => `(grain = ? AND bucket >= ? AND bucket < ?)`).join(" OR ");
      const runArgs = runs.flatMap((r) => [r.grain, r.from, r.to]);
      const botSql = bots.length === 2 ? "" : ` AND bot = ${bots[0] ? 1 : 0}`;
      const out: LinkTotal[] = [];
      for (let i = 0; i < linkIds.length; i += CLICK_CHUNK) {
        const part = linkIds.slice(i, i + CLICK_CHUNK);
        const sql = `SELECT link_id AS linkId, sum(clicks) AS clicks, sum(visitors) AS visitors FROM click_link_totals
          WHERE link_id IN (${part.map(() => "?").join(",")}) AND +account_id = ?${botSql} AND (${within}) GROUP BY link_id`;
        out.push(...c.db.prepare<Row, (string | number)[]>(sql).all(...part, accountId, ...runArgs));
      }
      return out;
    },
  };
}

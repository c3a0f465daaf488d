/**
 * Postgres reads of the account totals and the ranked link totals (migration 28, migration-account-totals.ts;
 * docs/adr/0013-account-top-links.md), and of an account's cells in hours not settled yet through the cells' BRIN
 * index on hour (what the hours hold of every account, not a primary-key probe per link of this one).
 */
import type { AccountDayTotal, ClickStore, LinkTotal, RankGrain, RankRun } from "../../ports.ts";
import { allCells } from "./cell-sets.ts";
import type { PostgresConnection } from "./connection.ts";

/** How many hours an account's read of unsettled hours reads by hour; a longer range reads link by link. */
export const RECENT_HOURS_MAX = 48;

/** An account's cells in hours [$2, $3), found by hour (BRIN) and kept by their link's account ($1). */
export const RECENT_CELLS = `SELECT * FROM ${allCells("t.hour >= $2 AND t.hour < $3 AND l.account_id = $1", "JOIN links l ON l.id = t.link_id")} c`;

type Row = { linkId: string; clicks: unknown; visitors: unknown };
const toLinkTotal = (r: Row): LinkTotal => ({ linkId: r.linkId, clicks: Number(r.clicks), visitors: Number(r.visitors) });

export function postgresAccountTotals(c: PostgresConnection): Pick<ClickStore, "readAccountTotals" | "readRankedLinks" | "sumLinkTotals"> {
  return {
    async *readAccountTotals(accountId: string, from: number, to: number): AsyncIterable<AccountDayTotal> {
      const rows = await c.run(() => c.sql<{ bucket: unknown; bot: boolean; clicks: unknown; visitors: unknown }[]>`
        SELECT bucket, bot, clicks, visitors FROM click_account_totals WHERE account_id = ${accountId} AND bucket >= ${from} AND bucket < ${to}`);
      for (const r of rows) yield { bucket: Number(r.bucket), bot: r.bot, clicks: Number(r.clicks), visitors: Number(r.visitors) };
    },

    async readRankedLinks(accountId: string, grain: RankGrain, bucket: number, bot: boolean, offset: number, limit: number): Promise<LinkTotal[]> {
      const rows = await c.run(() => c.sql<Row[]>`
        SELECT link_id AS "linkId", clicks, visitors FROM click_link_totals
        WHERE account_id = ${accountId} AND grain = ${grain} AND bucket = ${bucket} AND bot = ${bot}
        ORDER BY clicks DESC, link_id LIMIT ${limit} OFFSET ${offset}`);
      return rows.map(toLinkTotal);
    },

    async sumLinkTotals(accountId: string, linkIds: string[], runs: RankRun[], bots: boolean[]): Promise<LinkTotal[]> {
      if (linkIds.length === 0 || runs.length === 0 || bots.length === 0) return [];
      const within = runs.map((r) => `(t.grain = '${r.grain === "day" ? "day" : "month"}' AND t.bucket >= ${Number(r.from)} AND t.bucket < ${Number(r.to)})`).join(" OR ");
      const botSql = bots.length === 2 ? "" : ` AND t.bot = ${bots[0] ? "true" : "false"}`;
      const rows = await c.run(() => c.sql.unsafe<Row[]>(
        `SELECT t.link_id AS "linkId", sum(t.clicks) AS clicks, sum(t.visitors) AS visitors
         FROM unnest(string_to_array($1::text, chr(1))) AS i(id) JOIN click_link_totals t ON t.link_id = i.id
         WHERE t.account_id = $2${botSql} AND (${within}) GROUP BY t.link_id`,
        [linkIds.join("\u0001"), accountId],
      ));
      return rows.map(toLinkTotal);
    },
  };
}

/**
 * Postgres reads of the account totals and the ranked link totals (migration 28, migration-account-totals.ts;
 * docs/adr/0013-account-top-links.md), and of an account's cells in hours not settled yet through the cells' BRIN
 * index on hour (what the hours hold of every account, not a primary-key probe per link of this one).
 */
import type { AccountDayTotal, ClickStore, LinkHourTotal, LinkTotal, RankGrain, RankRun } from "../../ports.ts";
import { allCells } from "./cell-sets.ts";
import type { PostgresConnection } from "./connection.ts";

/** How many hours an account's read of unsettled hours reads by hour; a longer range reads link by link. */
export const RECENT_HOURS_MAX = 48;

/**
 * An account's cells in hours [$2, $3): every cell of those hours, found by hour (BRIN; materialized, so the planner
 * does not walk the cells' primary key instead), kept by their link's account ($1) with a primary-key probe of links
 * each (in links' collation, so its index serves). Joined instead, the planner hashed every link of the account
 * (10,000 links: 9 ms of a 21 ms read).
 */
export const RECENT_CELLS = `WITH hour_cells AS MATERIALIZED (SELECT * FROM ${allCells("t.hour >= $2 AND t.hour < $3")} u)
  SELECT h.* FROM hour_cells h WHERE (SELECT l.account_id FROM links l WHERE l.id = h.link_id COLLATE "default") = $1`;

type Row = { linkId: string; clicks: unknown; visitors: unknown };

const HOUR_MS = 3_600_000;
const toLinkTotal = (r: Row): LinkTotal => ({ linkId: r.linkId, clicks: Number(r.clicks), visitors: Number(r.visitors) });

export function postgresAccountTotals(
  c: PostgresConnection, settledHours: () => Promise<number>,
): Pick<ClickStore, "readAccountTotals" | "readRankedLinks" | "sumLinkTotals" | "readRecentLinkTotals"> {
  return {
    async readRecentLinkTotals(accountId: string, fromHour: number, toHour: number): Promise<LinkHourTotal[] | null> {
      if (toHour - fromHour > RECENT_HOURS_MAX * HOUR_MS || fromHour < (await settledHours())) return null;
      // JIT off, as for every account read: costed per row, the plan crossed jit_above_cost for nothing.
      const rows = await c.run(() => c.sql.begin(async (tx) => {
        await tx`SET LOCAL jit = off`;
        return tx.unsafe<{ linkId: string; hour: unknown; bot: boolean; clicks: unknown; visitors: unknown }[]>(
          `SELECT r.link_id AS "linkId", r.hour, r.bot, sum(r.clicks) AS clicks, sum(r.visitors) AS visitors FROM (${RECENT_CELLS}) r GROUP BY 1, 2, 3`,
          [accountId, fromHour, toHour],
        );
      }));
      return rows.map((r) => ({ linkId: r.linkId, hour: Number(r.hour), bot: r.bot, clicks: Number(r.clicks), visitors: Number(r.visitors) }));
    },

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
      // One primary-key range per link and run (link, grain, bucket from..to).
      const rows = await c.run(() => c.sql.unsafe<Row[]>(
        `SELECT t.link_id AS "linkId", sum(t.clicks) AS clicks, sum(t.visitors) AS visitors
         FROM unnest(string_to_array($1::text, chr(1))) AS i(id)
         CROSS JOIN unnest(string_to_array($3::text, ','), string_to_array($4::text, ',')::bigint[], string_to_array($5::text, ',')::bigint[]) AS r(grain, b0, b1)
         JOIN click_link_totals t ON t.link_id = i.id AND t.grain = r.grain AND t.bucket >= r.b0 AND t.bucket < r.b1
         WHERE t.account_id = $2 AND t.bot = ANY(string_to_array($6::text, ',')::boolean[]) GROUP BY t.link_id`,
        [linkIds.join("\u0001"), accountId, runs.map((r) => r.grain).join(","), runs.map((r) => r.from).join(","), runs.map((r) => r.to).join(","), bots.join(",")],
      ));
      return rows.map(toLinkTotal);
    },
  };
}

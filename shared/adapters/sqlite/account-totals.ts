/**
 * SQLite reads of the account totals, the ranked link totals and the links with recent cells (migration 26,
 * migration-account-totals.ts; docs/adr/0013-account-top-links.md). Triggers on click_settled keep the totals; this
 * file reads them, notes which links have cells in hours not settled yet, and prunes those notes.
 */
import type { AccountDayTotal, ClickStore, LinkHourTotal, LinkTotal, RankGrain, RankRun } from "../../ports.ts";
import { DAY_MS, type CellSum } from "../click-log.ts";
import { CLICK_CHUNK, type SqliteConnection } from "./connection.ts";

const NOTE_RECENT = `INSERT OR IGNORE INTO click_recent (hour, account_id, link_id) VALUES (?, ?, ?)`;
const NOTED = `SELECT 1 AS n FROM click_recent WHERE hour = ? AND account_id = ? AND link_id = ?`;

/** Links' accounts, per connection (a link never changes account): a note needs its account without reading the link's row. */
const accountsOf = new WeakMap<SqliteConnection, Map<string, string>>();
/** Past this many links remembered, the memo starts again (about 100 bytes a link). */
const ACCOUNT_MEMO_MAX = 200_000;

function accountMemo(c: SqliteConnection, linkIds: Iterable<string>): Map<string, string> {
  let memo = accountsOf.get(c);
  if (!memo || memo.size > ACCOUNT_MEMO_MAX) accountsOf.set(c, (memo = new Map()));
  const missing = [...new Set(linkIds)].filter((id) => !memo.has(id));
  for (let i = 0; i < missing.length; i += CLICK_CHUNK) {
    const part = missing.slice(i, i + CLICK_CHUNK);
    const rows = c.st<{ id: string; account_id: string }>(`SELECT id, account_id FROM links WHERE id IN (${part.map(() => "?").join(",")})`).all(...part);
    for (const r of rows) memo.set(r.id, r.account_id);
  }
  return memo;
}

/**
 * What a connection knows is noted and committed, per hour: `noted` (link ids), and the notes its last call inserted
 * (`pending`), known committed once a later call finds one of them (a transaction writes all or none of them).
 */
interface NoteMemo {
  noted: Map<number, Set<string>>;
  pending: [number, string, string][];
}
const notesOf = new WeakMap<SqliteConnection, NoteMemo>();

/**
 * Notes the links of `cells` (just written) that have cells in hours not settled yet (from `hours`, the state's
 * first unsettled hour): an account's read of those hours then probes only them. A connection remembers the notes
 * it knows are committed and writes only the others: on the writer's path (4,096 clicks to 4,096 of 10,000 links a
 * batch, recordClicks about 10 µs a click) a note written per cell cost 2 µs reading the link's row for its account
 * and 1.1 µs with the accounts remembered; remembered notes cost a set lookup. Called once per transaction (the
 * writes of a batch, an import): a note found existing at the start of a call was committed before it.
 */
export function noteRecentCells(c: SqliteConnection, cells: CellSum[], hours: number): void {
  const recent = cells.filter((x) => x.hour >= hours);
  let memo = notesOf.get(c);
  if (!memo) notesOf.set(c, (memo = { noted: new Map(), pending: [] }));
  const { noted } = memo;
  const notedIn = (hour: number) => noted.get(hour) ?? noted.set(hour, new Set()).get(hour)!;
  // The last call's inserts: all committed if one is there (the same transaction's rollback takes all of them).
  if (memo.pending.length > 0 && c.st(NOTED).get(...memo.pending[0]!)) for (const [hour, , link] of memo.pending) notedIn(hour).add(link);
  memo.pending = [];
  for (const hour of noted.keys()) if (hour < hours) noted.delete(hour);
  if (recent.length === 0) return;

  const fresh = recent.filter((x) => !noted.get(x.hour)?.has(x.linkId));
  if (fresh.length === 0) return;
  const accounts = accountMemo(c, fresh.map((x) => x.linkId));
  const note = c.st(NOTE_RECENT);
  for (const x of fresh) {
    const account = accounts.get(x.linkId);
    // A link not found was deleted meanwhile; a link's second cell of the hour finds its note made.
    if (account === undefined || noted.get(x.hour)?.has(x.linkId)) continue;
    if (note.run(x.hour, account, x.linkId).changes > 0) memo.pending.push([x.hour, account, x.linkId]);
    notedIn(x.hour).add(x.linkId);
  }
  // Made in this transaction, not known committed yet: forgotten until the next call finds them.
  for (const [hour, , link] of memo.pending) noted.get(hour)!.delete(link);
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

/** The same, summed per link and bot flag (the hour is given). */
const RECENT_LINK_TOTALS = `SELECT c.link_id AS linkId, c.bot, sum(c.clicks) AS clicks, sum(c.visitors) AS visitors
  FROM click_recent r CROSS JOIN click_cells c
  WHERE r.hour = ? AND r.account_id = ? AND c.link_id = r.link_id AND c.hour = r.hour GROUP BY c.link_id, c.bot`;

const HOUR_MS = 3_600_000;

/** Whether an account's hours [fromHour, toHour) are read through the notes: all unsettled (from `settledHours`), few. */
export const readsRecent = (fromHour: number, toHour: number, settledHours: number) =>
  fromHour >= settledHours && toHour - fromHour <= RECENT_HOURS_MAX * HOUR_MS;

type Row = { linkId: string; clicks: number; visitors: number };

export function sqliteAccountTotals(
  c: SqliteConnection, settledHours: () => number,
): Pick<ClickStore, "readAccountTotals" | "readRankedLinks" | "sumLinkTotals" | "readRecentLinkTotals"> {
  return {
    async readRecentLinkTotals(accountId: string, fromHour: number, toHour: number): Promise<LinkHourTotal[] | null> {
      if (!readsRecent(fromHour, toHour, settledHours())) return null;
      const out: LinkHourTotal[] = [];
      const read = c.st<{ linkId: string; bot: number; clicks: number; visitors: number }>(RECENT_LINK_TOTALS);
      for (let h = fromHour - (fromHour % HOUR_MS); h < toHour; h += HOUR_MS) {
        for (const r of read.all(h, accountId)) out.push({ linkId: r.linkId, hour: h, bot: r.bot === 1, clicks: r.clicks, visitors: r.visitors });
      }
      return out;
    },

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

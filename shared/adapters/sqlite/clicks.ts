/**
 * The clicks-and-stats role of the SQLite store: raw click log, rollup cells, settled totals and hit counts
 * (shared/ports/clicks.ts; docs/analytics.md). SQLite has one writer at a time, so each write is one IMMEDIATE
 * transaction doing its sums in JS.
 */
import type { Statement } from "bun:sqlite";
import { dimValueReader, type Dimension } from "../../clicks/dimensions.ts";
import type { CellSumRow, ClickCell, ClickScope, ClickStore, SettledGrain, SettledTotal, StoredClick } from "../../ports.ts";
import {
  byBatch, clickLogRow, DAY_MS, dayStart, HOUR_KEYS, parseClickLogRow, settledKey, settledRows, sumCells, toClickCell,
  toSettledTotal, type CellSum,
} from "../click-log.ts";
import { hourStart } from "../link-store-support.ts";
import { CLICK_CHUNK, type SqliteConnection } from "./connection.ts";
import { noteRecentCells, pruneRecentCells, RECENT_CELLS, readsRecent, sqliteAccountTotals } from "./account-totals.ts";
import { BusyHours, DigestSums, FOLD_MIN_CELLS, isDigested } from "../hour-digests.ts";

const HOUR_MS = 3_600_000;
const BOTH: readonly boolean[] = [false, true];

const INSERT_LOG = `INSERT INTO click_log (batch_id, first_ts, last_ts, clicks, data) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (batch_id) DO NOTHING`;
const UPSERT_CELL = `INSERT INTO click_cells (link_id, hour, dims, bot, clicks, visitors) VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (link_id, hour, dims, bot) DO UPDATE SET clicks = clicks + excluded.clicks, visitors = visitors + excluded.visitors`;
const UPSERT_SETTLED = `INSERT INTO click_settled (link_id, dimension, bucket, value, bot, clicks, visitors) VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (link_id, dimension, bucket, value, bot)
  DO UPDATE SET clicks = clicks + excluded.clicks, visitors = visitors + excluded.visitors`;
/** The earliest cell's hour, a primary-key seek per link. */
const FIRST_CELL_HOUR = `SELECT min((SELECT min(hour) FROM click_cells c WHERE c.link_id = l.id)) AS h FROM links l`;
/** Every link's cells in [?, ?), link after link (CROSS JOIN: links first, then each link's primary-key range). */
const CELLS_BY_LINK = `SELECT c.link_id AS linkId, c.hour, c.dims, c.bot, c.clicks, c.visitors
  FROM links l CROSS JOIN click_cells c WHERE c.link_id = l.id AND c.hour >= ? AND c.hour < ?`;
/** A link's cells in [?, ?), as arrays (readCellSums). */
const CELL_ROWS_OF_LINK = `SELECT hour, dims, bot, clicks, visitors FROM click_cells WHERE link_id = ? AND hour >= ? AND hour < ?`;
/** A link's cells in [?, ?) with what is not folded into their hour's digest yet, as arrays (readCellSums). */
const UNFOLDED_ROWS_OF_LINK = `SELECT hour, dims, bot, clicks - folded_clicks, visitors - folded_visitors FROM click_cells
  WHERE link_id = ? AND hour >= ? AND hour < ? AND clicks > folded_clicks`;
/** A link's digest rows of one dimension in [?, ?), as arrays. */
const DIGEST_ROWS_OF_LINK = `SELECT hour, value, bot, clicks, visitors FROM click_hour_digests
  WHERE link_id = ? AND dimension = ? AND hour >= ? AND hour < ?`;
/** One link-hour's cells not folded yet, and marking them folded (foldBusyHours). */
const UNFOLDED_CELLS = `SELECT dims, bot, clicks - folded_clicks, visitors - folded_visitors FROM click_cells
  WHERE link_id = ? AND hour = ? AND clicks > folded_clicks`;
const MARK_FOLDED = `UPDATE click_cells SET folded_clicks = clicks, folded_visitors = visitors
  WHERE link_id = ? AND hour = ? AND clicks > folded_clicks`;
const UPSERT_DIGEST = `INSERT INTO click_hour_digests (link_id, dimension, hour, value, bot, clicks, visitors) VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (link_id, dimension, hour, value, bot) DO UPDATE SET clicks = clicks + excluded.clicks, visitors = visitors + excluded.visitors`;
/** Link-hours not settled with at least ? cells not folded, of the links noted as having cells then (a first fold). */
const BUSY_NOTED_HOURS = `SELECT r.link_id AS linkId, r.hour FROM click_recent r WHERE r.hour >= ?
  AND (SELECT count(*) FROM click_cells c WHERE c.link_id = r.link_id AND c.hour = r.hour AND c.clicks > c.folded_clicks) >= ?`;
const SETTLE_STATE = `SELECT settled_before AS days, max(settled_before, hours_before) AS hours FROM click_settle_state WHERE id = 1`;
/** Digests of settled hours: their reads take every cell (a digest table of busy link-hours only, so a scan is cheap). */
const DELETE_SETTLED_DIGESTS = `DELETE FROM click_hour_digests WHERE hour < ?`;
/** A link's hourly dimension rows of one dimension in [?, ?): settleDays replaces them with the day's rows. */
const DELETE_HOUR_ROWS = `DELETE FROM click_settled WHERE link_id = ? AND dimension = ? AND bucket >= ? AND bucket < ?`;

/** Runs a statement of its own over `args`, yielding rows: a shared statement could be reused between two yields. */
function* iterate<Row>(c: SqliteConnection, sql: string, args: (string | number)[]): Generator<Row> {
  const st: Statement<Row, (string | number)[]> = c.db.prepare(sql);
  try {
    yield* st.iterate(...args);
  } finally {
    st.finalize();
  }
}

/** The part of a read's WHERE clause (and its arguments) that limits it to the scope's links. */
function scopeSql(scope: ClickScope, table: string): { from: string; where: string; arg: string } {
  if ("linkId" in scope) return { from: `${table} t`, where: "t.link_id = ?", arg: scope.linkId };
  // CROSS JOIN keeps SQLite reading the account's links first, then each link's rows by its primary key.
  return { from: `links l CROSS JOIN ${table} t`, where: "l.account_id = ? AND t.link_id = l.id", arg: scope.accountId };
}

/** The first day not settled, and the first hour whose cells are not in settled totals (settledHoursBefore). */
const settleStateOf = (c: SqliteConnection) => c.st<{ days: number; hours: number }>(SETTLE_STATE).get()!;

function addSettled(c: SqliteConnection, cells: CellSum[], hourlyFrom?: number): void {
  const upsert = c.st(UPSERT_SETTLED);
  for (const r of settledRows(cells, hourlyFrom)) upsert.run(r.linkId, r.dimension, r.bucket, r.value, r.bot ? 1 : 0, r.clicks, r.visitors);
}

/** Per connection, the cells it wrote to each link-hour not settled since that link-hour's last fold. */
const busyHoursOf = new WeakMap<SqliteConnection, BusyHours>();
const busyHours = (c: SqliteConnection) => busyHoursOf.get(c) ?? busyHoursOf.set(c, new BusyHours()).get(c)!;

/**
 * Adds cells just written whose day or hour is settled already (a late click, an import) to the settled totals;
 * counts the rest towards their link-hour's fold.
 */
export function settleLate(c: SqliteConnection, cells: CellSum[]): void {
  const state = settleStateOf(c);
  const late = cells.filter((x) => x.hour < state.hours);
  if (late.length > 0) addSettled(c, late, state.days);
  noteRecentCells(c, cells, state.hours);
  const busy = busyHours(c);
  for (const x of cells) if (x.hour >= state.hours) busy.note(x.linkId, x.hour);
}

/** Folds one link-hour's cells not folded yet into its digest, in one transaction; whether there were any. */
function foldLinkHour(c: SqliteConnection, linkId: string, hour: number): boolean {
  return c.db
    .transaction(() => {
      const cells = c.st(UNFOLDED_CELLS).values(linkId, hour) as [string, number, number, number][];
      if (cells.length === 0) return false;
      const sums = new DigestSums();
      for (const [dims, bot, clicks, visitors] of cells) sums.add(dims, bot === 1, clicks, visitors);
      const upsert = c.st(UPSERT_DIGEST);
      for (const r of sums.rows()) upsert.run(linkId, r.dimension, hour, r.value, r.bot ? 1 : 0, r.clicks, r.visitors);
      c.st(MARK_FOLDED).run(linkId, hour);
      return true;
    })
    .immediate();
}

/**
 * Sums the cells of [from, to) link by link through the cells' primary key (no index on hour: it cost about 4 µs per
 * cell written), handing each link's cells to `settle`: memory follows one link's rows, never the backlog.
 */
function eachLinksCells(c: SqliteConnection, from: number, to: number, settle: (cells: CellSum[]) => void): void {
  let linkCells: CellSum[] = [];
  const rows = c.st<Omit<CellSum, "bot"> & { bot: number }>(CELLS_BY_LINK);
  for (const r of rows.iterate(from, to)) {
    if (linkCells.length > 0 && linkCells[0]!.linkId !== r.linkId) {
      settle(linkCells);
      linkCells = [];
    }
    linkCells.push({ ...r, bot: r.bot === 1 });
  }
  if (linkCells.length > 0) settle(linkCells);
}

export function sqliteClicks(c: SqliteConnection): ClickStore {
  const liveLinks = (ids: string[]): Set<string> => {
    const live = new Set<string>();
    for (let i = 0; i < ids.length; i += CLICK_CHUNK) {
      const part = ids.slice(i, i + CLICK_CHUNK);
      const found = c.st<{ id: string }>(`SELECT id FROM links WHERE id IN (${part.map(() => "?").join(",")})`).all(...part);
      for (const r of found) live.add(r.id);
    }
    return live;
  };
  const addCells = (cells: CellSum[]) => {
    const upsert = c.st(UPSERT_CELL);
    for (const x of cells) upsert.run(x.linkId, x.hour, x.dims, x.bot ? 1 : 0, x.clicks, x.visitors);
    settleLate(c, cells);
  };

  return {
    ...sqliteAccountTotals(c, () => settleStateOf(c).hours),
    async recordClicks(clicks: StoredClick[]): Promise<void> {
      if (clicks.length === 0) return;
      c.db
        .transaction(() => {
          // Clicks of links deleted meanwhile are dropped; of the rest, only those of batches new to the log (a
          // redelivered batch is skipped by ON CONFLICT) count towards cells and hits.
          const live = liveLinks([...new Set(clicks.map((x) => x.linkId))]);
          const insert = c.st(INSERT_LOG);
          const fresh: StoredClick[] = [];
          for (const [batch, all] of byBatch(clicks)) {
            const kept = all.filter((x) => live.has(x.linkId));
            if (kept.length === 0) continue;
            const row = clickLogRow(batch, kept);
            if (insert.run(row.batch, row.firstTs, row.lastTs, row.clicks, row.data).changes > 0) fresh.push(...kept);
          }
          const cells = sumCells(fresh);
          addCells(cells);
          const hits = new Map<string, number>();
          for (const x of cells) hits.set(x.linkId, (hits.get(x.linkId) ?? 0) + x.clicks);
          const bump = c.st(`UPDATE links SET hits = hits + ? WHERE id = ?`);
          for (const [linkId, n] of hits) bump.run(n, linkId);
        })
        .immediate();
    },

    async *readCells(scope: ClickScope, fromHour: number, toHour: number): AsyncIterable<ClickCell> {
      // An account's hours not settled yet: only its links noted as having cells then (account-totals.ts).
      if ("accountId" in scope && readsRecent(fromHour, toHour, settleStateOf(c).hours)) {
        for (let h = fromHour - (fromHour % HOUR_MS); h < toHour; h += HOUR_MS) {
          for (const r of iterate<Parameters<typeof toClickCell>[0]>(c, RECENT_CELLS, [h, scope.accountId])) yield toClickCell(r);
        }
        return;
      }
      const s = scopeSql(scope, "click_cells");
      const sql = `SELECT t.link_id, t.hour, t.dims, t.bot, t.clicks, t.visitors FROM ${s.from}
        WHERE ${s.where} AND t.hour >= ? AND t.hour < ?`;
      for (const r of iterate<Parameters<typeof toClickCell>[0]>(c, sql, [s.arg, fromHour, toHour])) yield toClickCell(r);
    },

    async *readSettled(scope: ClickScope, dimension: Dimension | null, from: number, to: number, grain: SettledGrain = "day"): AsyncIterable<SettledTotal> {
      const s = scopeSql(scope, "click_settled");
      const sql = `SELECT t.link_id, t.dimension, t.bucket, t.value, t.bot, t.clicks, t.visitors FROM ${s.from}
        WHERE ${s.where} AND t.dimension = ? AND t.bucket >= ? AND t.bucket < ?`;
      const args = [s.arg, settledKey(dimension, grain), from, to];
      for (const r of iterate<Parameters<typeof toSettledTotal>[0]>(c, sql, args)) yield toSettledTotal(r);
    },

    async *readSettledSums(linkId: string, dimension: Dimension, runs: { grain: SettledGrain; from: number; to: number }[], bots: readonly boolean[] = BOTH): AsyncIterable<SettledTotal> {
      if (runs.length === 0 || bots.length === 0) return;
      // A primary-key range per run (UNION ALL: an OR of ranges may not be planned as ranges), summed per value.
      const bot = bots.length === 1 ? ` AND bot = ${bots[0] ? 1 : 0}` : "";
      const parts = runs.map(() => `SELECT value, bot, clicks, visitors FROM click_settled WHERE link_id = ? AND dimension = ? AND bucket >= ? AND bucket < ?${bot}`);
      const sql = `SELECT ? AS link_id, ? AS dimension, ? AS bucket, value, bot, sum(clicks) AS clicks, sum(visitors) AS visitors
        FROM (${parts.join(" UNION ALL ")}) GROUP BY value, bot`;
      const args = [linkId, dimension, runs[0]!.from, ...runs.flatMap((r) => [linkId, settledKey(dimension, r.grain), r.from, r.to])];
      for (const r of iterate<Parameters<typeof toSettledTotal>[0]>(c, sql, args)) yield toSettledTotal(r);
    },

    async readCellSums(linkId: string, fromHour: number, toHour: number, dimension: Dimension): Promise<CellSumRow[]> {
      // Summed here, not in SQL: cutting the value out in SQL (instr/substr) and grouping there cost more than
      // this (4,000 cells of one hour, country: about 2 ms against 1.1; docs/analytics.md). Rows as arrays, the
      // value cut without splitting the key, sums per hour and value. Hours not settled, for a digested dimension:
      // their digests (a busy link's current hour holds thousands of cells) and what is not folded into them;
      // settled hours, whose digests are gone, every cell. One read transaction: the settle state and the rows agree.
      const valueOf = dimValueReader(dimension);
      const byHour = new Map<number, Map<string | null, CellSumRow[]>>();
      const add = (hour: number, value: string | null, bot: number, clicks: number, visitors: number) => {
        let ofHour = byHour.get(hour);
        if (ofHour === undefined) byHour.set(hour, (ofHour = new Map()));
        let pair = ofHour.get(value);
        if (pair === undefined) ofHour.set(value, (pair = []));
        const s = pair[bot];
        if (s) {
          s.clicks += clicks;
          s.visitors += visitors;
        } else pair[bot] = { hour, bot: bot === 1, value, clicks, visitors };
      };
      type Row = [number, string, number, number, number];
      c.db.transaction(() => {
        // A dimension digests do not keep is read from every cell of every hour.
        const settled = isDigested(dimension) ? Math.min(Math.max(settleStateOf(c).hours, fromHour), toHour) : toHour;
        for (const [hour, dims, bot, clicks, visitors] of c.st(CELL_ROWS_OF_LINK).values(linkId, fromHour, settled) as Row[]) add(hour, valueOf(dims), bot, clicks, visitors);
        if (settled >= toHour) return;
        for (const [hour, dims, bot, clicks, visitors] of c.st(UNFOLDED_ROWS_OF_LINK).values(linkId, settled, toHour) as Row[]) add(hour, valueOf(dims), bot, clicks, visitors);
        for (const [hour, value, bot, clicks, visitors] of c.st(DIGEST_ROWS_OF_LINK).values(linkId, dimension, settled, toHour) as Row[]) add(hour, value === "" ? null : value, bot, clicks, visitors);
      })();
      const sums: CellSumRow[] = [];
      for (const ofHour of byHour.values()) for (const pair of ofHour.values()) for (const s of pair) if (s) sums.push(s);
      return sums;
    },

    async foldBusyHours(minCells = FOLD_MIN_CELLS): Promise<number> {
      const busy = busyHours(c);
      const from = settleStateOf(c).hours;
      const due = busy.take(minCells, from);
      if (!busy.scanned) {
        busy.scanned = true;
        due.push(...c.st<{ linkId: string; hour: number }>(BUSY_NOTED_HOURS).all(from, minCells));
      }
      let folded = 0;
      for (const { linkId, hour } of due) if (foldLinkHour(c, linkId, hour)) folded++;
      return folded;
    },

    async settledBefore(): Promise<number> {
      return settleStateOf(c).days;
    },

    async settledHoursBefore(): Promise<number> {
      return settleStateOf(c).hours;
    },

    /**
     * Hours of the first day not settled that settleHours settled are in its rows already: only the cells after them
     * are added; their hourly dimension rows are deleted (per link and dimension, a primary-key range).
     */
    async settleDays(before: number): Promise<number> {
      return c.db
        .transaction(() => {
          const { days: done, hours } = settleStateOf(c);
          const first = done > 0 ? done : c.st<{ h: number | null }>(FIRST_CELL_HOUR).get()?.h;
          const to = dayStart(before);
          if (first === null || first === undefined || dayStart(first) >= to) return done;
          if (hours > done) {
            const deleteHours = c.st(DELETE_HOUR_ROWS);
            eachLinksCells(c, done, hours, (cells) => {
              for (const key of HOUR_KEYS) deleteHours.run(cells[0]!.linkId, key, done, hours);
            });
          }
          eachLinksCells(c, Math.max(dayStart(first), hours), to, (cells) => addSettled(c, cells));
          c.st(`UPDATE click_settle_state SET settled_before = ? WHERE id = 1`).run(to);
          pruneRecentCells(c, Math.max(to, hours));
          c.st(DELETE_SETTLED_DIGESTS).run(Math.max(to, hours));
          return to;
        })
        .immediate();
    },

    /** The hours' cells go to the day's (week's, month's) rows, the hourly totals and hourly dimension rows. */
    async settleHours(before: number): Promise<number> {
      return c.db
        .transaction(() => {
          const { days, hours } = settleStateOf(c);
          const to = Math.min(hourStart(before), days + DAY_MS);
          if (days === 0 || to <= hours) return hours;
          eachLinksCells(c, hours, to, (cells) => addSettled(c, cells, -Infinity));
          c.st(`UPDATE click_settle_state SET hours_before = ? WHERE id = 1`).run(to);
          pruneRecentCells(c, to);
          c.st(DELETE_SETTLED_DIGESTS).run(to);
          return to;
        })
        .immediate();
    },

    async *readClickLog(scope: ClickScope, from: number, to: number): AsyncIterable<StoredClick> {
      const links = "linkId" in scope
        ? liveLinks([scope.linkId])
        : new Set(c.st<{ id: string }>(`SELECT id FROM links WHERE account_id = ?`).all(scope.accountId).map((r) => r.id));
      if (links.size === 0) return;
      // One link: only rows whose text names it (its JSON string) are parsed.
      const only = "linkId" in scope ? ` AND instr(data, ?) > 0` : "";
      const args: (string | number)[] = [from, to];
      if ("linkId" in scope) args.push(JSON.stringify(scope.linkId));
      const sql = `SELECT batch_id, data FROM click_log WHERE last_ts >= ? AND first_ts < ?${only} ORDER BY last_ts, batch_id`;
      for (const r of iterate<{ batch_id: string; data: string }>(c, sql, args)) {
        yield* parseClickLogRow(r.batch_id, r.data, links, from, to);
      }
    },

    async pruneClickLog(before: number): Promise<number> {
      const row = c.db
        .transaction(() => {
          const n = c.st<{ n: number }>(`SELECT coalesce(sum(clicks), 0) AS n FROM click_log WHERE last_ts < ?`).get(before);
          c.st(`DELETE FROM click_log WHERE last_ts < ?`).run(before);
          return n;
        })
        .immediate();
      return row?.n ?? 0;
    },
  };
}

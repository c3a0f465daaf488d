/**
 * The clicks-and-stats role of the Postgres store: raw click log, rollup cells, settled totals and hit counts
 * (shared/ports/clicks.ts; docs/analytics.md). Every row written costs Postgres a few µs of CPU, so a transaction
 * writes a row per batch, per link and hour (its cell set: cell-sets.ts) and per link, with no trigger on the way.
 */
import { DIMENSION_NAMES, type Dimension } from "../../clicks/dimensions.ts";
import { SETTLED_GRAINS, type CellSumRow, type ClickCell, type ClickScope, type ClickStore, type SettledGrain, type SettledTotal, type StoredClick } from "../../ports.ts";
import {
  byBatch, clickLogRow, DAY_MS, dayStart, parseClickLogRow, settledKey, toClickCell, toSettledTotal, TOTAL_DIMENSION, type ClickLogRow,
} from "../click-log.ts";
import { allCells, cellSets, eachSetCell, expandSets } from "./cell-sets.ts";
import { EXPORT_PAGE } from "../export-support.ts";
import type { TransactionSql } from "postgres";
import { hourStart } from "../link-store-support.ts";
import type { PostgresConnection } from "./connection.ts";
import { postgresAccountTotals, RECENT_CELLS, RECENT_HOURS_MAX } from "./account-totals.ts";
import { BusyHours, DigestSums, FOLD_MIN_CELLS, isDigested } from "../hour-digests.ts";

const HOUR_MS = 3_600_000;

/** Rows per cursor page of a streamed read (cells and settled rows are small). */
const READ_PAGE = 2_000;
/** An account's read: hundreds of thousands of rows at 100,000 links, so fewer round trips (about 2 MB a page). */
const ACCOUNT_READ_PAGE = 20_000;

const DIM_POSITIONS = `ARRAY[${DIMENSION_NAMES.map((_, i) => i + 1).join(", ")}]::integer[]`;

/** A day's (day.bucket, epoch ms) bucket per grain: the day itself, its ISO week (epoch day 0 was a Thursday), its month. */
const GRAIN_OF_DAY: Record<(typeof SETTLED_GRAINS)[number], string> = {
  day: "day.bucket",
  week: `day.bucket - ((day.bucket / ${DAY_MS} + 3) % 7) * ${DAY_MS}`,
  month: `(extract(epoch FROM date_trunc('month', to_timestamp(day.bucket / 1000) AT TIME ZONE 'UTC')) * 1000)::bigint`,
};

/** A grain's stored dimension keys, as an SQL array. */
const keysOf = (grain: SettledGrain) => `ARRAY[${DIMENSION_NAMES.map((d) => `'${settledKey(d, grain)}'`).join(", ")}]::text[]`;

/** The cells `where` picks summed per link, dimension (k: its position in a dims key), `bucket`, value and bot. */
const perDimension = (source: string, bucket: string, where: string) => `
      SELECT s.link_id, d.k, ${bucket} AS bucket, split_part(s.dims, chr(1), d.k) AS value, s.bot, sum(s.clicks) AS clicks, sum(s.visitors) AS visitors
      FROM ${source} s CROSS JOIN unnest(${DIM_POSITIONS}) AS d(k) WHERE ${where} GROUP BY 1, 2, 3, 4, 5`;

/** Day rows summed from the cells once, then rolled up into each grain (weeks and months from days, not cells). */
const dayGrainRows = (source: string, where: string) => `
    SELECT day.link_id, (CASE g.grain ${SETTLED_GRAINS.map((x) => `WHEN '${x}' THEN ${keysOf(x)}`).join(" ")} END)[day.k],
           CASE g.grain ${SETTLED_GRAINS.map((x) => `WHEN '${x}' THEN ${GRAIN_OF_DAY[x]}`).join(" ")} END,
           day.value, day.bot, sum(day.clicks), sum(day.visitors)
    FROM (${perDimension(source, `s.hour - s.hour % ${DAY_MS}`, where)}) AS day
    CROSS JOIN unnest(ARRAY[${SETTLED_GRAINS.map((x) => `'${x}'`).join(", ")}]) AS g(grain)
    GROUP BY 1, 2, 3, 4, 5`;

/** Hourly rows per dimension value of the cells `where` picks. */
const hourRows = (source: string, where: string) => `
    SELECT h.link_id, (${keysOf("hour")})[h.k], h.bucket, h.value, h.bot, h.clicks, h.visitors
    FROM (${perDimension(source, "s.hour", where)}) AS h`;

/**
 * Upserts what the cells of `source` (a relation with link_id, hour, dims, bot, clicks, visitors) add to the
 * settled totals: per day, ISO week and month and dimension value (in DIMENSION_NAMES order, so a new dimension
 * needs no SQL change), per hour for the link's total, and for cells from `hourlyFrom` (an SQL expression) on per
 * hour and dimension value too (hours settled by settleHours). A fixed order keeps concurrent writers from deadlocking.
 */
export const upsertSettledFrom = (source: string, hourlyFrom?: string) => `
  INSERT INTO click_settled AS x (link_id, dimension, bucket, value, bot, clicks, visitors)
  SELECT * FROM (
    ${dayGrainRows(source, "true")}
    ${hourlyFrom ? `UNION ALL ${hourRows(source, `s.hour >= ${hourlyFrom}`)}` : ""}
    UNION ALL
    SELECT s.link_id, '${TOTAL_DIMENSION}', s.hour, '', s.bot, sum(s.clicks), sum(s.visitors) FROM ${source} s GROUP BY 1, 3, 5
  ) t ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (link_id, dimension, bucket, value, bot)
  DO UPDATE SET clicks = x.clicks + excluded.clicks, visitors = x.visitors + excluded.visitors`;

const scopeArg = (scope: ClickScope) => ("linkId" in scope ? scope.linkId : scope.accountId);

/**
 * A read of the scope's rows: `select(linkMatch)` is a query whose rows of the link `linkMatch` names are wanted ($1
 * is the link or account id). An account's read is one primary-key range per link of the account (a lateral
 * subquery that OFFSET 0 keeps the planner from flattening): as a plain join, once an account held a few thousand
 * links the planner scanned the whole table in parallel (10,000 links' 30 days of settled rows: 429 ms against
 * 23 ms for 1,000 links' in the nested loop), so the read's cost followed every account's rows, not this one's.
 */
const scopedRead = (scope: ClickScope, select: (linkMatch: string) => string) =>
  "linkId" in scope ? select("$1") : `SELECT u.* FROM links l CROSS JOIN LATERAL (${select("l.id")} OFFSET 0) u WHERE l.account_id = $1`;

/**
 * Raises the links' hit counts (ids in sorted order: one lock order for every writer, so concurrent consumers never
 * deadlock) and appends the cell sets (cell-sets.ts) of the links it raised, in one statement: a link deleted or
 * unknown is not updated, so its clicks are dropped without a read of the links table (an anti-join probing every
 * link cost Postgres about 1.3 µs per Zipf click over 100,000 links). Sets of hours already settled (`state`, read
 * FOR SHARE in this transaction: late clicks) also add their cells to the settled totals there; without late sets
 * the statement has no settled part to plan. Columns go as separator-joined text, split in SQL (a set's text holds
 * U+0001 to U+0003, so sets are joined by U+0004).
 */
async function writeCellSets(tx: TransactionSql, counted: StoredClick[], state: { days: number; hours: number }, busy: BusyHours): Promise<void> {
  const { sets, hits } = cellSets(counted);
  for (const x of sets) if (x.hour >= state.hours) busy.note(x.linkId, x.hour, x.count);
  const ids = [...hits.keys()].sort();
  const late = sets.some((x) => x.hour < state.hours)
    ? `, late AS (${expandSets(`(SELECT * FROM kept WHERE hour < ${state.hours})`)}), settled AS (${upsertSettledFrom("late", String(state.days))})`
    : "";
  await tx`
    WITH cell_set AS (
      SELECT * FROM unnest(
        string_to_array(${sets.map((x) => x.linkId).join("\u0001")}::text, chr(1)), string_to_array(${sets.map((x) => x.hour).join(",")}, ',')::bigint[],
        string_to_array(${sets.map((x) => x.cells).join("\u0004")}::text, chr(4))
      ) AS t(link_id, hour, cells)
    ), raised AS (
      UPDATE links SET hits = links.hits + n.clicks
      FROM unnest(string_to_array(${ids.join("\u0001")}::text, chr(1)), string_to_array(${ids.map((id) => hits.get(id)!).join(",")}, ',')::bigint[]) AS n(id, clicks)
      WHERE links.id = n.id
      RETURNING links.id
    ), kept AS (
      SELECT cell_set.* FROM cell_set JOIN raised ON raised.id = cell_set.link_id
    )${tx.unsafe(late)}
    INSERT INTO click_cell_sets (link_id, hour, cells) SELECT link_id, hour, cells FROM kept`;
}

/**
 * Folds link-hours in one transaction: moves each one's click_cells rows (imported, or from before cell sets) into a
 * marked set and marks its unmarked sets, answering their cells' text, which is summed here per digested dimension
 * (DigestSums: cheaper than cutting each value out and grouping in SQL, about 10 µs a cell there) and added to the
 * digests. A set committed meanwhile is not in the statement's snapshot and stays unmarked, so it is read beside the
 * digest; a concurrent fold of the same link-hours finds the rows taken (the row locks make it wait, then skip
 * them). As with a set appended while an import runs, an import of the same cell committed while a fold moves it is
 * not recognised as already there. Answers how many of the link-hours had cells to fold.
 */
async function foldLinkHours(tx: TransactionSql, due: { linkId: string; hour: number }[]): Promise<number> {
  const pick = `(t.link_id, t.hour) IN (SELECT * FROM unnest(string_to_array($1::text, chr(1)), string_to_array($2::text, ',')::bigint[]))`;
  const rows = await tx.unsafe<{ link_id: string; hour: string; cells: string }[]>(`
    WITH moved AS (
      DELETE FROM click_cells t WHERE ${pick}
      RETURNING t.link_id, t.hour, t.clicks || chr(2) || t.visitors || chr(2) || CASE WHEN t.bot THEN '1' ELSE '0' END || chr(2) || t.dims AS cell
    ), moved_sets AS (
      INSERT INTO click_cell_sets (link_id, hour, cells, folded) SELECT link_id, hour, string_agg(cell, chr(3)), true FROM moved GROUP BY 1, 2
    ), marked AS (
      UPDATE click_cell_sets t SET folded = true WHERE ${pick} AND NOT t.folded RETURNING t.link_id, t.hour, t.cells
    )
    SELECT link_id, hour, cell AS cells FROM moved
    UNION ALL
    SELECT link_id, hour, cells FROM marked`, [due.map((d) => d.linkId).join("\u0001"), due.map((d) => d.hour).join(",")]);
  const byLinkHour = new Map<string, { linkId: string; hour: number; sums: DigestSums }>();
  for (const r of rows) {
    const key = `${r.link_id}\u0001${r.hour}`;
    let of = byLinkHour.get(key);
    if (of === undefined) byLinkHour.set(key, (of = { linkId: r.link_id, hour: Number(r.hour), sums: new DigestSums() }));
    const sums = of.sums;
    eachSetCell(r.cells, (dims, bot, clicks, visitors) => sums.add(dims, bot, clicks, visitors));
  }
  const out: { linkId: string; hour: number; dimension: string; value: string; bot: boolean; clicks: number; visitors: number }[] = [];
  for (const { linkId, hour, sums } of byLinkHour.values()) for (const r of sums.rows()) out.push({ linkId, hour, ...r });
  if (out.length > 0) {
    await tx`
      INSERT INTO click_hour_digests AS x (link_id, dimension, hour, value, bot, clicks, visitors)
      SELECT * FROM unnest(
        string_to_array(${out.map((r) => r.linkId).join("\u0001")}::text, chr(1)), string_to_array(${out.map((r) => r.dimension).join("\u0001")}::text, chr(1)),
        string_to_array(${out.map((r) => r.hour).join(",")}, ',')::bigint[], string_to_array(${out.map((r) => r.value).join("\u0001")}::text, chr(1)),
        string_to_array(${out.map((r) => (r.bot ? "t" : "f")).join(",")}, ',')::boolean[], string_to_array(${out.map((r) => r.clicks).join(",")}, ',')::bigint[],
        string_to_array(${out.map((r) => r.visitors).join(",")}, ',')::bigint[]
      ) AS u(link_id, dimension, hour, value, bot, clicks, visitors)
      ORDER BY 1, 2, 3, 4, 5
      ON CONFLICT (link_id, dimension, hour, value, bot) DO UPDATE SET clicks = x.clicks + excluded.clicks, visitors = x.visitors + excluded.visitors`;
  }
  return byLinkHour.size;
}

/** The settle state (see the SQLite adapter's): the first day not settled, the first hour not settled. */
const STATE_SQL = `SELECT settled_before AS days, greatest(settled_before, hours_before) AS hours FROM click_settle_state WHERE id = 1`;
type StateRow = { days: unknown; hours: unknown };
const stateOf = (r: StateRow) => ({ days: Number(r.days), hours: Number(r.hours) });
const lockState = async (tx: TransactionSql) => stateOf((await tx.unsafe<StateRow[]>(`${STATE_SQL} FOR UPDATE`))[0]!);

export function postgresClicks(c: PostgresConnection): ClickStore {
  /** The cells this process wrote to each link-hour not settled since that link-hour's last fold. */
  const busy = new BusyHours();
  const settleState = () => c.run(async () => stateOf((await c.sql.unsafe<StateRow[]>(STATE_SQL))[0]!));
  async function* cursor<Row>(text: string, args: (string | number)[], page = READ_PAGE): AsyncIterable<Row> {
    const rows = c.sql.unsafe<Row[]>(text, args);
    for await (const part of rows.cursor(page)) yield* part;
  }
  /**
   * A scope's read; an account's with JIT off on a reserved connection: its plan is costed per link of the account,
   * so past a few thousand links it crossed jit_above_cost and each read paid 110-220 ms of LLVM (100,000 links,
   * EXPLAIN ANALYZE) for a loop of primary-key ranges that compiled expressions do not speed up.
   */
  async function* scopedCursor<Row>(scope: ClickScope, text: string, args: (string | number)[]): AsyncIterable<Row> {
    if ("linkId" in scope) return yield* cursor<Row>(text, args);
    const r = await c.sql.reserve();
    try {
      await r.unsafe("SET jit = off");
      for await (const part of r.unsafe<Row[]>(text, args).cursor(ACCOUNT_READ_PAGE)) yield* part;
    } finally {
      await r.unsafe("RESET jit").catch(() => {});
      r.release();
    }
  }

  return {
    ...postgresAccountTotals(c, async () => (await settleState()).hours),
    /**
     * One transaction of two statements. The first reads the settle state FOR SHARE (so a concurrent settleDays,
     * FOR UPDATE, either counts these cells or is seen by them), writes the log rows (a batch written before, a
     * redelivery, is skipped by ON CONFLICT) and answers the state and which batches were new; the clicks of the new
     * batches are summed here into cell sets, and the second statement raises hit counts, appends the sets of the
     * links it raised (clicks of deleted or unknown links are dropped there) and adds the late ones (of hours
     * already settled) to the settled totals.
     * Columns go as separator-joined strings split in SQL, not as array parameters: postgres.js escapes every
     * element of an array with regular expressions. JSON.stringify escapes control characters and dimension
     * values never hold one (cleanDimValue), so U+0001 and U+0002 cannot occur inside them.
     */
    recordClicks(clicks: StoredClick[]): Promise<void> {
      if (clicks.length === 0) return Promise.resolve();
      const batches = byBatch(clicks);
      const rows = [...batches].map(([batch, of]) => clickLogRow(batch, of));
      const col = <T>(pick: (r: ClickLogRow) => T) => rows.map(pick);
      return c.run(() =>
        c.sql.begin(async (tx) => {
          const known = await tx<{ kind: string; id: string }[]>`
            WITH state AS (${tx.unsafe(`${STATE_SQL} FOR SHARE`)}), ins AS (
              INSERT INTO click_log (batch_id, first_ts, last_ts, clicks, data)
              SELECT * FROM unnest(
                string_to_array(${col((r) => r.batch).join("\u0001")}::text, chr(1)), ${col((r) => r.firstTs)}::bigint[],
                ${col((r) => r.lastTs)}::bigint[], ${col((r) => r.clicks)}::integer[],
                string_to_array(${col((r) => r.data).join("\u0001")}::text, chr(1))
              )
              ON CONFLICT (batch_id) DO NOTHING
              RETURNING batch_id
            )
            SELECT 's' AS kind, days || ',' || hours AS id FROM state
            UNION ALL
            SELECT 'b', batch_id FROM ins`;
          const [days, hours] = known.find((k) => k.kind === "s")!.id.split(",").map(Number);
          const fresh = new Set(known.filter((k) => k.kind === "b").map((k) => k.id));
          // Every batch new (no redelivery): the clicks as given, not a copy of 40,000 gathered batch by batch.
          const counted = fresh.size === batches.size ? clicks : [...batches].filter(([batch]) => fresh.has(batch)).flatMap(([, of]) => of);
          if (counted.length === 0) return;
          await writeCellSets(tx, counted, { days: days!, hours: hours! }, busy);
        }),
      );
    },

    async *readCells(scope: ClickScope, fromHour: number, toHour: number): AsyncIterable<ClickCell> {
      // An account's hours not settled yet: by hour (BRIN), not a primary-key probe per link of the account.
      if ("accountId" in scope && toHour - fromHour <= RECENT_HOURS_MAX * HOUR_MS && fromHour >= (await settleState()).hours) {
        for await (const r of scopedCursor<Parameters<typeof toClickCell>[0]>(scope, RECENT_CELLS, [scope.accountId, fromHour, toHour])) yield toClickCell(r);
        return;
      }
      // Not summed per key in SQL: a busy link's filtered 90 days would be a hash aggregate of millions of cells,
      // and the engine adds its rows up anyway (measured on 340,000 cells: 28 ms as a plain read, 50 ms grouped).
      const text = scopedRead(scope, (link) => `SELECT * FROM ${allCells(`t.link_id = ${link} AND t.hour >= $2 AND t.hour < $3`)} c`);
      for await (const r of scopedCursor<Parameters<typeof toClickCell>[0]>(scope, text, [scopeArg(scope), fromHour, toHour])) yield toClickCell(r);
    },

    async *readSettled(scope: ClickScope, dimension: Dimension | null, from: number, to: number, grain: SettledGrain = "day"): AsyncIterable<SettledTotal> {
      const text = scopedRead(scope, (link) => `SELECT t.link_id, t.dimension, t.bucket, t.value, t.bot, t.clicks, t.visitors FROM click_settled t
        WHERE t.link_id = ${link} AND t.dimension = $2 AND t.bucket >= $3 AND t.bucket < $4`);
      const args = [scopeArg(scope), settledKey(dimension, grain), from, to];
      for await (const r of scopedCursor<Parameters<typeof toSettledTotal>[0]>(scope, text, args)) yield toSettledTotal(r);
    },

    async *readSettledSums(linkId: string, dimension: Dimension, runs: { grain: SettledGrain; from: number; to: number }[], bots: readonly boolean[] = [false, true]): AsyncIterable<SettledTotal> {
      if (runs.length === 0 || bots.length === 0) return;
      // A primary-key range per run, summed per value in SQL.
      const bot = bots.length === 1 ? ` AND bot = ${bots[0] ? "true" : "false"}` : "";
      const parts = runs.map((r) => `SELECT value, bot, clicks, visitors FROM click_settled
        WHERE link_id = $1 AND dimension = '${settledKey(dimension, r.grain)}' AND bucket >= ${Number(r.from)} AND bucket < ${Number(r.to)}${bot}`);
      const text = `SELECT $1::text AS link_id, $2::text AS dimension, ${Number(runs[0]!.from)}::bigint AS bucket, value, bot,
        sum(clicks) AS clicks, sum(visitors) AS visitors FROM (${parts.join(" UNION ALL ")}) u GROUP BY value, bot`;
      for await (const r of cursor<Parameters<typeof toSettledTotal>[0]>(text, [linkId, dimension])) yield toSettledTotal(r);
    },

    async readCellSums(linkId: string, fromHour: number, toHour: number, dimension: Dimension): Promise<CellSumRow[]> {
      // Summed per hour, bot and the dimension's part of the dims key: for settled hours every cell of click_cells
      // and the sets; for hours not settled the digests and the cells not folded into them. The settle state is read
      // first (its own statement: with it as a parameter the planner sees the ranges); a settle in between leaves
      // this read right, as settling drops digests only a day after their hour settled.
      const k = DIMENSION_NAMES.indexOf(dimension) + 1;
      // A dimension digests do not keep is read from every cell of every hour.
      const settled = isDigested(dimension) ? Math.min(Math.max((await settleState()).hours, fromHour), toHour) : toHour;
      const parts: string[] = [];
      if (fromHour < settled) {
        parts.push(`SELECT u.hour, u.bot, split_part(u.dims, chr(1), ${k}) AS value, u.clicks, u.visitors
          FROM ${allCells(`t.link_id = $1 AND t.hour >= ${fromHour} AND t.hour < ${settled}`)} u`);
      }
      if (settled < toHour) {
        // Every click_cells row of such an hour is unfolded (a fold moves them into its set).
        const range = `t.link_id = $1 AND t.hour >= ${settled} AND t.hour < ${toHour}`;
        parts.push(`SELECT u.hour, u.bot, split_part(u.dims, chr(1), ${k}) AS value, u.clicks, u.visitors FROM (
            SELECT t.hour, t.dims, t.bot, t.clicks, t.visitors FROM click_cells t WHERE ${range}
            UNION ALL
            SELECT e.hour, e.dims, e.bot, e.clicks, e.visitors FROM (${expandSets(`(SELECT t.link_id, t.hour, t.cells FROM click_cell_sets t WHERE ${range} AND NOT t.folded)`)}) e
          ) u`);
        parts.push(`SELECT hour, bot, value, clicks, visitors FROM click_hour_digests
          WHERE link_id = $1 AND dimension = '${dimension}' AND hour >= ${settled} AND hour < ${toHour}`);
      }
      if (parts.length === 0) return [];
      const rows = await c.run(() => c.sql.unsafe<{ hour: unknown; bot: boolean; value: string; clicks: unknown; visitors: unknown }[]>(
        `SELECT hour, bot, value, sum(clicks) AS clicks, sum(visitors) AS visitors FROM (${parts.join(" UNION ALL ")}) x GROUP BY 1, 2, 3`,
        [linkId],
      ));
      return rows.map((r) => ({ hour: Number(r.hour), bot: r.bot, value: r.value === "" ? null : r.value, clicks: Number(r.clicks), visitors: Number(r.visitors) }));
    },

    async foldBusyHours(minCells = FOLD_MIN_CELLS): Promise<number> {
      const from = (await settleState()).hours;
      const due = busy.take(minCells, from);
      if (!busy.scanned) {
        busy.scanned = true;
        // What another process wrote, or this one before it started: link-hours with many rows not folded (a set
        // row counts as one cell, the least it holds).
        const found = await c.run(() => c.sql<{ linkId: string; hour: string }[]>`
          SELECT link_id AS "linkId", hour FROM (
            SELECT link_id, hour FROM click_cells WHERE hour >= ${from}
            UNION ALL
            SELECT link_id, hour FROM click_cell_sets WHERE hour >= ${from} AND NOT folded
          ) u GROUP BY 1, 2 HAVING count(*) >= ${minCells}`);
        for (const r of found) due.push({ linkId: r.linkId, hour: Number(r.hour) });
      }
      // A fold of one link-hour takes locks of its rows only: a few hundred link-hours a statement.
      let folded = 0;
      for (let i = 0; i < due.length; i += 500) {
        const part = due.slice(i, i + 500);
        folded += await c.run(() => c.sql.begin((tx) => foldLinkHours(tx, part)));
      }
      return folded;
    },

    async settledBefore(): Promise<number> {
      return (await settleState()).days;
    },

    async settledHoursBefore(): Promise<number> {
      return (await settleState()).hours;
    },

    /**
     * The state row's lock (FOR UPDATE) makes a concurrent call wait, then find the days settled. Hours of the first
     * day that settleHours settled are in its rows already: only later cells are added; their hourly dimension rows go.
     */
    settleDays(before: number): Promise<number> {
      const to = dayStart(before);
      return c.run(() =>
        c.sql.begin(async (tx) => {
          const { days: done, hours } = await lockState(tx);
          const first = done > 0 ? done : (await tx<{ h: number | null }[]>`SELECT least((SELECT min(hour) FROM click_cells), (SELECT min(hour) FROM click_cell_sets)) AS h`)[0]!.h;
          if (first === null || dayStart(first) >= to) return done;
          const from = dayStart(first);
          if (hours > done) {
            await tx.unsafe(`DELETE FROM click_settled WHERE dimension = ANY(${keysOf("hour")}) AND bucket >= ${done} AND bucket < ${hours}
              AND link_id IN (SELECT link_id FROM click_cells WHERE hour >= ${done} AND hour < ${hours}
                UNION SELECT link_id FROM click_cell_sets WHERE hour >= ${done} AND hour < ${hours})`);
          }
          await tx.unsafe(upsertSettledFrom(
            allCells(`t.hour >= ${Math.max(from, hours)} AND t.hour < ${to}`),
          ));
          await tx`UPDATE click_settle_state SET settled_before = ${to} WHERE id = 1`;
          await tx`DELETE FROM click_hour_digests WHERE hour < ${Math.max(to, hours) - DAY_MS}`;
          return to;
        }),
      );
    },

    settleHours(before: number): Promise<number> {
      return c.run(() =>
        c.sql.begin(async (tx) => {
          const { days, hours } = await lockState(tx);
          const to = Math.min(hourStart(before), days + DAY_MS);
          if (days === 0 || to <= hours) return hours;
          await tx.unsafe(upsertSettledFrom(
            allCells(`t.hour >= ${hours} AND t.hour < ${to}`), "0",
          ));
          await tx`UPDATE click_settle_state SET hours_before = ${to} WHERE id = 1`;
          await tx`DELETE FROM click_hour_digests WHERE hour < ${to - DAY_MS}`;
          return to;
        }),
      );
    },

    async *readClickLog(scope: ClickScope, from: number, to: number): AsyncIterable<StoredClick> {
      const ids = await c.run(() =>
        "linkId" in scope
          ? c.sql<{ id: string }[]>`SELECT id FROM links WHERE id = ${scope.linkId}`
          : c.sql<{ id: string }[]>`SELECT id FROM links WHERE account_id = ${scope.accountId}`,
      );
      const links = new Set(ids.map((r) => r.id));
      if (links.size === 0) return;
      // One link: only rows whose text names it (its JSON string) are sent and parsed.
      const only = "linkId" in scope ? ` AND strpos(data, $3) > 0` : "";
      const args: (string | number)[] = [from, to];
      if ("linkId" in scope) args.push(JSON.stringify(scope.linkId));
      const text = `SELECT batch_id, data FROM click_log WHERE last_ts >= $1 AND first_ts < $2${only} ORDER BY last_ts, batch_id`;
      for await (const r of cursor<{ batch_id: string; data: string }>(text, args, EXPORT_PAGE)) {
        yield* parseClickLogRow(r.batch_id, r.data, links, from, to);
      }
    },

    pruneClickLog(before: number): Promise<number> {
      return c.run(async () => {
        const [row] = await c.sql<{ n: number }[]>`
          WITH gone AS (DELETE FROM click_log WHERE last_ts < ${before} RETURNING clicks)
          SELECT coalesce(sum(clicks), 0)::bigint AS n FROM gone`;
        return Number(row!.n);
      });
    },
  };
}

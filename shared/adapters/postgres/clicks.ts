/**
 * The clicks-and-stats role of the Postgres store: raw click log, rollup cells, settled totals and hit counts
 * (shared/ports/clicks.ts; docs/analytics.md). Every row written costs Postgres about 4-6 µs of CPU, so a batch
 * writes a row per batch, per cell and per link, in one statement, with no trigger on the way.
 */
import { DIMENSION_NAMES, type Dimension } from "../../clicks/dimensions.ts";
import { SETTLED_GRAINS, type ClickCell, type ClickScope, type ClickStore, type SettledGrain, type SettledTotal, type StoredClick } from "../../ports.ts";
import {
  byBatch, clickLogRow, DAY_MS, dayStart, parseClickLogRow, settledKey, sumCells, toClickCell, toSettledTotal, TOTAL_DIMENSION,
  type CellSum, type ClickLogRow,
} from "../click-log.ts";
import { EXPORT_PAGE } from "../export-support.ts";
import type { TransactionSql } from "postgres";
import { hourStart } from "../link-store-support.ts";
import type { PostgresConnection } from "./connection.ts";

/** Rows per cursor page of a streamed read (cells and settled rows are small). */
const READ_PAGE = 2_000;

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

/** The scope as a join and condition on table alias t ($1 is the link or account id). */
const scopeSql = (scope: ClickScope) =>
  "linkId" in scope ? { join: "", where: "t.link_id = $1" } : { join: "JOIN links l ON l.id = t.link_id", where: "l.account_id = $1" };
const scopeArg = (scope: ClickScope) => ("linkId" in scope ? scope.linkId : scope.accountId);

/**
 * Upserts cells (summed, in key order: see sumCells), adds the late ones to the settled totals and raises the links'
 * hit counts, in one statement. Numbers go as comma-joined text too (bot as 0/1), split and cast in SQL.
 */
async function writeCells(tx: TransactionSql, cells: CellSum[]): Promise<void> {
  const hits = new Map<string, number>();
  for (const x of cells) hits.set(x.linkId, (hits.get(x.linkId) ?? 0) + x.clicks);
  const ids = [...hits.keys()].sort();
  await tx`
    WITH cell AS (
      SELECT link_id, hour, dims, bot <> 0 AS bot, clicks, visitors, ord FROM unnest(
        string_to_array(${cells.map((x) => x.linkId).join("\u0001")}::text, chr(1)), string_to_array(${cells.map((x) => x.hour).join(",")}, ',')::bigint[],
        string_to_array(${cells.map((x) => x.dims).join("\u0002")}::text, chr(2)), string_to_array(${cells.map((x) => (x.bot ? 1 : 0)).join(",")}, ',')::integer[],
        string_to_array(${cells.map((x) => x.clicks).join(",")}, ',')::bigint[],
        string_to_array(${cells.map((x) => x.visitors).join(",")}, ',')::bigint[]
      ) WITH ORDINALITY AS t(link_id, hour, dims, bot, clicks, visitors, ord)
    ), written AS (
      INSERT INTO click_cells AS x (link_id, hour, dims, bot, clicks, visitors)
      SELECT link_id, hour, dims, bot, clicks, visitors FROM cell ORDER BY ord
      ON CONFLICT (link_id, hour, dims, bot)
      DO UPDATE SET clicks = x.clicks + excluded.clicks, visitors = x.visitors + excluded.visitors
    ), state AS (
      SELECT settled_before, greatest(settled_before, hours_before) AS hours_before FROM click_settle_state WHERE id = 1 FOR SHARE
    ), late AS (
      SELECT cell.* FROM cell, state WHERE cell.hour < state.hours_before
    ), settled AS (${tx.unsafe(upsertSettledFrom("late", "(SELECT settled_before FROM state)"))})
    UPDATE links SET hits = links.hits + n.clicks
    FROM unnest(string_to_array(${ids.join("\u0001")}::text, chr(1)), string_to_array(${ids.map((id) => hits.get(id)!).join(",")}, ',')::bigint[]) AS n(id, clicks)
    WHERE links.id = n.id`;
}

/** The settle state (see the SQLite adapter's): the first day not settled, the first hour not settled. */
const STATE_SQL = `SELECT settled_before AS days, greatest(settled_before, hours_before) AS hours FROM click_settle_state WHERE id = 1`;
type StateRow = { days: unknown; hours: unknown };
const stateOf = (r: StateRow) => ({ days: Number(r.days), hours: Number(r.hours) });
const lockState = async (tx: TransactionSql) => stateOf((await tx.unsafe<StateRow[]>(`${STATE_SQL} FOR UPDATE`))[0]!);

export function postgresClicks(c: PostgresConnection): ClickStore {
  const settleState = () => c.run(async () => stateOf((await c.sql.unsafe<StateRow[]>(STATE_SQL))[0]!));
  async function* cursor<Row>(text: string, args: (string | number)[], page = READ_PAGE): AsyncIterable<Row> {
    const rows = c.sql.unsafe<Row[]>(text, args);
    for await (const part of rows.cursor(page)) yield* part;
  }

  return {
    /**
     * One transaction of two statements. The first writes the log rows (a batch written before, a redelivery, is
     * skipped by ON CONFLICT) and answers which batches were new and which links do not exist (usually none: a row
     * per existing link cost the consumer a parsed answer row per spread click); the cells of the new batches' other
     * clicks are summed here, sorted (one lock order for every writer, so concurrent consumers never deadlock), and
     * the second statement upserts them, adds the late ones (cells of a settled day) to the settled totals and
     * raises hit counts. The settle state row is read FOR SHARE there, so a concurrent settleDays (FOR UPDATE)
     * either counts these cells or is seen by them.
     * Columns go as separator-joined strings split in SQL, not as array parameters: postgres.js escapes every
     * element of an array with regular expressions. JSON.stringify escapes control characters and dimension
     * values never hold one (cleanDimValue), so U+0001 and U+0002 cannot occur inside them.
     */
    recordClicks(clicks: StoredClick[]): Promise<void> {
      if (clicks.length === 0) return Promise.resolve();
      const batches = byBatch(clicks);
      const rows = [...batches].map(([batch, of]) => clickLogRow(batch, of));
      const col = <T>(pick: (r: ClickLogRow) => T) => rows.map(pick);
      const linkIds = [...new Set(clicks.map((x) => x.linkId))];
      return c.run(() =>
        c.sql.begin(async (tx) => {
          const known = await tx<{ kind: string; id: string }[]>`
            WITH ins AS (
              INSERT INTO click_log (batch_id, first_ts, last_ts, clicks, data)
              SELECT * FROM unnest(
                string_to_array(${col((r) => r.batch).join("\u0001")}::text, chr(1)), ${col((r) => r.firstTs)}::bigint[],
                ${col((r) => r.lastTs)}::bigint[], ${col((r) => r.clicks)}::integer[],
                string_to_array(${col((r) => r.data).join("\u0001")}::text, chr(1))
              )
              ON CONFLICT (batch_id) DO NOTHING
              RETURNING batch_id
            )
            SELECT 'b' AS kind, batch_id AS id FROM ins
            UNION ALL
            SELECT 'l', t.id FROM unnest(string_to_array(${linkIds.join("\u0001")}::text, chr(1))) AS t(id)
            WHERE NOT EXISTS (SELECT 1 FROM links WHERE links.id = t.id)`;
          const fresh = new Set(known.filter((k) => k.kind === "b").map((k) => k.id));
          const gone = new Set(known.filter((k) => k.kind === "l").map((k) => k.id));
          const counted = [...batches].filter(([batch]) => fresh.has(batch)).flatMap(([, of]) => (gone.size === 0 ? of : of.filter((x) => !gone.has(x.linkId))));
          if (counted.length === 0) return;
          await writeCells(tx, sumCells(counted));
        }),
      );
    },

    async *readCells(scope: ClickScope, fromHour: number, toHour: number): AsyncIterable<ClickCell> {
      const s = scopeSql(scope);
      const text = `SELECT t.link_id, t.hour, t.dims, t.bot, t.clicks, t.visitors FROM click_cells t ${s.join}
        WHERE ${s.where} AND t.hour >= $2 AND t.hour < $3`;
      for await (const r of cursor<Parameters<typeof toClickCell>[0]>(text, [scopeArg(scope), fromHour, toHour])) yield toClickCell(r);
    },

    async *readSettled(scope: ClickScope, dimension: Dimension | null, from: number, to: number, grain: SettledGrain = "day"): AsyncIterable<SettledTotal> {
      const s = scopeSql(scope);
      const text = `SELECT t.link_id, t.dimension, t.bucket, t.value, t.bot, t.clicks, t.visitors FROM click_settled t ${s.join}
        WHERE ${s.where} AND t.dimension = $2 AND t.bucket >= $3 AND t.bucket < $4`;
      const args = [scopeArg(scope), settledKey(dimension, grain), from, to];
      for await (const r of cursor<Parameters<typeof toSettledTotal>[0]>(text, args)) yield toSettledTotal(r);
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
          const first = done > 0 ? done : (await tx<{ h: number | null }[]>`SELECT min(hour) AS h FROM click_cells`)[0]!.h;
          if (first === null || dayStart(first) >= to) return done;
          const from = dayStart(first);
          if (hours > done) {
            await tx.unsafe(`DELETE FROM click_settled WHERE dimension = ANY(${keysOf("hour")}) AND bucket >= ${done} AND bucket < ${hours}
              AND link_id IN (SELECT DISTINCT link_id FROM click_cells WHERE hour >= ${done} AND hour < ${hours})`);
          }
          await tx.unsafe(upsertSettledFrom(
            `(SELECT link_id, hour, dims, bot, clicks, visitors FROM click_cells WHERE hour >= ${Math.max(from, hours)} AND hour < ${to})`,
          ));
          await tx`UPDATE click_settle_state SET settled_before = ${to} WHERE id = 1`;
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
            `(SELECT link_id, hour, dims, bot, clicks, visitors FROM click_cells WHERE hour >= ${hours} AND hour < ${to})`, "0",
          ));
          await tx`UPDATE click_settle_state SET hours_before = ${to} WHERE id = 1`;
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

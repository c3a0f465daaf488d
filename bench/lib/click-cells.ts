/**
 * Rollup cells as the click drain would have written them, made without running months of clicks through it: a
 * pool of realistic clicks (bench/lib/traffic.ts) is converted once by the drain's own conversion
 * (control/clicks/convert.ts: every dimension, the bot flag), then sampled into cells (link, UTC hour, encoded
 * dimensions, bot) with their clicks and unique visitors. A busy link gets 24 template hours (one per hour of the
 * day, shaped by a daily curve) repeated over its days; an account's links get Zipf-distributed clicks. The
 * writers put them straight into a store's click_cells table: SQLite with one prepared statement in a loop,
 * Postgres with generate_series over the templates, so ten million clicks seed in seconds.
 */
import { Database } from "bun:sqlite";
import type postgres from "postgres";
import { batchLookups, toStoredClick } from "../../control/clicks/convert.ts";
import { encodeDims } from "../../shared/clicks/dimensions.ts";
import { openGeoLookups } from "../../shared/facts/geo.ts";
import { rng } from "./stats.ts";
import { clickMaker, placedAddresses } from "./traffic.ts";

export const HOUR = 3_600_000;
/** Share of an average hour's clicks in each UTC hour of the day: quiet nights, busy afternoons. */
const DAILY_CURVE = [0.4, 0.3, 0.25, 0.25, 0.3, 0.45, 0.7, 0.95, 1.15, 1.3, 1.35, 1.4, 1.45, 1.45, 1.5, 1.5, 1.45, 1.4, 1.35, 1.3, 1.2, 1.0, 0.8, 0.55];
const CURVE_MEAN = DAILY_CURVE.reduce((a, b) => a + b, 0) / 24;

/** A click reduced to what a cell keeps of it. */
interface PooledClick {
  dims: string;
  bot: boolean;
  visitor: string;
}

export interface SeedCell {
  hour: number;
  dims: string;
  bot: boolean;
  clicks: number;
  visitors: number;
}

/** `n` realistic clicks, converted as the drain converts them; links vary so A/B variants and rules appear. */
export async function clickPool(n: number, seed = 3): Promise<PooledClick[]> {
  const { addresses } = await placedAddresses(3_000, seed);
  const make = clickMaker({ linkIds: Array.from({ length: 35 }, (_, i) => `l${i}`), pickLink: (_i, random) => Math.floor(random() * 35), addresses, seed });
  const lookups = batchLookups((await openGeoLookups()).place);
  const pool: PooledClick[] = [];
  for (let i = 0; i < n; i++) {
    const e = make(i, 0);
    const s = toStoredClick(e, "seed", lookups);
    pool.push({ dims: encodeDims(s.dims), bot: s.bot, visitor: `${e.ip}\n${e.ua}` });
  }
  return pool;
}

/** Sums sampled clicks into cells: one per (hour, dims, bot), visitors the distinct visitors among its clicks. */
class CellSums {
  private readonly cells = new Map<string, SeedCell & { seen: Set<string> }>();

  add(hour: number, c: PooledClick) {
    const key = `${hour}|${c.bot ? 1 : 0}|${c.dims}`;
    let cell = this.cells.get(key);
    if (!cell) this.cells.set(key, (cell = { hour, dims: c.dims, bot: c.bot, clicks: 0, visitors: 0, seen: new Set() }));
    cell.clicks++;
    if (!cell.seen.has(c.visitor)) {
      cell.seen.add(c.visitor);
      cell.visitors++;
    }
  }

  list(): SeedCell[] {
    return [...this.cells.values()].map(({ seen: _seen, ...c }) => c);
  }
}

/**
 * A link with about `clicks` clicks spread over `days` days: 24 template hours (cells of hour-of-day 0..23, their
 * `hour` being that index) that every day repeats.
 */
export function linkTemplates(pool: PooledClick[], clicks: number, days: number, seed: number): { templates: SeedCell[] } {
  const random = rng(seed);
  const perHour = clicks / (days * 24);
  const sums = new CellSums();
  for (let h = 0; h < 24; h++) {
    const n = Math.floor((perHour * DAILY_CURVE[h]!) / CURVE_MEAN + random());
    for (let i = 0; i < n; i++) sums.add(h, pool[Math.floor(random() * pool.length)]!);
  }
  return { templates: sums.list() };
}

/**
 * An account's links' cells over the `hours` hours up to `lastHour`: link i gets 5 + head/(i+1) clicks (a few hot
 * links, a long tail that still clicks), each at a random hour with a random pooled click.
 */
export function accountCells(pool: PooledClick[], links: string[], head: number, lastHour: number, hours: number, seed: number): { linkId: string; cells: SeedCell[] }[] {
  const random = rng(seed);
  return links.map((linkId, i) => {
    const sums = new CellSums();
    const n = 5 + Math.round(head / (i + 1));
    for (let k = 0; k < n; k++) sums.add(lastHour - Math.floor(random() * hours) * HOUR, pool[Math.floor(random() * pool.length)]!);
    return { linkId, cells: sums.list() };
  });
}

const hourOfDay = (hour: number) => Math.floor(hour / HOUR) % 24;

/** Writes cells into a SQLite store's file (WAL: the store's own connection stays open). */
export function writeCellsSqlite(file: string, rows: Iterable<{ linkId: string; cells: SeedCell[] }>): void {
  const db = new Database(file);
  db.run("PRAGMA busy_timeout = 5000");
  try {
    const insert = db.prepare("INSERT INTO click_cells (link_id, hour, dims, bot, clicks, visitors) VALUES (?, ?, ?, ?, ?, ?)");
    db.transaction(() => {
      for (const { linkId, cells } of rows) for (const c of cells) insert.run(linkId, c.hour, c.dims, c.bot ? 1 : 0, c.clicks, c.visitors);
    }).immediate();
    insert.finalize();
  } finally {
    db.close();
  }
}

/** A link's template hours repeated over every hour from firstHour to lastHour, as rows for writeCellsSqlite. */
export function* repeatTemplates(linkId: string, templates: SeedCell[], firstHour: number, lastHour: number): Iterable<{ linkId: string; cells: SeedCell[] }> {
  const byHourOfDay = Array.from({ length: 24 }, () => [] as SeedCell[]);
  for (const t of templates) byHourOfDay[t.hour]!.push(t);
  for (let h = firstHour; h <= lastHour; h += HOUR) yield { linkId, cells: byHourOfDay[hourOfDay(h)]!.map((t) => ({ ...t, hour: h })) };
}

/** Postgres: the templates in a temporary table, then every hour's copy made by generate_series, ten days a statement. */
export async function writeTemplatesPostgres(sql: postgres.Sql, linkId: string, templates: SeedCell[], firstHour: number, lastHour: number): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`CREATE TEMP TABLE seed_template (hod integer, dims text, bot boolean, clicks bigint, visitors bigint) ON COMMIT DROP`;
    // Booleans travel as integers: postgres.js sends a boolean array as text Postgres will not cast.
    await tx`INSERT INTO seed_template SELECT hod, dims, bot <> 0, clicks, visitors FROM unnest(${templates.map((t) => t.hour)}::integer[], ${templates.map((t) => t.dims)}::text[],
      ${templates.map((t) => (t.bot ? 1 : 0))}::integer[], ${templates.map((t) => t.clicks)}::bigint[], ${templates.map((t) => t.visitors)}::bigint[]) AS u(hod, dims, bot, clicks, visitors)`;
    for (let from = firstHour; from <= lastHour; from += 240 * HOUR) {
      const to = Math.min(lastHour, from + 239 * HOUR);
      await tx`INSERT INTO click_cells (link_id, hour, dims, bot, clicks, visitors)
        SELECT ${linkId}, h, t.dims, t.bot, t.clicks, t.visitors
        FROM generate_series(${from}::bigint, ${to}::bigint, ${HOUR}::bigint) h JOIN seed_template t ON t.hod = (h / ${HOUR}) % 24`;
    }
  });
}

/** Postgres: cells of many links, 50,000 rows a statement. */
export async function writeCellsPostgres(sql: postgres.Sql, rows: { linkId: string; cells: SeedCell[] }[]): Promise<void> {
  const flat = rows.flatMap(({ linkId, cells }) => cells.map((c) => ({ linkId, ...c })));
  for (let i = 0; i < flat.length; i += 50_000) {
    const chunk = flat.slice(i, i + 50_000);
    await sql`INSERT INTO click_cells (link_id, hour, dims, bot, clicks, visitors)
      SELECT link_id, hour, dims, bot <> 0, clicks, visitors FROM unnest(${chunk.map((c) => c.linkId)}::text[], ${chunk.map((c) => c.hour)}::bigint[],
        ${chunk.map((c) => c.dims)}::text[], ${chunk.map((c) => (c.bot ? 1 : 0))}::integer[], ${chunk.map((c) => c.clicks)}::bigint[],
        ${chunk.map((c) => c.visitors)}::bigint[]) AS u(link_id, hour, dims, bot, clicks, visitors)`;
  }
}

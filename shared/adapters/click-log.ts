/**
 * What both Store adapters do to a delivered batch of clicks before writing it, and how they read it back:
 * - the raw click log row: ONE row per batch, every link's clicks in it as JSON columns (link ids interned);
 * - the rollup cells it adds: summed here per (link, UTC hour, dims key, bot), so the database writes a row per
 *   cell and per link, never per click (a row costs Postgres about 4-6 µs of CPU; docs/analytics.md);
 * - the settled totals a cell adds to once its day is settled (settledRows: a late click, an import), per day,
 *   ISO week and month for the dimensions.
 *
 * Row data: `{"n":clicks,"links":[id…],"t0":first ts,"dt":[ts − t0…],"link":[i…],"bot":[0|1…],"firstVisit":[0|1…],
 * "referrerUrl":[…],"dims":{"country":[…],…}}`, one entry per click in the order served. A column whose values
 * repeat is written as its runs instead, `{"runs":[value,count,value,count…]}`, when that is shorter: a busy
 * link's batch is mostly runs (same link, device, country, millisecond), which made the embedded writer's log
 * row about 25 times smaller and cheaper to build than plain columns for one visitor's traffic (86 bytes a
 * click before). Rows written before this format carry `ts` (absolute) instead of `n`, `t0` and `dt`, and plain
 * columns only; a dimension missing from a row (written before it existed) reads as null, and so do `link`
 * (all 0), `bot` and `firstVisit` (all 0) when absent.
 */
import { DIMENSION_NAMES, decodeDims, encodeDims, type ClickDims, type Dimension } from "../clicks/dimensions.ts";
import { grainStart, SETTLED_GRAINS, type ClickCell, type SettledGrain, type SettledTotal, type StoredClick } from "../ports.ts";
import { hourStart } from "./link-store-support.ts";

export const DAY_MS = 86_400_000;
/** Start of the UTC day containing `ts` (epoch ms). */
export const dayStart = (ts: number): number => Math.floor(ts / DAY_MS) * DAY_MS;

/** Whether two clicks have the same dimensions (most of a busy link's clicks do). */
export function sameDims(a: ClickDims, b: ClickDims): boolean {
  if (a === b) return true;
  for (let i = 0; i < DIMENSION_NAMES.length; i++) if (a[DIMENSION_NAMES[i]!] !== b[DIMENSION_NAMES[i]!]) return false;
  return true;
}

/** One row of the raw click log: a whole delivered batch. */
export interface ClickLogRow {
  batch: string;
  firstTs: number;
  lastTs: number;
  clicks: number;
  data: string;
}

/** The clicks of a call grouped by batch, in first-seen order (a call may carry several batches). */
export function byBatch(clicks: StoredClick[]): Map<string, StoredClick[]> {
  const out = new Map<string, StoredClick[]>();
  let last: StoredClick[] | undefined;
  let lastBatch: string | undefined;
  for (const c of clicks) {
    if (c.batch !== lastBatch) {
      lastBatch = c.batch;
      last = out.get(c.batch);
      if (last === undefined) out.set(c.batch, (last = []));
    }
    last!.push(c);
  }
  return out;
}

/** A column as written: its runs `{"runs":[value,count…]}` when there are fewer than half as many as values. */
function packColumn<T>(values: T[], runs: number): T[] | { runs: (T | number)[] } {
  if (runs * 2 >= values.length) return values;
  const out: (T | number)[] = [];
  let count = 0;
  for (let i = 0; i < values.length; i++) {
    if (count > 0 && values[i] !== values[i - 1]) {
      out.push(values[i - 1]!, count);
      count = 0;
    }
    count++;
  }
  if (count > 0) out.push(values[values.length - 1]!, count);
  return { runs: out };
}

/**
 * One dimension's column from the runs of whole dimension sets (`sets[i]` for `counts[i]` clicks): a busy link's
 * batch is a few such runs, so its ten columns are built from a few entries instead of a value per click each. Two
 * arrays, not one of sets and counts in turn: an array of one kind of element is cheaper to read (clickLogRow of
 * 40,960 bench clicks in 1,024-click batches, JS per click: spread 1.13 -> 0.82 µs, Zipf 1.16 -> 1.0 µs).
 */
function dimensionColumn(sets: ClickDims[], counts: number[], d: Dimension, n: number) {
  let distinctRuns = 0;
  let prev: string | null | undefined;
  for (let i = 0; i < sets.length; i++) {
    const v = sets[i]![d];
    if (i === 0 || v !== prev) distinctRuns++;
    prev = v;
  }
  if (distinctRuns * 2 >= n) {
    if (sets.length === n) return sets.map((x) => x[d]); // every run one click (traffic spread over links)
    const values: (string | null)[] = [];
    for (let i = 0; i < sets.length; i++) {
      const v = sets[i]![d];
      for (let k = counts[i]!; k > 0; k--) values.push(v);
    }
    return values;
  }
  const runs: (string | null | number)[] = [];
  for (let i = 0; i < sets.length; i++) {
    const v = sets[i]![d];
    if (runs.length > 0 && runs[runs.length - 2] === v) (runs[runs.length - 1] as number) += counts[i]!;
    else runs.push(v, counts[i]!);
  }
  return { runs };
}

/** The log row of one batch's clicks. */
export function clickLogRow(batch: string, clicks: StoredClick[]): ClickLogRow {
  const links: string[] = [];
  const index = new Map<string, number>();
  let firstTs = Infinity, lastTs = -Infinity;
  for (const c of clicks) {
    if (c.ts < firstTs) firstTs = c.ts;
    if (c.ts > lastTs) lastTs = c.ts;
  }
  const dt: number[] = [], link: number[] = [], bot: number[] = [], firstVisit: number[] = [];
  const referrerUrl: (string | null)[] = [];
  const runSets: ClickDims[] = [], runCounts: number[] = [];
  // Runs of dt, link, bot, firstVisit and referrerUrl: a value unlike the one before starts one (counted as the
  // plain arrays fill, packed at the end); the dimensions go by whole sets in runSets and runCounts.
  const runs = [0, 0, 0, 0, 0];
  let prev: StoredClick | undefined, lastIndex = 0;
  for (const c of clicks) {
    if (c.linkId !== prev?.linkId) {
      let i = index.get(c.linkId);
      if (i === undefined) index.set(c.linkId, (i = links.push(c.linkId) - 1));
      lastIndex = i;
      runs[1]++;
    }
    link.push(lastIndex);
    dt.push(c.ts - firstTs);
    bot.push(c.bot ? 1 : 0);
    firstVisit.push(c.firstVisit ? 1 : 0);
    referrerUrl.push(c.referrerUrl);
    if (prev === undefined) {
      runs[0] = runs[2] = runs[3] = runs[4] = 1;
      runSets.push(c.dims);
      runCounts.push(1);
      prev = c;
      continue;
    }
    if (c.ts !== prev.ts) runs[0]++;
    if (c.bot !== prev.bot) runs[2]++;
    if (c.firstVisit !== prev.firstVisit) runs[3]++;
    if (c.referrerUrl !== prev.referrerUrl) runs[4]++;
    if (sameDims(c.dims, runSets[runSets.length - 1]!)) runCounts[runCounts.length - 1]!++;
    else {
      runSets.push(c.dims);
      runCounts.push(1);
    }
    prev = c;
  }
  const data = JSON.stringify({
    n: clicks.length, links, t0: firstTs,
    dt: packColumn(dt, runs[0]!), link: packColumn(link, runs[1]!), bot: packColumn(bot, runs[2]!),
    firstVisit: packColumn(firstVisit, runs[3]!), referrerUrl: packColumn(referrerUrl, runs[4]!),
    dims: Object.fromEntries(DIMENSION_NAMES.map((d) => [d, dimensionColumn(runSets, runCounts, d, clicks.length)])),
  });
  return { batch, firstTs, lastTs, clicks: clicks.length, data };
}

/** A rollup cell being summed: its dims as the encoded key the cell tables store. */
export interface CellSum {
  linkId: string;
  hour: number;
  dims: string;
  bot: boolean;
  clicks: number;
  visitors: number;
}

/**
 * The cells the clicks add, summed, in key order: one lock order for every Postgres writer (no deadlocks between
 * consumers) and B-tree pages visited in order. A click usually shares its cell with the click before it (a batch
 * of one busy link), so that is checked first, before building a key.
 */
export function sumCells(clicks: Iterable<StoredClick>): CellSum[] {
  const cells = new Map<string, CellSum>();
  let cell: CellSum | undefined;
  let prevDims: ClickDims | undefined, dims = "";
  for (const c of clicks) {
    const hour = hourStart(c.ts);
    // The key of the click before when its dimensions are the same (a busy link's clicks mostly are).
    if (prevDims === undefined || !sameDims(c.dims, prevDims)) dims = encodeDims(c.dims);
    prevDims = c.dims;
    if (cell === undefined || cell.linkId !== c.linkId || cell.hour !== hour || cell.bot !== c.bot || cell.dims !== dims) {
      const key = `${c.linkId}\u0002${hour}\u0002${c.bot ? 1 : 0}\u0002${dims}`;
      cell = cells.get(key);
      if (cell === undefined) cells.set(key, (cell = { linkId: c.linkId, hour, dims, bot: c.bot, clicks: 0, visitors: 0 }));
    }
    cell.clicks++;
    if (c.firstVisit) cell.visitors++;
  }
  const keys = [...cells.keys()].sort();
  return keys.map((k) => cells.get(k)!);
}

/**
 * Stored value of a settled row: dimension '' is the link's hourly total (its value ''), and value '' is null
 * (unknown): no dimension value is ever '' (cleanDimValue), and key columns cannot be NULL.
 */
export const TOTAL_DIMENSION = "";
export const NULL_VALUE = "";

/** A settled row as stored (see TOTAL_DIMENSION, NULL_VALUE). */
export interface SettledRow {
  linkId: string;
  dimension: string;
  bucket: number;
  value: string;
  bot: boolean;
  clicks: number;
  visitors: number;
}

/** A settled row's stored dimension: the dimension's name for day rows, name/grain for week and month rows. */
export const settledKey = (dimension: Dimension | null, grain: SettledGrain = "day"): string =>
  dimension === null ? TOTAL_DIMENSION : grain === "day" ? dimension : `${dimension}/${grain}`;

/** The grains a settled day's rows roll up into (SETTLED_GRAINS after day), each with its dimensions' stored keys. */
const COARSE_KEYS = SETTLED_GRAINS.filter((g) => g !== "day").map((grain) => ({ grain, keys: DIMENSION_NAMES.map((d) => settledKey(d, grain)) }));
export const HOUR_KEYS = DIMENSION_NAMES.map((d) => settledKey(d, "hour"));

/**
 * What cells add to the settled totals: per (link, UTC day, ISO week and month, dimension, value, bot), per
 * (link, hour, bot), and for cells from `hourlyFrom` on (hours settled by settleHours) per (link, hour, dimension,
 * value, bot) too. Weeks and months are summed from the day rows, far fewer than the cells.
 */
export function settledRows(cells: Iterable<CellSum>, hourlyFrom = Infinity): SettledRow[] {
  const rows = new Map<string, SettledRow>();
  const dayRows: [SettledRow, number][] = [];
  const add = (linkId: string, dimension: string, bucket: number, value: string, c: { bot: boolean; clicks: number; visitors: number }) => {
    const key = `${linkId}\u0002${dimension}\u0002${bucket}\u0002${c.bot ? 1 : 0}\u0002${value}`;
    const row = rows.get(key);
    if (row) {
      row.clicks += c.clicks;
      row.visitors += c.visitors;
      return undefined;
    }
    const made = { linkId, dimension, bucket, value, bot: c.bot, clicks: c.clicks, visitors: c.visitors };
    rows.set(key, made);
    return made;
  };
  for (const cell of cells) {
    add(cell.linkId, TOTAL_DIMENSION, cell.hour, NULL_VALUE, cell);
    const hourly = cell.hour >= hourlyFrom;
    const day = dayStart(cell.hour);
    const dims = decodeDims(cell.dims);
    DIMENSION_NAMES.forEach((d, i) => {
      const value = dims[d] ?? NULL_VALUE;
      const made = add(cell.linkId, d, day, value, cell);
      if (made) dayRows.push([made, i]);
      if (hourly) add(cell.linkId, HOUR_KEYS[i]!, cell.hour, value, cell);
    });
  }
  for (const [row, i] of dayRows) {
    for (const { grain, keys } of COARSE_KEYS) add(row.linkId, keys[i]!, grainStart(grain, row.bucket), row.value, row);
  }
  return [...rows.values()];
}

/** A stored cell row (either adapter's column types) as the port's ClickCell. */
export function toClickCell(r: { link_id: string; hour: number | bigint; dims: string; bot: unknown; clicks: unknown; visitors: unknown }): ClickCell {
  return {
    linkId: r.link_id, hour: Number(r.hour), dims: decodeDims(r.dims), bot: Boolean(r.bot),
    clicks: Number(r.clicks), visitors: Number(r.visitors),
  };
}

/** A stored settled row as the port's SettledTotal. */
export function toSettledTotal(r: {
  link_id: string; dimension: string; bucket: number | bigint; value: string; bot: unknown; clicks: unknown; visitors: unknown;
}): SettledTotal {
  return {
    linkId: r.link_id, dimension: r.dimension === TOTAL_DIMENSION ? null : (r.dimension.split("/")[0] as Dimension),
    bucket: Number(r.bucket), value: r.value === NULL_VALUE ? null : r.value, bot: Boolean(r.bot),
    clicks: Number(r.clicks), visitors: Number(r.visitors),
  };
}

const isArrayOf = <T>(v: unknown, n: number, ok: (x: unknown) => x is T): v is T[] => Array.isArray(v) && v.length === n && v.every(ok);
const isNumber = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x);
const isFlag = (x: unknown): x is number => x === 0 || x === 1;
const isStringOrNull = (x: unknown): x is string | null => x === null || typeof x === "string";
/** Rows moved from the per-link log (migration) kept the A/B variant as a number. */
const isDimValue = (x: unknown): x is string | number | null => isStringOrNull(x) || (Number.isInteger(x) && (x as number) >= 0);

interface RowData {
  links: string[];
  link: number[];
  ts: number[];
  bot: number[];
  firstVisit: number[];
  referrerUrl: (string | null)[];
  dims: Partial<Record<string, (string | number | null)[]>>;
}

/** A column as written: the plain array, or its runs expanded (anything else is left for the checks to refuse). */
function expandColumn(col: unknown, n: number): unknown {
  const runs = (col as { runs?: unknown } | null)?.runs;
  if (typeof col !== "object" || col === null || Array.isArray(col) || !Array.isArray(runs) || runs.length % 2 !== 0) return col;
  const out: unknown[] = [];
  for (let i = 0; i < runs.length; i += 2) {
    const count = runs[i + 1];
    if (!Number.isInteger(count) || (count as number) < 1 || out.length + (count as number) > n) return col;
    for (let k = count as number; k > 0; k--) out.push(runs[i]);
  }
  return out;
}

/** A row's data in the plain form: runs expanded, times made absolute (rows of either format). */
function plainRowData(data: string): Partial<Record<keyof RowData, unknown>> | null {
  const raw = JSON.parse(data) as (Partial<Record<keyof RowData | "n" | "t0" | "dt", unknown>> & { dims?: unknown }) | null;
  if (typeof raw !== "object" || raw === null || raw.n === undefined) return raw;
  const n = raw.n;
  if (!Number.isInteger(n) || (n as number) < 0 || typeof raw.t0 !== "number") return null;
  const column = (v: unknown) => (v === undefined ? undefined : expandColumn(v, n as number));
  const dt = column(raw.dt);
  const t0 = raw.t0;
  const dims = typeof raw.dims === "object" && raw.dims !== null
    ? Object.fromEntries(Object.entries(raw.dims).map(([d, v]) => [d, column(v)]))
    : raw.dims;
  return {
    links: raw.links, ts: Array.isArray(dt) ? dt.map((x) => (typeof x === "number" ? t0 + x : x)) : dt,
    link: column(raw.link), bot: column(raw.bot), firstVisit: column(raw.firstVisit), referrerUrl: column(raw.referrerUrl), dims,
  };
}

/** Reads a row's data, filling what older rows lack; throws on data that is not a log row. */
function parseRowData(batch: string, data: string): RowData {
  const raw = plainRowData(data);
  const n = Array.isArray(raw?.ts) ? raw.ts.length : -1;
  const zeros = () => new Array<number>(n).fill(0);
  const r = { link: zeros(), bot: zeros(), firstVisit: zeros(), referrerUrl: new Array(n).fill(null), dims: {}, ...raw } as RowData;
  const links = r.links;
  const ok =
    Array.isArray(links) && links.length > 0 && links.every((x) => typeof x === "string") && isArrayOf(r.ts, n, isNumber) &&
    isArrayOf(r.link, n, (x): x is number => Number.isInteger(x) && (x as number) >= 0 && (x as number) < links.length) &&
    isArrayOf(r.bot, n, isFlag) && isArrayOf(r.firstVisit, n, isFlag) && isArrayOf(r.referrerUrl, n, isStringOrNull) &&
    typeof r.dims === "object" && r.dims !== null &&
    DIMENSION_NAMES.every((d) => r.dims[d] === undefined || isArrayOf(r.dims[d], n, isDimValue));
  if (!ok) throw new Error(`raw click log row ${batch} is not in the click log format`);
  return r;
}

/**
 * The clicks of one log row whose link is in `links` and ts in [from, to); throws on data that is not a log row
 * (a corrupt row must not pass as clicks).
 */
export function parseClickLogRow(batch: string, data: string, links: Set<string>, from = -Infinity, to = Infinity): StoredClick[] {
  const r = parseRowData(batch, data);
  const wanted = r.links.map((id) => links.has(id));
  const out: StoredClick[] = [];
  for (let i = 0; i < r.ts.length; i++) {
    const ts = r.ts[i]!;
    if (!wanted[r.link[i]!] || ts < from || ts >= to) continue;
    const dims = {} as ClickDims;
    for (const d of DIMENSION_NAMES) {
      const v = r.dims[d]?.[i] ?? null;
      dims[d] = v === null ? null : String(v);
    }
    out.push({
      batch, linkId: r.links[r.link[i]!]!, ts, dims, bot: r.bot[i] === 1, firstVisit: r.firstVisit[i] === 1,
      referrerUrl: r.referrerUrl[i]!,
    });
  }
  return out;
}

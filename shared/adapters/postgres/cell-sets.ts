/**
 * Postgres keeps the rollup cells each transaction writes as cell sets (migration 25, docs/adr/0012): one row per
 * link and UTC hour of a transaction, holding every cell of it as text, appended with a plain INSERT under a
 * non-unique (link_id, hour) index. With every dimension in a cell's key, realistic traffic makes nearly every click
 * a cell of its own, and an upsert under the cells' unique key cost Postgres about 4.7 µs per cell; a set row costs
 * about as much as one such cell and holds a link's every click of the transaction (spread traffic: about four).
 *
 * Cells written before (migration), imported or seeded stay in click_cells; every read takes both (allCells): a cell
 * key's clicks of several transactions come as several rows, which readers sum (readCells says so; the export sums
 * them per key in SQL: summedCells).
 *
 * A set's text: its cells joined by U+0003, each `clicks U+0002 visitors U+0002 bot(0/1) U+0002 dims` (dims the
 * encoded key, encodeDims). Dimension values never hold a control character (cleanDimValue), so no separator can
 * occur inside a value.
 */
import { encodeDims, type ClickDims } from "../../clicks/dimensions.ts";
import type { StoredClick } from "../../ports.ts";
import { sameDims } from "../click-log.ts";
import { hourStart } from "../link-store-support.ts";

/** One set row as the writer sends it. */
export interface CellSetRow {
  linkId: string;
  hour: number;
  cells: string;
  /** How many cells `cells` holds. */
  count: number;
}

/** A cell being summed: its dimensions as the clicks carry them (the key text is built once, for the row). */
interface Entry {
  dims: ClickDims;
  bot: boolean;
  clicks: number;
  visitors: number;
  /** Its key text (keyOf), once built. */
  key?: string;
}

interface Building {
  linkId: string;
  hour: number;
  entries: Entry[];
  /** Once a set has more than SCAN_LIMIT cells (a busy link's), they are found by key instead of compared in turn. */
  byKey: Map<string, Entry> | null;
  /** The link's set of another hour (a transaction may cross an hour). */
  next: Building | null;
}

/**
 * Cells a set compares a click with, dimension by dimension, before it indexes them by key: most sets hold a few
 * clicks (spread traffic: about four), for which comparing costs less than building a key and hashing it (about
 * 0.9 of the 2.2 µs per click that summing with a key per click cost).
 */
const SCAN_LIMIT = 16;

const keyOf = (dims: ClickDims, bot: boolean) => `${bot ? 1 : 0}\u0002${encodeDims(dims)}`;

/** The cell of `set` with the click's dimensions and bot flag, made when new. */
function entryOf(set: Building, c: StoredClick): Entry {
  if (set.byKey === null) {
    for (const e of set.entries) if (e.bot === c.bot && (e.dims === c.dims || sameDims(e.dims, c.dims))) return e;
    const made = { dims: c.dims, bot: c.bot, clicks: 0, visitors: 0 };
    set.entries.push(made);
    if (set.entries.length > SCAN_LIMIT) set.byKey = new Map(set.entries.map((e) => [(e.key = keyOf(e.dims, e.bot)), e]));
    return made;
  }
  const key = keyOf(c.dims, c.bot);
  let e = set.byKey.get(key);
  if (e === undefined) {
    set.entries.push((e = { dims: c.dims, bot: c.bot, clicks: 0, visitors: 0, key }));
    set.byKey.set(key, e);
  }
  return e;
}

/**
 * The cell set rows the clicks make (one per link and hour) and each link's click count (its hits). A click usually
 * goes to the cell of the click before it when they share a link (a busy link, one visitor's run), checked first.
 */
export function cellSets(clicks: Iterable<StoredClick>): { sets: CellSetRow[]; hits: Map<string, number> } {
  const byLink = new Map<string, Building>();
  let set: Building | undefined, last: Entry | undefined;
  for (const c of clicks) {
    const hour = hourStart(c.ts);
    if (set === undefined || set.linkId !== c.linkId || set.hour !== hour) {
      const first = byLink.get(c.linkId);
      set = first;
      while (set !== undefined && set.hour !== hour) set = set.next ?? undefined;
      if (set === undefined) {
        set = { linkId: c.linkId, hour, entries: [], byKey: null, next: first ?? null };
        byLink.set(c.linkId, set);
      }
      last = undefined;
    }
    const e = last !== undefined && last.bot === c.bot && (last.dims === c.dims || sameDims(last.dims, c.dims)) ? last : entryOf(set, c);
    e.clicks++;
    if (c.firstVisit) e.visitors++;
    last = e;
  }
  const sets: CellSetRow[] = [];
  const hits = new Map<string, number>();
  for (const [linkId, first] of byLink) {
    let total = 0;
    for (let b: Building | null = first; b !== null; b = b.next) {
      const parts: string[] = [];
      for (const e of b.entries) {
        parts.push(`${e.clicks}\u0002${e.visitors}\u0002${e.key ?? keyOf(e.dims, e.bot)}`);
        total += e.clicks;
      }
      sets.push({ linkId, hour: b.hour, cells: parts.join("\u0003"), count: parts.length });
    }
    hits.set(linkId, total);
  }
  return { sets, hits };
}

/** Hands `each` every cell of a set's text (cellSets' rows): its dims key, bot flag, clicks and first visits. */
export function eachSetCell(text: string, each: (dims: string, bot: boolean, clicks: number, visitors: number) => void): void {
  for (let from = 0; from <= text.length; ) {
    let end = text.indexOf("\u0003", from);
    if (end < 0) end = text.length;
    const a = text.indexOf("\u0002", from), b = text.indexOf("\u0002", a + 1), c = text.indexOf("\u0002", b + 1);
    each(text.slice(c + 1, end), text.charCodeAt(b + 1) === 49 /* 1 */, Number(text.slice(from, a)), Number(text.slice(a + 1, b)));
    from = end + 1;
  }
}

/**
 * The cells of `source` (a relation with link_id, hour and cells), one row each: link_id, hour, dims, bot, clicks,
 * visitors, as click_cells has them. Not summed: a key may come from several sets. unnest of an array, not
 * string_to_table: the planner takes a set for 10 cells, not 1,000, and a plan costed 100 times too high is
 * compiled by JIT first (measured: 2.5 s of LLVM for a 40,000-click write).
 */
export const expandSets = (source: string) => `
  SELECT s.link_id, s.hour, split_part(e.x, chr(2), 4) AS dims, split_part(e.x, chr(2), 3) = '1' AS bot,
         split_part(e.x, chr(2), 1)::bigint AS clicks, split_part(e.x, chr(2), 2)::bigint AS visitors
  FROM ${source} s CROSS JOIN LATERAL unnest(string_to_array(s.cells, chr(3))) AS e(x)`;

/**
 * Every cell row of click_cells and of the cell sets that `where` picks (on alias t; `join` may bring in links l),
 * as one relation (link_id, hour, dims, bot, clicks, visitors) in which a key may occur more than once: sum by key
 * where one row per cell is wanted, or sum further (settling) where not.
 */
export const allCells = (where: string, join = "") => `(
  SELECT t.link_id, t.hour, t.dims, t.bot, t.clicks, t.visitors FROM click_cells t ${join} WHERE ${where}
  UNION ALL
  ${expandSets(`(SELECT t.link_id, t.hour, t.cells FROM click_cell_sets t ${join} WHERE ${where})`)}
)`;

/** The same, one row per cell key (link_id, hour, dims, bot), clicks and visitors summed. */
export const summedCells = (where: string, join = "") => `
  SELECT u.link_id, u.hour, u.dims, u.bot, sum(u.clicks) AS clicks, sum(u.visitors) AS visitors
  FROM ${allCells(where, join)} u GROUP BY 1, 2, 3, 4`;

/**
 * Whether the cell of row `t` (link_id, hour, dims, with `bot` a boolean SQL expression) has clicks in a cell set: an
 * import skips such a cell as it skips one already in click_cells (ON CONFLICT), so a re-import adds nothing.
 */
export const cellInSets = (t: string, bot: string) => `
  SELECT 1 FROM click_cell_sets s CROSS JOIN LATERAL unnest(string_to_array(s.cells, chr(3))) AS e(x)
  WHERE s.link_id = ${t}.link_id AND s.hour = ${t}.hour AND split_part(e.x, chr(2), 4) = ${t}.dims
    AND (split_part(e.x, chr(2), 3) = '1') = (${bot})`;

/**
 * Postgres migration 25: the cell sets table, and the deleted-link trigger's function taking a link's sets with its
 * cells. Existing cells stay where they are (reads take both tables). BRIN on hour as for cells: settling reads a day
 * of every link's sets, and sets are written in time order.
 */
export const CELL_SETS_POSTGRES = `
CREATE TABLE click_cell_sets (
  link_id text COLLATE "C" NOT NULL,
  hour    bigint NOT NULL,
  cells   text NOT NULL
);
-- A busy link's set is tens of kB, stored compressed out of line: lz4 where the server has it, as the click log
-- (bench Zipf traffic over 100,000 links, Postgres CPU per click: pglz 5.17, lz4 4.96 µs).
DO $$
BEGIN
  IF current_setting('server_version_num')::int >= 140000 THEN
    EXECUTE 'ALTER TABLE click_cell_sets ALTER COLUMN cells SET COMPRESSION lz4';
  END IF;
EXCEPTION WHEN feature_not_supported THEN
  NULL;
END $$;
CREATE INDEX click_cell_sets_link ON click_cell_sets (link_id, hour);
CREATE INDEX click_cell_sets_hour ON click_cell_sets USING brin (hour);
CREATE OR REPLACE FUNCTION click_data_of_deleted_links() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM click_cells c USING deleted_links d WHERE c.link_id = d.id;
  DELETE FROM click_cell_sets c USING deleted_links d WHERE c.link_id = d.id;
  DELETE FROM click_settled s USING deleted_links d WHERE s.link_id = d.id;
  RETURN NULL;
END $$;
`;

/**
 * Postgres keeps the rollup cells each transaction writes as cell sets (migration 25, docs/adr/0012): one row per
 * link and UTC hour of a transaction, holding every cell of it as text, appended with a plain INSERT under a
 * non-unique (link_id, hour) index. With every dimension in a cell's key, realistic traffic makes nearly every click
 * a cell of its own, and an upsert under the cells' unique key cost Postgres about 4.7 µs per cell; a set row costs
 * about as much as one such cell and holds a link's every click of the transaction (spread traffic: about four).
 *
 * Cells written before (migration), imported or seeded stay in click_cells; every read takes both, summed per cell
 * key (allCells), so the port's ClickCell is unchanged: the same key's clicks of several transactions are one cell.
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
}

interface Building {
  linkId: string;
  hour: number;
  /** Per `bot U+0002 dims`: [clicks, visitors]. */
  cells: Map<string, [number, number]>;
}

/**
 * The cell set rows the clicks make (one per link and hour) and each link's click count (its hits). A click usually
 * has the dimensions of the click before it (one visitor's run, a busy link), so its key is then not built again.
 */
export function cellSets(clicks: Iterable<StoredClick>): { sets: CellSetRow[]; hits: Map<string, number> } {
  const building = new Map<string, Building>();
  const hits = new Map<string, number>();
  let set: Building | undefined;
  let prevDims: ClickDims | undefined, prevBot = false, key = "";
  for (const c of clicks) {
    const hour = hourStart(c.ts);
    if (set === undefined || set.linkId !== c.linkId || set.hour !== hour) {
      const at = `${c.linkId}\u0002${hour}`;
      set = building.get(at);
      if (set === undefined) building.set(at, (set = { linkId: c.linkId, hour, cells: new Map() }));
    }
    if (prevDims === undefined || prevBot !== c.bot || !sameDims(c.dims, prevDims)) {
      key = `${c.bot ? 1 : 0}\u0002${encodeDims(c.dims)}`;
      prevDims = c.dims;
      prevBot = c.bot;
    }
    const cell = set.cells.get(key);
    if (cell === undefined) set.cells.set(key, [1, c.firstVisit ? 1 : 0]);
    else {
      cell[0]++;
      if (c.firstVisit) cell[1]++;
    }
    hits.set(c.linkId, (hits.get(c.linkId) ?? 0) + 1);
  }
  const sets: CellSetRow[] = [];
  for (const b of building.values()) {
    const parts: string[] = [];
    for (const [k, [clicks, visitors]] of b.cells) parts.push(`${clicks}\u0002${visitors}\u0002${k}`);
    sets.push({ linkId: b.linkId, hour: b.hour, cells: parts.join("\u0003") });
  }
  return { sets, hits };
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

/**
 * Hour digests: a busy link's cells of an hour not settled yet, summed per dimension, value and bot flag, so that a
 * breakdown by one dimension (readCellSums: "the last 90 days by country" reads the current hour this way) reads a
 * row per value instead of a cell per combination of every dimension's values. A link with thousands of clicks an
 * hour has about as many cells in it (city, region and referrer make most clicks a combination of their own), and
 * those grow with its traffic; its digest grows with the values seen. See docs/analytics.md#hour-digests and ADR 0015.
 *
 * The cells stay what they are (every other read, settling and exports use them); a digest only ever holds what was
 * folded into it, and each store marks which cells those were (SQLite: the part of a cell's counts folded so far;
 * Postgres: the cell set the folded cells were moved into). A read of an unsettled hour takes the digest plus the
 * cells not folded yet, whatever was written meanwhile (a late click, an import), so a digest is never stale, only
 * more or less complete. The store's foldBusyHours (the click maintenance, every minute) folds the link-hours with
 * at least FOLD_MIN_CELLS cells written since their last fold; settled hours' digests are deleted as they settle.
 */
import { DIMENSION_NAMES, type Dimension } from "../clicks/dimensions.ts";

/** Cells written to a link-hour since its last fold before it is folded: below this, reading its cells is as cheap. */
export const FOLD_MIN_CELLS = 64;

/** One digest row: a link-hour's clicks with one value ('' for unknown) of one dimension and one bot flag. */
export interface DigestRow {
  dimension: Dimension;
  value: string;
  bot: boolean;
  clicks: number;
  visitors: number;
}

/** A cell's part to fold: its dims key (encodeDims), bot flag and the counts not folded yet. */
export interface FoldCell {
  dims: string;
  bot: boolean;
  clicks: number;
  visitors: number;
}

const SEP = "\u0001";

/** The cells' counts summed per dimension, value and bot flag (one link and hour): what a fold adds to its digest. */
export function digestRows(cells: Iterable<FoldCell>): DigestRow[] {
  const sums = new Map<string, DigestRow>();
  for (const cell of cells) {
    // A key written before a dimension existed is shorter: the missing values are unknown ('').
    let start = 0;
    for (let i = 0; i < DIMENSION_NAMES.length; i++) {
      const end = start < 0 ? -1 : cell.dims.indexOf(SEP, start);
      const value = start < 0 ? "" : end < 0 ? cell.dims.slice(start) : cell.dims.slice(start, end);
      const key = `${i}${SEP}${cell.bot ? 1 : 0}${SEP}${value}`;
      const row = sums.get(key);
      if (row) {
        row.clicks += cell.clicks;
        row.visitors += cell.visitors;
      } else sums.set(key, { dimension: DIMENSION_NAMES[i]!, value, bot: cell.bot, clicks: cell.clicks, visitors: cell.visitors });
      start = end < 0 ? -1 : end + 1;
    }
  }
  return [...sums.values()];
}

/**
 * The cells each link-hour got since its last fold, as this process wrote them (recordClicks, imports): a fold
 * takes the link-hours past the threshold. A process that starts anew knows none, so its first fold asks the store
 * which link-hours not settled hold many cells not folded (each store's own query).
 */
export class BusyHours {
  private readonly written = new Map<string, Map<number, number>>();
  /** Whether the store was asked for busy link-hours since this process started (the first fold). */
  scanned = false;

  /** Counts `cells` cells written to the link-hour. */
  note(linkId: string, hour: number, cells = 1): void {
    let hours = this.written.get(linkId);
    if (hours === undefined) this.written.set(linkId, (hours = new Map()));
    hours.set(hour, (hours.get(hour) ?? 0) + cells);
  }

  /**
   * The link-hours from `fromHour` on with at least `minCells` cells written since their last fold, taken out of
   * the count (a failed fold leaves them to the next one's threshold); hours before `fromHour` are forgotten.
   */
  take(minCells: number, fromHour: number): { linkId: string; hour: number }[] {
    const due: { linkId: string; hour: number }[] = [];
    for (const [linkId, hours] of this.written) {
      for (const [hour, n] of hours) {
        if (hour < fromHour) hours.delete(hour);
        else if (n >= minCells) {
          due.push({ linkId, hour });
          hours.delete(hour);
        }
      }
      if (hours.size === 0) this.written.delete(linkId);
    }
    return due;
  }
}

/** A link-hour's digest rows of `dimension` are read by (link_id, dimension, hour): the key's order. */
const DIGESTS_TABLE = (text: string, int: string, bool: string, extra: string) => `
CREATE TABLE click_hour_digests (
  link_id   ${text} NOT NULL REFERENCES links(id) ON DELETE CASCADE,
  dimension ${text} NOT NULL,
  hour      ${int} NOT NULL,
  value     ${text} NOT NULL,
  bot       ${bool} NOT NULL,
  clicks    ${int} NOT NULL,
  visitors  ${int} NOT NULL,
  PRIMARY KEY (link_id, dimension, hour, value, bot)
)${extra};`;

/**
 * SQLite migration 27: the digests, and per cell the part of its counts folded into one (a cell's counts only grow,
 * so what is not folded yet is the difference). Adding the columns rewrites no row.
 */
export const HOUR_DIGESTS_SQLITE = `
ALTER TABLE click_cells ADD COLUMN folded_clicks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE click_cells ADD COLUMN folded_visitors INTEGER NOT NULL DEFAULT 0;
${DIGESTS_TABLE("TEXT", "INTEGER", "INTEGER", " WITHOUT ROWID")}`;

/**
 * Postgres migration 29: the digests, and a mark on the cell sets holding folded cells: a fold moves a link-hour's
 * cells not folded (its rows of click_cells, imported or from before cell sets, and its unmarked sets) into one
 * marked set. A column with a constant default rewrites no row.
 */
export const HOUR_DIGESTS_POSTGRES = `
ALTER TABLE click_cell_sets ADD COLUMN folded boolean NOT NULL DEFAULT false;
${DIGESTS_TABLE("text", "bigint", "boolean", "")}`;

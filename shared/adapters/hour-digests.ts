/**
 * Hour digests: a busy link's cells of an hour not settled yet, summed per dimension, value and bot flag, so that a
 * breakdown by one dimension (readCellSums: "the last 90 days by country" reads the current hour this way) reads a
 * row per value instead of a cell per combination of every dimension's values. A link with thousands of clicks an
 * hour has about as many cells in it (city, region and referrer make most clicks a combination of their own), and
 * those grow with its traffic; its digest grows with the values seen, and keeps only the dimensions of few values
 * (DimensionSpec.digested). See docs/analytics.md#hour-digests and ADR 0015.
 *
 * The cells stay what they are (every other read, settling and exports use them); a digest only ever holds what was
 * folded into it, and each store marks which cells those were (SQLite: the part of a cell's counts folded so far;
 * Postgres: a mark on the cell sets folded, click_cells rows moved into a marked set). A read of an unsettled hour
 * takes the digest plus the cells not folded yet, whatever was written meanwhile (a late click, an import), so a
 * digest is never stale, only more or less complete. The store's foldBusyHours (the click maintenance, every minute) folds the link-hours with
 * at least FOLD_MIN_CELLS cells written since their last fold; settled hours' digests are deleted as they settle
 * (Postgres: a day later, see its readCellSums).
 */
import { DIMENSION_NAMES, DIMENSIONS, type Dimension } from "../clicks/dimensions.ts";

/**
 * Cells written to a link-hour since its last fold before it is folded: fewer are read about as fast as a digest,
 * and each fold writes a digest row per value of each digested dimension it saw.
 */
export const FOLD_MIN_CELLS = 256;
/** Link-hours a process counts at once (BusyHours): about 10 MB at most. */
const MAX_TRACKED = 100_000;

/** The dimensions digests keep (DimensionSpec.digested); a breakdown by another reads every cell. */
export const DIGESTED: readonly Dimension[] = DIMENSION_NAMES.filter((d) => DIMENSIONS[d].digested);
export const isDigested = (d: Dimension): boolean => DIMENSIONS[d].digested;
/** Their places in a dims key (encodeDims: declaration order), 1-based. */
const DIGESTED_POSITIONS: readonly number[] = DIGESTED.map((d) => DIMENSION_NAMES.indexOf(d) + 1);

/** One digest row: a link-hour's clicks with one value ('' for unknown) of one dimension and one bot flag. */
export interface DigestRow {
  dimension: Dimension;
  value: string;
  bot: boolean;
  clicks: number;
  visitors: number;
}

const SEP = "\u0001";

/** Per digested dimension (in DIGESTED order), value → [clicks, visitors, bot clicks, bot visitors]. */
type Sums = Map<string, number[]>[];

/**
 * One link-hour's cells summed per digested dimension, value and bot flag: what a fold adds to its digest. A cell
 * costs a cut of each digested value out of its key and a Map lookup (no key string built, no object per cell): a
 * fold takes every cell a busy link-hour got in the minute.
 */
export class DigestSums {
  private readonly sums: Sums = DIGESTED.map(() => new Map());

  /** Adds a cell: its dims key (encodeDims), bot flag and counts. */
  add(dims: string, bot: boolean, clicks: number, visitors: number): void {
    // A key written before a dimension existed is shorter: the missing values are unknown ('').
    let start = 0, position = 1, d = 0;
    for (const want of DIGESTED_POSITIONS) {
      while (position < want && start >= 0) {
        const at = dims.indexOf(SEP, start);
        start = at < 0 ? -1 : at + 1;
        position++;
      }
      let value = "";
      if (start >= 0) {
        const end = dims.indexOf(SEP, start);
        value = end < 0 ? dims.slice(start) : dims.slice(start, end);
      }
      const of = this.sums[d++]!;
      let s = of.get(value);
      if (s === undefined) of.set(value, (s = [0, 0, 0, 0]));
      const at = bot ? 2 : 0;
      s[at] += clicks;
      s[at + 1] += visitors;
    }
  }


  rows(): DigestRow[] {
    const out: DigestRow[] = [];
    this.sums.forEach((of, d) => {
      for (const [value, [c, v, bc, bv]] of of) {
        if (c! > 0 || v! > 0) out.push({ dimension: DIGESTED[d]!, value, bot: false, clicks: c!, visitors: v! });
        if (bc! > 0 || bv! > 0) out.push({ dimension: DIGESTED[d]!, value, bot: true, clicks: bc!, visitors: bv! });
      }
    });
    return out;
  }
}

/**
 * The cells each link-hour got since its last fold, as this process wrote them (recordClicks, imports): a fold
 * takes the link-hours past the threshold. A process that starts anew knows none, so its first fold asks the store
 * which link-hours not settled hold many cells not folded (each store's own query).
 */
export class BusyHours {
  /** Hour → link → cells written since its last fold: a few hours, each a Map of the links written to in it. */
  private readonly written = new Map<number, Map<string, number>>();
  private size = 0;
  /** Whether the store was asked for busy link-hours since this process started (the first fold). */
  scanned = false;

  /**
   * `maxTracked`: link-hours counted at once, so traffic spread over millions of links cannot grow this without
   * bound; past it, only link-hours already counted go on counting (a busy link is among the first an hour sees).
   */
  constructor(private readonly maxTracked = MAX_TRACKED) {}

  /** Counts `cells` cells written to the link-hour. */
  note(linkId: string, hour: number, cells = 1): void {
    let links = this.written.get(hour);
    if (links === undefined) this.written.set(hour, (links = new Map()));
    const n = links.get(linkId);
    if (n !== undefined) links.set(linkId, n + cells);
    else if (this.size < this.maxTracked) {
      links.set(linkId, cells);
      this.size++;
    }
  }

  /**
   * The link-hours from `fromHour` on with at least `minCells` cells written since their last fold, taken out of
   * the count (a failed fold leaves them to the next one's threshold); hours before `fromHour` are forgotten.
   */
  take(minCells: number, fromHour: number): { linkId: string; hour: number }[] {
    const due: { linkId: string; hour: number }[] = [];
    for (const [hour, links] of this.written) {
      if (hour < fromHour) {
        this.size -= links.size;
        this.written.delete(hour);
        continue;
      }
      for (const [linkId, n] of links) {
        if (n < minCells) continue;
        due.push({ linkId, hour });
        links.delete(linkId);
        this.size--;
      }
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

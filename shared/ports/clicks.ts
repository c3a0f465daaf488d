/**
 * The clicks-and-stats role of the store: the raw click log as the drain writes it, the rollup cells stats are
 * answered from, and the settled totals that keep a busy link's long-range stats as cheap as a quiet one's.
 *
 * Three layers, each derived from the one before and each idempotent per delivered batch:
 * - the raw click log: one row per delivered batch (every link of it), JSON columns; kept CLICK_RETENTION_DAYS;
 * - rollup cells: per link and UTC hour, one per distinct combination of dimensions and bot flag, with the
 *   clicks and first visits (unique visitors) it holds; kept for ever;
 * - settled totals, built once a UTC day is over (settleDays): per link and day (and ISO week, and month), one row
 *   per dimension value, and per link and hour, the link's total. A query without filters reads these for whole settled days and
 *   cells only for the rest, so its cost follows days × values, not clicks.
 */
import type { ClickDims, Dimension } from "../clicks/dimensions.ts";

/** A click as written to storage: the address is reduced to a country (and region, city), never stored raw. */
export interface StoredClick {
  /**
   * The delivery it came in (a stream entry, a writer-thread batch): delivered, redelivered and written whole,
   * so it is what makes a redelivery harmless. A store keeps each batch once.
   */
  batch: string;
  linkId: string;
  ts: number;
  dims: ClickDims;
  /** A crawler, link-preview fetcher or script (isbot). */
  bot: boolean;
  /** The visitor's first counted click on this link in its UTC day (a visitor is a keyed hash, see VisitorLedger). */
  firstVisit: boolean;
  /** The referring page's whole address (at most 1,024 characters), for the raw log and exports; dims.referrer is its host. */
  referrerUrl: string | null;
}

/** The clicks of one link in one UTC hour with one combination of dimensions and bot flag. */
export interface ClickCell {
  linkId: string;
  /** Start of the UTC hour, epoch ms. */
  hour: number;
  dims: ClickDims;
  bot: boolean;
  clicks: number;
  /** First visits among them: summed, they are the unique visitors of any set of cells (visitors are per link and day). */
  visitors: number;
}

/**
 * How much time a settled row of a dimension covers: a UTC day, or the settled days of an ISO week (Monday first)
 * or calendar month, UTC. A query covers a range's whole months and weeks with their rows and only its edges with
 * day rows, so a 90-day breakdown reads about a dozen buckets' values, not 90 days'.
 */
export const SETTLED_GRAINS = ["day", "week", "month"] as const;
/**
 * "hour": a dimension's rows per hour of the day after the settled days, made by settleHours every few minutes
 * and replaced by that day's rows once it is settled, so today's part of a range reads hours × values, not cells.
 */
export type SettledGrain = (typeof SETTLED_GRAINS)[number] | "hour";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The start of the `grain` bucket holding the UTC day (hour, for "hour") that starts at `day` (epoch day 0 was a Thursday). */
export function grainStart(grain: SettledGrain, day: number): number {
  if (grain === "day" || grain === "hour") return day;
  if (grain === "week") return day - ((((Math.floor(day / DAY_MS) + 3) % 7) + 7) % 7) * DAY_MS;
  const d = new Date(day);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** The start of the `grain` bucket after the one starting at `start`. */
export function grainNext(grain: SettledGrain, start: number): number {
  if (grain === "hour") return start + HOUR_MS;
  if (grain !== "month") return start + (grain === "day" ? 1 : 7) * DAY_MS;
  const d = new Date(start);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/**
 * A settled total. `dimension` null: the link's whole total in the hour starting at `bucket`. Otherwise the
 * link's clicks with `dimension` = `value` in the day, week or month (SettledGrain) starting at `bucket`.
 */
export interface SettledTotal {
  linkId: string;
  dimension: Dimension | null;
  bucket: number;
  value: string | null;
  bot: boolean;
  clicks: number;
  visitors: number;
}

/** An account's clicks in one UTC day (bot or not): the sum of its links' settled day totals. */
export interface AccountDayTotal {
  bucket: number;
  bot: boolean;
  clicks: number;
  visitors: number;
}

/** A link's settled clicks in a bucket, or summed over buckets (sumLinkTotals). */
export interface LinkTotal {
  linkId: string;
  clicks: number;
  visitors: number;
}

/** A link's clicks in one UTC hour (bot or not), summed over its cells. */
export interface LinkHourTotal {
  linkId: string;
  hour: number;
  bot: boolean;
  clicks: number;
  visitors: number;
}

/** A link's cells of one UTC hour and bot flag with one value of a dimension, summed (readCellSums). */
export interface CellSumRow {
  hour: number;
  bot: boolean;
  /** The dimension's value; null: unknown. */
  value: string | null;
  clicks: number;
  visitors: number;
}

/** The grains link totals are kept in for ranking: a UTC day, a calendar month (UTC). */
export type RankGrain = "day" | "month";

/** Buckets of one grain with starts in [from, to). */
export interface RankRun {
  grain: RankGrain;
  from: number;
  to: number;
}

/** Whose clicks a read covers: one link, or every link of an account. */
export type ClickScope = { linkId: string } | { accountId: string };

export interface ClickStore {
  /**
   * Raw log, cells, settled totals of already settled days (a late click), and link hit counts, in one
   * transaction. Idempotent per batch: a batch written before is skipped whole, so every click of a batch must
   * come in the same call. Clicks of unknown links are dropped.
   */
  recordClicks(clicks: StoredClick[]): Promise<void>;
  /**
   * The scope's cells in UTC hours [fromHour, toHour), in no particular order (streamed). A cell's key (link, hour,
   * dims, bot) may come more than once (Postgres keeps a write's cells as one set per link and hour): its clicks and
   * visitors are the sums of its rows, which every reader adds up anyway.
   */
  readCells(scope: ClickScope, fromHour: number, toHour: number): AsyncIterable<ClickCell>;
  /**
   * The scope's settled totals of `dimension` (null: hourly link totals) with bucket in [from, to) (streamed); a
   * dimension's rows of `grain` (day unless given).
   */
  readSettled(scope: ClickScope, dimension: Dimension | null, from: number, to: number, grain?: SettledGrain): AsyncIterable<SettledTotal>;
  /**
   * The link's settled totals of `dimension` summed per value and bot flag over `runs` (buckets of a grain with
   * starts in [from, to); SettledGrain rows of the dimension), streamed: one row per value, not one per bucket and
   * value, for a breakdown over many buckets. `bucket` is the first run's start. `bots`: only rows of these bot flags
   * (default both; a busy link has a bot row for most values, so a query leaving bots out reads half the rows).
   */
  readSettledSums(linkId: string, dimension: Dimension, runs: { grain: SettledGrain; from: number; to: number }[], bots?: readonly boolean[]): AsyncIterable<SettledTotal>;
  /**
   * The link's cells in UTC hours [fromHour, toHour) summed per hour, bot flag and value of `dimension`, at once: a
   * busy link's current hour holds thousands of cells (one per combination of every dimension's values), a
   * breakdown by one dimension needs a row per value.
   */
  readCellSums(linkId: string, fromHour: number, toHour: number, dimension: Dimension): Promise<CellSumRow[]>;
  /**
   * Folds the cells of busy link-hours not settled yet into their hour digests (shared/adapters/hour-digests.ts):
   * those with at least `minCells` (default FOLD_MIN_CELLS) cells written since their last fold, as this process
   * counted them, and on a process's first call those the store holds with that many cells not folded. Changes no
   * answer of any read, only what readCellSums reads for them. Answers how many link-hours it folded. Safe to run
   * from several processes at once.
   */
  foldBusyHours(minCells?: number): Promise<number>;
  /** The start of the first UTC day not settled yet (0 before anything is settled). */
  settledBefore(): Promise<number>;
  /**
   * The start of the first hour whose cells are not in the settled totals: settledBefore, or an hour of the day
   * after it once settleHours settled hours of that day.
   */
  settledHoursBefore(): Promise<number>;
  /**
   * Settles the whole hours before `before` of the first day not settled yet (none before anything is settled)
   * into hourly rows per dimension value and the link's hourly totals; answers the new settledHoursBefore.
   * settleDays replaces that day's hourly dimension rows with its day rows. Safe to run from several processes.
   */
  settleHours(before: number): Promise<number>;
  /**
   * Settles every whole UTC day before `before` (a day start) not settled yet, from its cells; answers the new
   * settledBefore. Safe to run from several processes at once.
   */
  settleDays(before: number): Promise<number>;
  /**
   * The account's settled totals per UTC day with bucket in [from, to), bot or not (streamed): what its links'
   * settled days add up to, kept as they settle (and as late clicks, imports and deleted links change them).
   */
  readAccountTotals(accountId: string, from: number, to: number): AsyncIterable<AccountDayTotal>;
  /**
   * The account's links' settled totals in the `grain` bucket starting at `bucket` with bot flag `bot`, best first
   * (clicks descending, then link id ascending), rows [offset, offset + limit) of that order.
   */
  readRankedLinks(accountId: string, grain: RankGrain, bucket: number, bot: boolean, offset: number, limit: number): Promise<LinkTotal[]>;
  /**
   * The account's cells in UTC hours [fromHour, toHour) summed per link, hour and bot flag, all at once (an
   * account's unsettled hour for its top links: a row per active link, no dimensions); null when those hours are not
   * all unsettled or are too many (read them with readCells).
   */
  readRecentLinkTotals(accountId: string, fromHour: number, toHour: number): Promise<LinkHourTotal[] | null>;
  /** The settled totals of `linkIds` (links of the account; others are left out) summed over `runs` and `bots`. */
  sumLinkTotals(accountId: string, linkIds: string[], runs: RankRun[], bots: boolean[]): Promise<LinkTotal[]>;
  /** The scope's raw clicks with ts in [from, to), batch by batch, oldest batch first (streamed: there may be millions). */
  readClickLog(scope: ClickScope, from: number, to: number): AsyncIterable<StoredClick>;
  /** Deletes raw log batches whose newest click is older than `before`; answers how many clicks went. */
  pruneClickLog(before: number): Promise<number>;
}

/**
 * The shapes of an analytics question and its answer (issue #20), shared by the query engine, REST, MCP and the
 * dashboard. The TypeBox schemas for the API (control/stats/schemas.ts) must describe exactly these.
 */
import type { Dimension } from "../../shared/clicks/dimensions.ts";

export const INTERVALS = ["hour", "day", "week", "month"] as const;
export type Interval = (typeof INTERVALS)[number];
export const BOT_MODES = ["exclude", "include", "only"] as const;
export type BotMode = (typeof BOT_MODES)[number];
/** What an account-wide answer can also be grouped by, besides the click dimensions. */
export const ACCOUNT_GROUPINGS = ["link", "tag", "folder"] as const;
export type AccountGrouping = (typeof ACCOUNT_GROUPINGS)[number];
export type Grouping = Dimension | AccountGrouping;
export type Filters = Partial<Record<Grouping, (string | null)[]>>;

/** A parsed, validated question (parseStatsQuery). Times are epoch ms, `to` exclusive. */
export interface StatsQuery {
  from: number;
  to: number;
  interval: Interval;
  /** IANA zone: interval boundaries (days, weeks from Monday, months) follow it. */
  tz: string;
  /** One breakdown only, or null for every dimension's. */
  groupBy: Grouping | null;
  /**
   * Only clicks whose dimension has one of these values (null: unknown). Dimensions are ANDed. For the account,
   * also link (slugs), tag and folder (null: no tag, no folder), which select links.
   */
  filters: Filters;
  bots: BotMode;
  /** Rows per breakdown before the "other" bucket. */
  limit: number;
}

export interface Counts {
  clicks: number;
  visitors: number;
}

export interface SeriesPoint extends Counts {
  /** Start of the interval, ISO 8601 with the zone's offset (2026-03-29T00:00:00+01:00). */
  start: string;
}

export interface BreakdownRow extends Counts {
  /** The dimension value (null: unknown), or for link/tag/folder groupings the link id, tag or folder. */
  value: string | null;
  /** For groupBy=link: the link's slug, domain (as the link object names it) and short address. */
  slug?: string;
  domain?: string;
  shortUrl?: string;
}

export interface Breakdown {
  rows: BreakdownRow[];
  /** Everything past the top `limit` rows, summed; zeros when there is nothing more. */
  other: Counts;
}

export interface Analytics {
  /** Present for one link's analytics. */
  slug?: string;
  from: string;
  to: string;
  interval: Interval;
  tz: string;
  bots: BotMode;
  filters: Filters;
  totals: Counts;
  series: SeriesPoint[];
  /** Keyed by dimension (or link/tag/folder): every dimension's breakdown, or the groupBy one only. */
  breakdowns: Partial<Record<Grouping, Breakdown>>;
}

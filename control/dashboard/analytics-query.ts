/**
 * What an analytics page shows, as it is kept in its URL: a range (a preset or custom dates), an interval, a
 * time zone, the bots switch and filters on any dimension. Every link and form of the page is built from this state, so a
 * reload, the back button or a shared address show the same figures. The service validates the question;
 * this module only turns the page's words (24h, 7d, custom dates) into the API's (from, to, interval).
 */
import { AppError } from "../../shared/errors.ts";
import { DIMENSION_NAMES, isDimension } from "../../shared/clicks/dimensions.ts";
import type { Grouping, Interval } from "../stats/analytics-types.ts";
import { canonicalZone, zoneOf, type Zone } from "../stats/zone-time.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
export const DEFAULT_ZONE = "UTC";

/** The range picker's presets: how far back, and the interval each shows by default. */
export const RANGE_PRESETS = {
  "24h": { label: "24 hours", days: 1, interval: "hour" },
  "7d": { label: "7 days", days: 7, interval: "day" },
  "30d": { label: "30 days", days: 30, interval: "day" },
  "90d": { label: "90 days", days: 90, interval: "day" },
} as const satisfies Record<string, { label: string; days: number; interval: Interval }>;
export type RangePreset = keyof typeof RANGE_PRESETS;
export const RANGE_NAMES = Object.keys(RANGE_PRESETS) as RangePreset[];
export type RangeName = RangePreset | "custom";
export const DEFAULT_RANGE: RangePreset = "24h";

/** The page's state as read from its URL; values are kept as typed, the service judges them. */
export interface PageQuery {
  range: RangeName;
  /** Custom range: first and last day shown (YYYY-MM-DD in the page's zone), both included. */
  from: string;
  to: string;
  /** "" : the range's own interval. */
  interval: string;
  bots: string;
  /** IANA zone whose days the range and the bars follow; "" : UTC. */
  tz: string;
  /**
   * Active filters in the order they were added; a dimension may have several values (ORed). Values are the
   * API's (`(none)` for unknown); the account page also filters by link, tag and folder.
   */
  filters: [Grouping, string][];
  /** Parameters naming what the page is about (a link's domain): kept in every link and form, not asked of the service. */
  keep: [string, string][];
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The page's state; `groupings` are the filters the page takes (a link's: its dimensions), `keep` the parameters it keeps. */
export function parsePageQuery(sp: URLSearchParams, groupings: readonly Grouping[] = DIMENSION_NAMES, keep: readonly string[] = []): PageQuery {
  const range = sp.get("range") ?? "";
  const filters: [Grouping, string][] = [];
  for (const [name, value] of sp) {
    if ((groupings as readonly string[]).includes(name) && value !== "" && !filters.some(([d, v]) => d === name && v === value)) {
      filters.push([name as Grouping, value]);
    }
  }
  return {
    range: range === "custom" || Object.hasOwn(RANGE_PRESETS, range) ? (range as RangeName) : DEFAULT_RANGE,
    from: (sp.get("from") ?? "").trim(),
    to: (sp.get("to") ?? "").trim(),
    interval: (sp.get("interval") ?? "").trim(),
    bots: (sp.get("bots") ?? "").trim(),
    tz: (sp.get("tz") ?? "").trim(),
    filters,
    keep: keep.flatMap((name) => (sp.get(name) ? [[name, sp.get(name)!] as [string, string]] : [])),
  };
}

/** The page's URL parameters for this state; defaults are left out, so the plain page has a plain address. */
export function queryParams(q: PageQuery): URLSearchParams {
  const p = new URLSearchParams(q.keep);
  if (q.range !== DEFAULT_RANGE) p.set("range", q.range);
  if (q.range === "custom") {
    p.set("from", q.from);
    p.set("to", q.to);
  }
  if (q.interval) p.set("interval", q.interval);
  if (q.bots && q.bots !== "exclude") p.set("bots", q.bots);
  if (q.tz && q.tz !== DEFAULT_ZONE) p.set("tz", q.tz);
  for (const [d, v] of q.filters) p.append(d, v);
  return p;
}

/** `path` with this state (and `changes` to it) as its query string. */
export function pageUrl(path: string, q: PageQuery, changes: Partial<PageQuery> = {}): string {
  const qs = queryParams({ ...q, ...changes }).toString();
  return qs ? `${path}?${qs}` : path;
}

export const hasFilter = (q: PageQuery, d: Grouping, v: string) => q.filters.some(([fd, fv]) => fd === d && fv === v);

/** The state with this filter added, or removed when it is there already (a breakdown row toggles). */
export function toggleFilter(q: PageQuery, d: Grouping, v: string): Partial<PageQuery> {
  return { filters: hasFilter(q, d, v) ? q.filters.filter(([fd, fv]) => fd !== d || fv !== v) : [...q.filters, [d, v]] };
}

/** The state with only the filters a link's page takes (from the overview to a link: tag and folder drop out). */
export const linkPageFilters = (q: PageQuery): Partial<PageQuery> => ({ filters: q.filters.filter(([d]) => isDimension(d)) });

/** The range as instants: [from, to), to exclusive, the interval the page asks for, and its zone (canonical). */
export interface ResolvedRange {
  from: number;
  to: number;
  interval: string;
  tz: string;
}

/** Midnight of the zone's calendar day holding t, as a wall-clock time (see Zone.wall). */
const wallDay = (zone: Zone, t: number) => Math.floor(zone.wall(t) / DAY) * DAY;

function pageZone(q: PageQuery): Zone {
  const name = canonicalZone(q.tz || DEFAULT_ZONE);
  if (!name) throw new AppError("unknown_time_zone", "The page's time zone is not an IANA zone", { errors: [{ path: "/tz", message: "unknown zone" }] });
  return zoneOf(name);
}

/**
 * Presets end with the current hour (24 h) or today in the page's zone, so every bar is a whole hour or day and
 * the last is the one still filling; a custom range covers its first and last day whole, in that zone. Dates a
 * person typed wrong are refused here with words for people; everything else (a reversed range, too many
 * points) the service refuses.
 */
export function resolveRange(q: PageQuery, now: number): ResolvedRange {
  const zone = pageZone(q);
  const tz = zone.name;
  if (q.range !== "custom") {
    const preset = RANGE_PRESETS[q.range];
    const interval = q.interval || preset.interval;
    if (preset.days === 1) {
      const to = now - (now % HOUR) + HOUR;
      return { from: to - DAY, to, interval, tz };
    }
    const today = wallDay(zone, now);
    return { from: zone.instant(today - (preset.days - 1) * DAY), to: zone.instant(today + DAY), interval, tz };
  }
  const problems = [
    ...(DATE.test(q.from) && !Number.isNaN(Date.parse(q.from)) ? [] : [{ path: "/from", message: "Enter the first day as a date, like 2026-11-01" }]),
    ...(DATE.test(q.to) && !Number.isNaN(Date.parse(q.to)) ? [] : [{ path: "/to", message: "Enter the last day as a date, like 2026-11-30" }]),
  ];
  if (problems.length) throw new AppError("invalid_input", "The custom range has dates that are not dates", { errors: problems });
  const first = Date.parse(`${q.from}T00:00:00Z`);
  const last = Date.parse(`${q.to}T00:00:00Z`);
  const interval = q.interval || (last - first < 2 * DAY ? "hour" : "day");
  return { from: zone.instant(first), to: zone.instant(last + DAY), interval, tz };
}

const iso = (t: number) => new Date(t).toISOString();

/** The service's raw query (the REST API's parameters) for this page state. */
export function serviceQuery(q: PageQuery, r: ResolvedRange, extra: Record<string, string> = {}): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = { from: iso(r.from), to: iso(r.to), interval: r.interval, tz: r.tz, ...extra };
  if (q.bots) out.bots = q.bots;
  for (const [d, v] of q.filters) out[d] = [...[out[d] ?? []].flat(), v];
  return out;
}

/** The first and last day of this resolved range in its zone (what the custom fields show for a preset). */
export function rangeDates(r: ResolvedRange): { from: string; to: string } {
  const zone = zoneOf(r.tz);
  return { from: iso(wallDay(zone, r.from)).slice(0, 10), to: iso(wallDay(zone, r.to) - DAY).slice(0, 10) };
}

/** The codes a refused analytics question comes back with (control/stats' parseStatsQuery, and ours above). */
const QUESTION_CODES = new Set(["invalid_input", "invalid_parameter", "invalid_range", "too_many_points", "unknown_dimension", "unknown_time_zone"]);
export const isQuestionProblem = (e: unknown): e is AppError => e instanceof AppError && QUESTION_CODES.has(e.code);

export type RangeField = "from" | "to" | "interval" | "bots" | "tz";
export interface RangeProblem {
  /** The picker's control to mark invalid, or null when the problem is not in one (a filter). */
  field: RangeField | null;
  text: string;
}

/** What a person should do about a problem in this field (the service's path names it). */
const FIELD_WORDS: Record<RangeField, string> = {
  from: "Enter the first day as a date, like 2026-11-01.",
  to: "Enter the last day as a date, like 2026-11-30.",
  interval: "Choose an interval from the list: hour, day, week or month.",
  bots: "Choose people only, people and bots, or bots only.",
  tz: "Choose a time zone from the list.",
};

/** A refused question in words for people, by its code and field: never the validation text itself. */
export function rangeProblems(e: AppError): RangeProblem[] {
  switch (e.code) {
    case "invalid_range":
      return [{ field: "to", text: "The last day must be on or after the first day." }];
    case "too_many_points":
      return [{ field: "interval", text: "That is too many bars for one chart: choose a longer interval (day, week or month) or a shorter range." }];
    case "unknown_dimension":
      return [{ field: null, text: "A filter of this page is not one we know: remove it, or start again from the plain page." }];
    case "unknown_time_zone":
      return [{ field: "tz", text: FIELD_WORDS.tz }];
  }
  const fields = (e.errors ?? []).map((er) => er.path.replace(/^\//, "")).filter((f): f is RangeField => Object.hasOwn(FIELD_WORDS, f));
  if (!fields.length) return [{ field: null, text: "A setting of this page is not one we know: start again from the plain page." }];
  return [...new Set(fields)].map((field) => ({ field, text: FIELD_WORDS[field] }));
}

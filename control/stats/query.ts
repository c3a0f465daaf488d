/**
 * The analytics question as the API, MCP and the dashboard ask it (query parameters) turned into a StatsQuery,
 * or a 400 problem with a stable code. Pure: the clock comes in as `now`.
 */
import { DIMENSION_NAMES, isDimension, type Dimension } from "../../shared/clicks/dimensions.ts";
import { AppError } from "../../shared/errors.ts";
import {
  ACCOUNT_GROUPINGS, BOT_MODES, INTERVALS, type AccountGrouping, type BotMode, type Grouping, type Interval, type StatsQuery,
} from "./analytics-types.ts";
import { canonicalZone, DAY, utcOf, zoneOf, type Zone } from "./zone-time.ts";

/** A query string as frameworks hand it over: a repeated parameter may come as an array. */
export type RawQuery = Record<string, string | string[] | undefined>;
export type StatsScope = "link" | "account";

/** How a filter value or breakdown row spells "unknown" in a query string (`referrer=(none)`: direct visits). */
export const NONE = "(none)";
export const MAX_POINTS = 1_000;
export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;
const MAX_FILTER_VALUES = 100;
const MAX_VALUE_LENGTH = 200;
/** The parameters that are not filters. */
export const STATS_PARAMETERS = ["from", "to", "interval", "tz", "groupBy", "bots", "limit"] as const;

const fail = (code: "invalid_parameter" | "invalid_range" | "unknown_dimension" | "unknown_time_zone", param: string, message: string) =>
  new AppError(code, `${param}: ${message}`, { errors: [{ path: `/${param}`, message }] });

const isOneOf = <T extends string>(list: readonly T[], v: string): v is T => (list as readonly string[]).includes(v);
const listed = (list: readonly string[]) => list.join(", ");

/** The groupings a scope offers: every dimension, and for the account also link, tag and folder. */
export const groupingsOf = (scope: StatsScope): readonly Grouping[] =>
  scope === "account" ? [...DIMENSION_NAMES, ...ACCOUNT_GROUPINGS] : DIMENSION_NAMES;

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * An ISO 8601 date or date-time as epoch ms. A date, or a time without an offset, is wall-clock time in `zone`
 * (from=2026-11-01 with tz=Europe/Berlin starts at Berlin's midnight). Null when it is no such time.
 */
export function parseIsoTime(s: string, zone: Zone): number | null {
  const m = ISO.exec(s);
  if (!m) return null;
  const [year, month, day, hour = 0, minute = 0, second = 0] = m.slice(1, 7).map((v) => (v === undefined ? undefined : Number(v))) as number[];
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, "0")) : 0;
  if (month! < 1 || month! > 12 || day! < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const wall = utcOf(year!, month! - 1, day!, hour, minute, second, ms);
  if (new Date(wall).getUTCDate() !== day) return null; // 2026-02-30
  const offset = m[8];
  if (offset === undefined) return zone.instant(wall);
  if (offset === "Z") return wall;
  const [, sign, oh, om] = /^([+-])(\d{2}):?(\d{2})$/.exec(offset)!;
  if (Number(oh) > 23 || Number(om) > 59) return null;
  return wall - (sign === "-" ? -1 : 1) * (Number(oh) * 60 + Number(om)) * 60_000;
}

/** A single-valued parameter: absent or empty is undefined; repeated is an error. */
export function single(raw: RawQuery, name: string): string | undefined {
  const v = raw[name];
  if (Array.isArray(v)) {
    if (v.length > 1) throw fail("invalid_parameter", name, "must be given once");
    return v[0] || undefined;
  }
  return v || undefined;
}

export function parseTimeZone(raw: RawQuery): Zone {
  const tz = single(raw, "tz") ?? "UTC";
  const name = canonicalZone(tz);
  if (!name) throw fail("unknown_time_zone", "tz", `"${tz}" is not an IANA time zone (such as Europe/Berlin or UTC)`);
  return zoneOf(name);
}

/** from and to, both optional; reversed or empty ranges are invalid_range. */
export function parseRange(raw: RawQuery, zone: Zone): { from?: number; to?: number } {
  const out: { from?: number; to?: number } = {};
  for (const name of ["from", "to"] as const) {
    const v = single(raw, name);
    if (v === undefined) continue;
    const t = parseIsoTime(v, zone);
    if (t === null) throw fail("invalid_range", name, `"${v}" is not an ISO 8601 date or date-time (2026-11-01 or 2026-11-01T09:00:00Z)`);
    out[name] = t;
  }
  if (out.from !== undefined && out.to !== undefined && out.from >= out.to) throw fail("invalid_range", "from", "must be before to");
  return out;
}

/** A filter's values: comma-separated (OR), `(none)` for unknown; country and region codes in capitals. */
function filterValues(name: string, raw: string | string[]): (string | null)[] {
  const items = (Array.isArray(raw) ? raw : [raw]).flatMap((v) => v.split(","));
  if (items.length > MAX_FILTER_VALUES) throw fail("invalid_parameter", name, `at most ${MAX_FILTER_VALUES} values`);
  return items.map((v) => {
    const s = v.trim();
    if (s === "" || s.length > MAX_VALUE_LENGTH) throw fail("invalid_parameter", name, `values are comma-separated, 1-${MAX_VALUE_LENGTH} characters each; ${NONE} for unknown`);
    if (s === NONE) return null;
    return name === "country" || name === "region" ? s.toUpperCase() : s;
  });
}

function parseChoice<T extends string>(raw: RawQuery, name: string, list: readonly T[]): T | undefined {
  const v = single(raw, name);
  if (v !== undefined && !isOneOf(list, v)) throw fail("invalid_parameter", name, `must be one of ${listed(list)}`);
  return v as T | undefined;
}

function parseLimit(raw: RawQuery): number {
  const v = single(raw, "limit");
  if (v === undefined) return DEFAULT_LIMIT;
  const n = /^\d{1,4}$/.test(v) ? Number(v) : NaN;
  if (!(n >= 1 && n <= MAX_LIMIT)) throw fail("invalid_parameter", "limit", `must be an integer from 1 to ${MAX_LIMIT}`);
  return n;
}

export function parseStatsQuery(raw: RawQuery, now: number, scope: StatsScope): StatsQuery {
  const groupings = groupingsOf(scope);
  const filters: StatsQuery["filters"] = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined || isOneOf(STATS_PARAMETERS, name)) continue;
    if (!isOneOf(groupings, name)) {
      throw fail("unknown_dimension", name, `is neither a parameter (${listed(STATS_PARAMETERS)}) nor a dimension (${listed(groupings)})`);
    }
    filters[name] = filterValues(name, value);
  }
  const zone = parseTimeZone(raw);
  const groupBy = single(raw, "groupBy");
  if (groupBy !== undefined && !isOneOf(groupings, groupBy)) {
    throw fail("unknown_dimension", "groupBy", `"${groupBy}" is not one of ${listed(groupings)}`);
  }
  const bots: BotMode = parseChoice(raw, "bots", BOT_MODES) ?? "exclude";
  const limit = parseLimit(raw);
  const asked = parseChoice(raw, "interval", INTERVALS);
  const range = parseRange(raw, zone);
  const to = range.to ?? now;
  const from = range.from ?? to - (asked === "hour" ? DAY : 30 * DAY);
  if (from >= to) throw fail("invalid_range", "from", "must be before to");
  const interval: Interval = asked ?? (to - from <= 2 * DAY ? "hour" : "day");
  if (zone.intervals(interval, from, to, MAX_POINTS) === null) {
    throw new AppError("too_many_points", `The range holds more than ${MAX_POINTS} ${interval} intervals: shorten it or choose a longer interval`, {
      errors: [{ path: "/from", message: `at most ${MAX_POINTS} points per series` }],
    });
  }
  return { from, to, interval, tz: zone.name, groupBy: (groupBy as Grouping | undefined) ?? null, filters, bots, limit };
}

/** The filters on click dimensions (the others, link/tag/folder, select links). */
export const dimensionFilters = (q: StatsQuery) =>
  Object.entries(q.filters).filter(([name]) => isDimension(name)) as [Dimension, (string | null)[]][];
export const linkFilters = (q: StatsQuery) =>
  Object.entries(q.filters).filter(([name]) => !isDimension(name)) as [AccountGrouping, (string | null)[]][];

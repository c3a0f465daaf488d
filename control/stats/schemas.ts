/**
 * TypeBox schemas of the analytics API (OpenAPI, the MCP stats tool), derived from the analytics types and the
 * DIMENSIONS table. They live here rather than in shared/schemas.ts because they are built from
 * control/stats/analytics-types.ts, and shared/ never imports control/.
 */
import { Type as T, type TSchema } from "@sinclair/typebox";
import { DIMENSION_NAMES, DIMENSIONS } from "../../shared/clicks/dimensions.ts";
import { ACCOUNT_GROUPINGS, BOT_MODES, INTERVALS } from "./analytics-types.ts";
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_POINTS, NONE } from "./query.ts";

const literals = (list: readonly string[], description: string) => T.Union(list.map((v) => T.Literal(v)), { description });
const Nullable = (s: TSchema) => T.Union([s, T.Null()]);

const Counts = { clicks: T.Integer({ minimum: 0 }), visitors: T.Integer({ minimum: 0, description: "Unique visitors: first visits per link and UTC day, summed." }) };
const FilterValues = T.Array(Nullable(T.String()), { description: "Values matched (any of them); null: unknown." });

const groupings = [...DIMENSION_NAMES, ...ACCOUNT_GROUPINGS];
const Breakdown = T.Object({
  rows: T.Array(T.Object({
    value: Nullable(T.String({ description: "The dimension value (null: unknown); for link the link's id, for tag and folder their name (null: none)." })),
    slug: T.Optional(T.String()),
    domain: T.Optional(T.String()),
    shortUrl: T.Optional(T.String()),
    ...Counts,
  })),
  other: T.Object(Counts, { description: "Everything past the top `limit` rows, summed." }),
});

export const Analytics = T.Object({
  slug: T.Optional(T.String()),
  from: T.String({ description: "Start of the range (inclusive), ISO 8601 with the zone's offset." }),
  to: T.String({ description: "End of the range (exclusive)." }),
  interval: literals(INTERVALS, "The series' interval."),
  tz: T.String(),
  bots: literals(BOT_MODES, "Which clicks were counted."),
  filters: T.Object(Object.fromEntries(groupings.map((g) => [g, T.Optional(FilterValues)]))),
  totals: T.Object(Counts),
  series: T.Array(T.Object({ start: T.String({ description: "Start of the interval, ISO 8601 with the zone's offset." }), ...Counts })),
  breakdowns: T.Object(Object.fromEntries(groupings.map((g) => [g, T.Optional(Breakdown)]))),
});

const rangeParams = {
  from: T.Optional(T.String({ description: "Start, ISO 8601 (2026-11-01 or 2026-11-01T09:00:00Z; without an offset, wall-clock time in tz). Default: to minus 30 days (24 hours for interval=hour)." })),
  to: T.Optional(T.String({ description: "End (exclusive), ISO 8601. Default: now." })),
};

/** The query parameters of a link's (scope link) or the account's (scope account) analytics. */
export function statsQueryParams(scope: "link" | "account") {
  const dims = scope === "account" ? groupings : DIMENSION_NAMES;
  const dimensionParams = Object.fromEntries(DIMENSION_NAMES.map((d) => [d, T.Optional(T.String({
    description: `Filter: ${DIMENSIONS[d].description} Comma-separated values match any of them; ${NONE} matches unknown.`,
  }))]));
  const linkParams: Record<string, TSchema> = scope === "account" ? {
    link: T.Optional(T.String({ description: "Filter: only these links (comma-separated slugs)." })),
    tag: T.Optional(T.String({ description: `Filter: only links with one of these tags (comma-separated; ${NONE}: links without tags).` })),
    folder: T.Optional(T.String({ description: `Filter: only links in one of these folders (comma-separated; ${NONE}: no folder).` })),
  } : {};
  return T.Object({
    ...rangeParams,
    interval: T.Optional(T.String({ description: `${INTERVALS.join(", ")}. Default: hour for ranges up to 2 days, else day. At most ${MAX_POINTS} points.` })),
    tz: T.Optional(T.String({ description: "IANA time zone the intervals' days, weeks (from Monday) and months follow. Default UTC." })),
    groupBy: T.Optional(T.String({ description: `One breakdown only: ${dims.join(", ")}. Default: every one.` })),
    bots: T.Optional(T.String({ description: `${BOT_MODES.join(", ")} (default exclude): whether clicks of bots and crawlers count.` })),
    limit: T.Optional(T.String({ description: `Rows per breakdown before "other", 1-${MAX_LIMIT}, default ${DEFAULT_LIMIT}.` })),
    ...dimensionParams,
    ...linkParams,
  });
}

export const ClicksCsvQuery = T.Object({
  ...rangeParams,
  from: T.Optional(T.String({ description: "Start, ISO 8601. Default: the oldest click kept (raw clicks are kept CLICK_RETENTION_DAYS)." })),
  tz: T.Optional(T.String({ description: "IANA zone in which a from or to without an offset is read. Default UTC." })),
});

/**
 * The MCP stats tool's arguments: the REST query parameters as typed JSON (filters an object of value lists),
 * turned back into a query record so parseStatsQuery is the one place that validates a question.
 */
import { Type as T, type Static } from "@sinclair/typebox";
import { DIMENSION_NAMES } from "../../shared/clicks/dimensions.ts";
import { oneOf } from "../../shared/enums.ts";
import { LinkStats } from "../../shared/schemas.ts";
import { ACCOUNT_GROUPINGS, BOT_MODES, INTERVALS } from "./analytics-types.ts";
import { MAX_LIMIT, NONE, type RawQuery } from "./query.ts";
import { Analytics, statsQueryParams } from "./schemas.ts";

export const STATS_GROUPINGS = [...DIMENSION_NAMES, ...ACCOUNT_GROUPINGS];
const literals = (list: readonly string[], description: string) => T.Optional(oneOf(list, { description }));
const params = statsQueryParams("account").properties;

/** Every argument but slug, which the tool adds with its own schema. */
export const StatsToolArgs = T.Object({
  from: params.from!,
  to: params.to!,
  interval: literals(INTERVALS, "Series interval; default hour for ranges up to 2 days, else day."),
  tz: params.tz!,
  groupBy: literals(STATS_GROUPINGS, "One breakdown only (link, tag and folder: account-wide only). Default: every one."),
  filters: T.Optional(T.Object(
    Object.fromEntries(STATS_GROUPINGS.map((g) => [g, T.Optional(T.Array(T.Union([T.String({ minLength: 1, maxLength: 200 }), T.Null()]), { minItems: 1, maxItems: 100 }))])),
    { additionalProperties: false, description: "Dimension → values, any of which matches (null: unknown); dimensions are ANDed. link takes slugs." },
  )),
  bots: literals(BOT_MODES, "exclude (default), include or only."),
  limit: T.Optional(T.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `Rows per breakdown before "other", default 10.` })),
});

/** The tool's answer: analytics, or with a slug alone the original summary (an object either way, as MCP asks). */
export const StatsToolOutput = T.Unsafe<object>({ type: "object", anyOf: [Analytics, LinkStats] });

/** The arguments as the query string REST would have had. */
export function statsToolQuery(args: Static<typeof StatsToolArgs>): RawQuery {
  const raw: RawQuery = {};
  for (const k of ["from", "to", "interval", "tz", "groupBy", "bots"] as const) if (args[k] !== undefined) raw[k] = args[k];
  if (args.limit !== undefined) raw.limit = String(args.limit);
  for (const [name, values] of Object.entries(args.filters ?? {})) {
    if (values) raw[name] = values.map((v) => v ?? NONE).join(",");
  }
  return raw;
}

/** REST routes for analytics (design §3.4, issue #20): a link's, the account's, and CSV exports of their clicks. */
import { Elysia } from "elysia";
import { Type as T } from "@sinclair/typebox";
import { LinkDomainParam, LinkStats } from "../../shared/schemas.ts";
import type { Deps } from "../deps.ts";
import type { ApiContext } from "../http/api.ts";
import { methodNotAllowed } from "../http/errors.ts";
import { doc } from "../http/openapi.ts";
import { exportAccountClicks, exportLinkClicks } from "./csv.ts";
import type { RawQuery } from "./query.ts";
import { Analytics, ClicksCsvQuery, statsQueryParams } from "./schemas.ts";
import { getAccountAnalytics, getLinkStatsOrAnalytics } from "./service.ts";

const Csv = T.String({ description: "text/csv: a header row, then one row per click" });
const hidden = { parse: "none" as const, detail: { hide: true } };
const STATS_400 = "invalid_range, too_many_points, unknown_dimension, unknown_time_zone or invalid_parameter";
const CSV_400 = "invalid_range, unknown_time_zone or invalid_parameter";

/**
 * doc() for a route with a {slug}: @elysiajs/openapi replaces a route's declared parameters with the path's
 * unless the route has a params schema, so it gets an empty one (any slug passes; findOwnLink checks it) and
 * the slug is declared here beside the query parameters.
 */
export function docWithSlug(...args: Parameters<typeof doc>) {
  const d = doc(...args);
  const detail = d.detail as { parameters?: object[] };
  const slug = { name: "slug", in: "path", required: true, description: "The link's slug, or ext_ and its externalId.", schema: { type: "string" } };
  const domain = { name: "domain", in: "query", required: false, description: LinkDomainParam.description, schema: LinkDomainParam };
  return { ...d, params: T.Object({}, { additionalProperties: true }), detail: { ...d.detail, parameters: [slug, domain, ...(detail.parameters ?? [])] } as typeof d.detail };
}

/** The slug route parameter (its params schema, above, is empty so it is typed as nothing). */
export const slugOf = (params: object) => (params as { slug: string }).slug;

/** The query string with every value of a repeated parameter (Elysia's query object keeps one). */
function rawQueryOf(request: Request): RawQuery {
  const raw: Record<string, string | string[]> = {};
  for (const [k, v] of new URL(request.url).searchParams) {
    const have = raw[k];
    raw[k] = have === undefined ? v : Array.isArray(have) ? [...have, v] : [have, v];
  }
  return raw;
}

/** A CSV download keeps the guard's rate-limit headers, which Elysia does not add to a returned Response. */
export function withHeaders(res: Response, headers: Record<string, unknown>): Response {
  for (const [k, v] of Object.entries(headers)) if (typeof v === "string" || typeof v === "number") res.headers.set(k, String(v));
  return res;
}

export const statsRoutes = (deps: Deps, api: ApiContext) =>
  new Elysia({ name: "stats-routes" })
    .get("/links/:slug/stats", async ({ request, set, params }) => {
      const caller = await api.guard(request, set.headers, "stats:read");
      return getLinkStatsOrAnalytics(deps, caller, slugOf(params), rawQueryOf(request));
    }, docWithSlug("Analytics of a link (without parameters: the original totals and last 24 hours)", { query: statsQueryParams("link"), ok: [200, T.Union([Analytics, LinkStats])], badRequest: STATS_400 }))
    .all("/links/:slug/stats", () => methodNotAllowed("GET"), hidden)
    .get("/stats", async ({ request, set }) => {
      const caller = await api.guard(request, set.headers, "stats:read");
      return getAccountAnalytics(deps, caller, rawQueryOf(request));
    }, doc("Analytics of the whole account (groupBy=link for top links)", { query: statsQueryParams("account"), ok: [200, Analytics], badRequest: STATS_400 }))
    .all("/stats", () => methodNotAllowed("GET"), hidden)
    .get("/links/:slug/clicks.csv", async ({ request, set, params }) => {
      const caller = await api.guard(request, set.headers, "stats:read");
      return withHeaders(await exportLinkClicks(deps, caller, slugOf(params), rawQueryOf(request)), set.headers);
    }, docWithSlug("A link's clicks as CSV", { query: ClicksCsvQuery, ok: [200, Csv], okType: "text/csv", badRequest: CSV_400 }))
    .all("/links/:slug/clicks.csv", () => methodNotAllowed("GET"), hidden)
    .get("/clicks.csv", async ({ request, set }) => {
      const caller = await api.guard(request, set.headers, "stats:read");
      return withHeaders(await exportAccountClicks(deps, caller, rawQueryOf(request)), set.headers);
    }, doc("The account's clicks as CSV", { query: ClicksCsvQuery, ok: [200, Csv], okType: "text/csv", badRequest: CSV_400 }))
    .all("/clicks.csv", () => methodNotAllowed("GET"), hidden);

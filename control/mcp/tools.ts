/**
 * The ten MCP tools (design §5). Each is a thin call into the service functions REST uses; its input and output
 * JSON Schemas are composed from the TypeBox schemas in shared/schemas.ts, so there is one schema language and one
 * source of truth. Descriptions are the only documentation a model sees: they say what a tool does, what it needs
 * and which error codes to expect.
 */
import { Type as T, type TSchema } from "@sinclair/typebox";
import {
  AbVariant,
  BulkResult,
  CreateLinkInput,
  LinkList,
  LinkObject,
  LinkState,
  LinkStatus,
  ListLinksQuery,
  Rule,
  UpdateLinkInput,
} from "../../shared/schemas.ts";
import { validate } from "../../shared/validation.ts";
import type { Scope } from "../../shared/enums.ts";
import type { Caller, Deps } from "../deps.ts";
import { bulkUpdateLinks } from "../links/bulk-change.ts";
import { BulkChangeResult } from "../links/bulk-schemas.ts";
import * as links from "../links/service.ts";
import { StatsToolArgs, StatsToolOutput, STATS_GROUPINGS, statsToolQuery } from "../stats/mcp-input.ts";
import { getAccountAnalytics, getLinkStatsOrAnalytics } from "../stats/service.ts";

/** MCP tool annotations: hints for clients deciding whether to ask the user before a call. */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  /** Always false: the tools touch only this service's own links. */
  openWorldHint: false;
}

export interface LinkTool {
  name: string;
  title: string;
  description: string;
  input: TSchema;
  output: TSchema;
  annotations: ToolAnnotations;
  /** The scope a caller needs to call it (tools/list still lists every tool to every caller). */
  scope: Scope;
  /** Validates `args` (with the tool's schema or inside the service) and runs the operation. */
  run(deps: Deps, caller: Caller, args: Record<string, unknown>): Promise<object>;
}

const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const CREATE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
/** Overwrites existing settings of a link (the old values are gone), but repeating the call changes nothing more. */
const OVERWRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };

const Slug = T.String({
  minLength: 1,
  maxLength: 204,
  description: 'Slug of an existing link of yours: the part after the base address (e.g. "spring-sale"), case-sensitive; or ext_ followed by the link\'s externalId.',
});

const strict = { additionalProperties: false } as const;
const SlugInput = T.Object({ slug: Slug }, strict);

const BulkCreateToolInput = T.Object(
  {
    links: T.Array(CreateLinkInput, {
      maxItems: links.BULK_MAX,
      description: `Up to ${links.BULK_MAX} links to create, each with the same fields as create_link (an empty list creates nothing).`,
    }),
  },
  strict,
);

const ListLinksToolInput = T.Object(
  {
    limit: ListLinksQuery.properties.limit,
    cursor: ListLinksQuery.properties.cursor,
    tag: ListLinksQuery.properties.tag,
    folder: ListLinksQuery.properties.folder,
    status: T.Optional(LinkStatus),
    state: T.Optional(LinkState),
    externalId: ListLinksQuery.properties.externalId,
    q: ListLinksQuery.properties.q,
  },
  strict,
);

/** One slug, or (bulk change) a list of them that all get the same changes. */
const UpdateLinkToolInput = T.Object(
  {
    slug: T.Union([Slug, T.Array(Slug, { minItems: 1, maxItems: links.BULK_MAX })], {
      description: `${Slug.description} Or a list of up to ${links.BULK_MAX} slugs: the same changes are made to each, and the answer reports each link.`,
    }),
    ...UpdateLinkInput.properties,
  },
  strict,
);
/** The updated link, or for a list of slugs one row per link (PATCH /api/v1/links/bulk's answer). */
const UpdateLinkToolOutput = T.Unsafe<object>({ type: "object", anyOf: [LinkObject, BulkChangeResult] });

const TargetingRulesInput = T.Object(
  {
    slug: Slug,
    rules: T.Union([T.Array(Rule, { maxItems: 50 }), T.Null()], {
      description:
        "The complete new rule list (replaces the current one), at most 50, checked in order; the first match wins. " +
        "An empty list or null removes all rules.",
    }),
  },
  strict,
);

const AbTestInput = T.Object(
  {
    slug: Slug,
    abUrls: T.Union([T.Array(AbVariant, { maxItems: 10 }), T.Null()], {
      description:
        "The complete new variant list (replaces the current one), at most 10. Each click picks a variant with " +
        "probability weight / sum of weights. An empty list or null ends the test.",
    }),
  },
  strict,
);

const LinkPreviewInput = T.Object(
  {
    slug: Slug,
    serveOg: UpdateLinkInput.properties.serveOg,
    ogTitle: UpdateLinkInput.properties.ogTitle,
    ogDescription: UpdateLinkInput.properties.ogDescription,
    ogImageUrl: UpdateLinkInput.properties.ogImageUrl,
  },
  strict,
);

const StatsToolInput = T.Object(
  { slug: T.Optional(T.String({ ...Slug, description: `${Slug.description} Leave out for the whole account.` })), ...StatsToolArgs.properties },
  strict,
);

const Deleted = T.Object({ deleted: T.Literal(true), slug: T.String() });

const ERRORS = "On failure the result has isError: true and its text is a problem object whose `code` says why";

/** The tools in the order tools/list presents them. */
export const LINK_TOOLS: LinkTool[] = [
  {
    name: "create_link",
    scope: "links:write",
    title: "Create a short link",
    description:
      "Create a short link that redirects visitors to `url`. Give `slug` for a custom address (3-40 of A-Z a-z 0-9 - _), " +
      "otherwise a random 7-character slug is chosen. Any other link option can be set at once: expiresAt, startsAt, " +
      "maxHits (click limit), password, tags, folder, UTM fields, country/device rules, weighted abUrls, webhookUrl and " +
      "the social preview card (serveOg, ogTitle, ogDescription, ogImageUrl), expiredUrl (where visitors go once the " +
      "link has ended) and externalId (your own id: creating with an externalId you used before updates that link " +
      "instead, so a repeated call is safe). Returns the link; share its `shortUrl`. " +
      `${ERRORS}: slug_taken (slug in use), slug_reserved, invalid_input (with per-field errors).`,
    input: CreateLinkInput,
    output: LinkObject,
    annotations: CREATE,
    run: async (deps, caller, args) => (await links.createLink(deps, caller, args)).link,
  },
  {
    name: "bulk_create_links",
    scope: "links:write",
    title: "Create many short links",
    description:
      `Create up to ${links.BULK_MAX} short links in one call; each item takes the same fields as create_link. Every item ` +
      "succeeds or fails on its own: the result lists one row per item in input order, either { ok: true, slug, shortUrl, " +
      "target, action: created|updated } or { ok: false, error: problem }, plus the counts `created`, `updated` and `failed`. " +
      "An item whose externalId you used before updates that link.",
    input: BulkCreateToolInput,
    output: BulkResult,
    annotations: CREATE,
    // Rows are validated one by one by the service, so one bad row does not fail the others.
    run: (deps, caller, args) => links.bulkCreateLinks(deps, caller, links.bulkRowsOf(args)),
  },
  {
    name: "list_links",
    scope: "links:read",
    title: "List short links",
    description:
      "List your short links, newest first, optionally filtered by tag, folder, status, live `state` (live, scheduled, " +
      "expired, limit_reached, paused, archived), externalId, or a search text `q` matched " +
      "against slug and destination. Returns { links, nextCursor }; when nextCursor is not null, call again with " +
      "`cursor` set to it for the next page.",
    input: ListLinksToolInput,
    output: LinkList,
    annotations: READ,
    run: (deps, caller, args) => links.listLinks(deps, caller, validate(ListLinksToolInput, args)),
  },
  {
    name: "get_link",
    scope: "links:read",
    title: "Get a short link",
    description:
      "Get every setting of one of your short links by slug: destination, status, dates, click count (`hits`), rules, " +
      `A/B variants, preview card and more. ${ERRORS}: not_found when no link of yours has this slug.`,
    input: SlugInput,
    output: LinkObject,
    annotations: READ,
    run: (deps, caller, args) => links.getLink(deps, caller, validate(SlugInput, args).slug),
  },
  {
    name: "update_link",
    scope: "links:write",
    title: "Update a short link",
    description:
      "Change settings of one of your short links. Only the fields you pass change; null or \"\" clears a field. " +
      "`targetUrl` changes the destination; `status` paused makes the short address answer 404 and archived 410. " +
      `Returns the updated link. With slug as a list (up to ${links.BULK_MAX}), makes the same changes to each of those links ` +
      "and returns { results: [{ slug, ok, status: updated|failed, error }], updated, failed }; one link failing " +
      `(not_found, invalid_input) does not stop the others. ${ERRORS}: not_found, invalid_input.`,
    input: UpdateLinkToolInput,
    output: UpdateLinkToolOutput,
    annotations: OVERWRITE,
    run: (deps, caller, args) => {
      const { slug, ...changes } = validate(UpdateLinkToolInput, args);
      return Array.isArray(slug) ? bulkUpdateLinks(deps, caller, { slugs: slug, changes }) : links.updateLink(deps, caller, slug, changes);
    },
  },
  {
    name: "delete_link",
    scope: "links:write",
    title: "Delete a short link",
    description:
      "Permanently delete one of your short links; its short address answers 404 from then on and its slug becomes " +
      `free. This cannot be undone. Returns { deleted: true, slug }. ${ERRORS}: not_found.`,
    input: SlugInput,
    output: Deleted,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: async (deps, caller, args) => {
      const { slug } = validate(SlugInput, args);
      await links.deleteLink(deps, caller, slug);
      return { deleted: true, slug };
    },
  },
  {
    name: "get_link_stats",
    scope: "stats:read",
    title: "Get click analytics",
    description:
      "Click analytics of one of your links (slug) or, without slug, of your whole account. Arguments (all optional): " +
      "from and to (ISO 8601 dates or times; a date without offset is read in tz; default the last 30 days), interval " +
      "(hour, day, week, month; at most 1,000 points), tz (IANA zone such as Europe/Berlin, default UTC), groupBy (one " +
      `dimension: ${STATS_GROUPINGS.join(", ")}; link, tag and folder need no slug), filters (an object of dimension → list of ` +
      "values, any of which matches; null matches unknown, e.g. { \"country\": [\"DE\"], \"device\": [\"mobile\"] }), bots " +
      "(exclude by default, include or only) and limit (rows per breakdown, 1-100, default 10). Answers totals (clicks " +
      "and unique visitors), a series per interval and breakdowns (top rows plus other). Examples: top referrers last " +
      "week: { from: <date 7 days ago>, groupBy: \"referrer\" }; top links this month: { from: <1st of the month>, " +
      "groupBy: \"link\" }. With a slug and no other argument it answers the original summary (totalClicks, byDevice, " +
      `byBrowser, byCountry, byVariant, last24h). ${ERRORS}: not_found, invalid_range, too_many_points, unknown_dimension, ` +
      "unknown_time_zone, invalid_parameter.",
    input: StatsToolInput,
    output: StatsToolOutput,
    annotations: READ,
    run: (deps, caller, args) => {
      const { slug, ...rest } = validate(StatsToolInput, args);
      const query = statsToolQuery(rest);
      if (slug === undefined) return getAccountAnalytics(deps, caller, query);
      return getLinkStatsOrAnalytics(deps, caller, slug, query);
    },
  },
  {
    name: "set_targeting_rules",
    scope: "links:write",
    title: "Set country/device redirect rules",
    description:
      "Replace the redirect rules of one of your short links. A rule { kind, match, url } sends visitors elsewhere by " +
      "country (kind \"country\", match an ISO 3166-1 alpha-2 code such as \"DE\") or by device (kind \"device\", match " +
      "desktop, mobile, tablet, ios or android). Rules are checked in order and the first match wins; visitors matching " +
      `none go to the A/B variants or the destination. Returns the updated link. ${ERRORS}: not_found, invalid_input.`,
    input: TargetingRulesInput,
    output: LinkObject,
    annotations: OVERWRITE,
    run: (deps, caller, args) => {
      const { slug, rules } = validate(TargetingRulesInput, args);
      return links.updateLink(deps, caller, slug, { rules });
    },
  },
  {
    name: "set_ab_test",
    scope: "links:write",
    title: "Set A/B destinations",
    description:
      "Replace the weighted A/B destinations of one of your short links: each click (not matched by a rule) goes to one " +
      "variant { url, weight }, drawn with probability weight / total weight; e.g. weights 1 and 3 split 25% / 75%. " +
      `Clicks per variant appear in get_link_stats under byVariant, keyed by position ("0" is the first). Returns the updated link. ${ERRORS}: not_found, invalid_input.`,
    input: AbTestInput,
    output: LinkObject,
    annotations: OVERWRITE,
    run: (deps, caller, args) => {
      const { slug, abUrls } = validate(AbTestInput, args);
      return links.updateLink(deps, caller, slug, { abUrls });
    },
  },
  {
    name: "set_link_preview",
    scope: "links:write",
    title: "Set the social preview card",
    description:
      "Configure the preview card social networks and chat apps show for one of your short links. With serveOg true, " +
      "crawlers get a page with og:/twitter: meta tags built from ogTitle, ogDescription and ogImageUrl, while people " +
      "are still redirected. Only the fields you pass change; null or \"\" clears one. Returns the updated link. " +
      `${ERRORS}: not_found, invalid_input.`,
    input: LinkPreviewInput,
    output: LinkObject,
    annotations: OVERWRITE,
    run: (deps, caller, args) => {
      const { slug, ...preview } = validate(LinkPreviewInput, args);
      return links.updateLink(deps, caller, slug, preview);
    },
  },
];

export type JsonSchemaObject = { type: "object"; properties?: Record<string, object>; required?: string[]; [key: string]: unknown };

/**
 * A TypeBox schema as plain JSON Schema: the JSON round trip drops TypeBox's symbol keys, and any `$id` goes,
 * because clients compile each tool's schema separately and a repeated `$id` makes a JSON Schema validator such
 * as Ajv refuse the second one (our schemas name themselves with `title` for that reason).
 */
export function toJsonSchema(schema: TSchema): JsonSchemaObject {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (value === null || typeof value !== "object") return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (k !== "$id") out[k] = strip(v);
    return out;
  };
  return strip(JSON.parse(JSON.stringify(schema))) as JsonSchemaObject;
}

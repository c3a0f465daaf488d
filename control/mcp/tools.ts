/**
 * The ten MCP tools (design §5). Each is a thin call into the service functions REST uses; its input and output
 * JSON Schemas are composed from the TypeBox schemas in shared/schemas.ts, so there is one schema language and one
 * source of truth (json-schema.ts publishes them compactly). Descriptions are the only documentation a model sees:
 * a tool's says what it does and which error codes to expect, each property's what it takes.
 */
import { Type as T, type TSchema } from "@sinclair/typebox";
import {
  AbVariant,
  BulkResult,
  CreateLinkInput,
  LinkDomainParam,
  LinkList,
  LinkObject,
  LinkState,
  LinkStatus,
  ListLinksQuery,
  Rule,
  UpdateLinkInput,
} from "../../shared/schemas.ts";
import { LINK_REF_PATTERN } from "../../shared/messages.ts";
import { validate } from "../../shared/validation.ts";
import { invalidInput } from "../../shared/errors.ts";
import type { Scope } from "../../shared/enums.ts";
import type { Caller, Deps } from "../deps.ts";
import { bulkUpdateLinks } from "../links/bulk-change.ts";
import { BulkChangeResult } from "../links/bulk-schemas.ts";
import * as links from "../links/service.ts";
import { StatsToolArgs, StatsToolOutput, statsToolQuery } from "../stats/mcp-input.ts";
import { getAccountAnalytics, getLinkStatsOrAnalytics } from "../stats/service.ts";
import { withSharedDefinitions } from "./json-schema.ts";

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
  minLength: 3,
  maxLength: 204,
  pattern: LINK_REF_PATTERN,
  description: 'Slug of one of your links (the part after the base address, e.g. "spring-sale"; case-sensitive), or ext_ and its externalId.',
});

/** The one `domain` argument of every tool naming links by slug: which domain's link the slug names. */
const Domain = T.Optional(T.String({
  ...LinkDomainParam, description: "The link's domain, when the slug is on several (default: the base domain's). Else unknown_domain.",
}));
/** A link named by slug, and domain when the slug is on several. */
const LinkRef = { slug: Slug, domain: Domain };

const strict = { additionalProperties: false } as const;
const LinkRefInput = T.Object(LinkRef, strict);

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
    domain: T.Optional(T.String({ ...LinkDomainParam, description: "Only the links on this domain: a verified domain of yours, or the base one. Else unknown_domain." })),
  },
  strict,
);

/** One slug, or (bulk change) a list of them that all get the same changes. */
const UpdateLinkToolInput = T.Object(
  {
    slug: T.Union([Slug, T.Array(Slug, { minItems: 1, maxItems: links.BULK_MAX })], {
      description: `${Slug.description} Or a list of up to ${links.BULK_MAX} slugs: the same changes are made to each, and the answer reports each link.`,
    }),
    domain: Domain,
    ...UpdateLinkInput.properties,
  },
  strict,
);
/** The updated link, or for a list of slugs one row per link (PATCH /api/v1/links/bulk's answer). */
const UpdateLinkToolOutput = withSharedDefinitions(T.Unsafe<object>({ type: "object", anyOf: [LinkObject, BulkChangeResult] }));
const LinkOutput = withSharedDefinitions(LinkObject);

const TargetingRulesInput = T.Object(
  {
    ...LinkRef,
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
    ...LinkRef,
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
    ...LinkRef,
    serveOg: UpdateLinkInput.properties.serveOg,
    ogTitle: UpdateLinkInput.properties.ogTitle,
    ogDescription: UpdateLinkInput.properties.ogDescription,
    ogImageUrl: UpdateLinkInput.properties.ogImageUrl,
  },
  strict,
);

const StatsToolInput = T.Object(
  {
    slug: T.Optional(T.String({ ...Slug, description: `${Slug.description} Leave out for the whole account.` })),
    domain: Domain,
    ...StatsToolArgs.properties,
  },
  strict,
);

const Deleted = T.Object({ deleted: T.Literal(true), slug: T.String() });
const StatsOutput = withSharedDefinitions(StatsToolOutput);
const LinkListOutput = withSharedDefinitions(LinkList);
const BulkOutput = withSharedDefinitions(BulkResult);

const ERRORS = "Errors (isError, a problem object with `code`)";

/** The tools in the order tools/list presents them. */
export const LINK_TOOLS: LinkTool[] = [
  {
    name: "create_link",
    scope: "links:write",
    title: "Create a short link",
    description:
      "Create a short link to `url`; give `slug` for a custom address, or get a random one. Any other link option can " +
      "be set at once. An externalId you used before updates that link instead, so a repeated call is safe. Returns " +
      `the link; share its shortUrl. ${ERRORS}: slug_taken, slug_reserved, invalid_input (errors names every invalid field).`,
    input: CreateLinkInput,
    output: LinkOutput,
    annotations: CREATE,
    run: async (deps, caller, args) => (await links.createLink(deps, caller, args)).link,
  },
  {
    name: "bulk_create_links",
    scope: "links:write",
    title: "Create many short links",
    description:
      `Create up to ${links.BULK_MAX} links in one call, each item as create_link's input. Each item succeeds or fails on ` +
      "its own: results has one row per item, in order, { ok: true, slug, shortUrl, action } or { ok: false, error }.",
    input: BulkCreateToolInput,
    output: BulkOutput,
    annotations: CREATE,
    // Rows are validated one by one by the service, so one bad row does not fail the others.
    run: (deps, caller, args) => links.bulkCreateLinks(deps, caller, links.bulkRowsOf(args)),
  },
  {
    name: "list_links",
    scope: "links:read",
    title: "List short links",
    description:
      "List your links, newest first, filtered by any of the arguments. When nextCursor is not null, call again with " +
      "cursor set to it for the next page.",
    input: ListLinksToolInput,
    output: LinkListOutput,
    annotations: READ,
    run: (deps, caller, args) => links.listLinks(deps, caller, validate(ListLinksToolInput, args)),
  },
  {
    name: "get_link",
    scope: "links:read",
    title: "Get a short link",
    description:
      `Every setting of one of your links, with its click count (hits) and live state. ${ERRORS}: not_found, unknown_domain.`,
    input: LinkRefInput,
    output: LinkOutput,
    annotations: READ,
    run: (deps, caller, args) => {
      const { slug, domain } = validate(LinkRefInput, args);
      return links.getLink(deps, caller, slug, domain);
    },
  },
  {
    name: "update_link",
    scope: "links:write",
    title: "Update a short link",
    description:
      "Change settings of your links: only the fields given change; null or \"\" clears one; targetUrl is the " +
      `destination. Returns the link; with slug a list (up to ${links.BULK_MAX}), the same changes to each and one ` +
      `row per link in results. ${ERRORS}: not_found, unknown_domain, invalid_input.`,
    input: UpdateLinkToolInput,
    output: UpdateLinkToolOutput,
    annotations: OVERWRITE,
    run: (deps, caller, args) => {
      const { slug, domain, ...changes } = validate(UpdateLinkToolInput, args);
      return Array.isArray(slug) ? bulkUpdateLinks(deps, caller, { slugs: slug, domain, changes }) : links.updateLink(deps, caller, slug, changes, domain);
    },
  },
  {
    name: "delete_link",
    scope: "links:write",
    title: "Delete a short link",
    description:
      `Delete one of your links for good: its short address answers 404 and its slug becomes free. ${ERRORS}: not_found, unknown_domain.`,
    input: LinkRefInput,
    output: Deleted,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: async (deps, caller, args) => {
      const { slug, domain } = validate(LinkRefInput, args);
      await links.deleteLink(deps, caller, slug, domain);
      return { deleted: true, slug };
    },
  },
  {
    name: "get_link_stats",
    scope: "stats:read",
    title: "Get click analytics",
    description:
      "Click analytics of one link (slug) or of your whole account (no slug): totals (clicks, unique visitors), a " +
      "series per interval and breakdowns (top rows plus other). Examples: top referrers last week: { from: <date 7 days ago>, " +
      "groupBy: \"referrer\" }; top links this month: { from: <1st of the month>, groupBy: \"link\" }. A slug alone " +
      `answers the summary (totalClicks, byDevice, byBrowser, byCountry, byVariant, last24h). ${ERRORS}: not_found, ` +
      "unknown_domain, invalid_range, too_many_points, unknown_dimension, unknown_time_zone, invalid_input.",
    input: StatsToolInput,
    output: StatsOutput,
    annotations: READ,
    run: (deps, caller, args) => {
      const { slug, domain, ...rest } = validate(StatsToolInput, args);
      const query = statsToolQuery(rest);
      if (slug === undefined) {
        if (domain !== undefined) throw invalidInput([{ path: "/domain", message: "names the domain of a slug: give slug too" }]);
        return getAccountAnalytics(deps, caller, query);
      }
      return getLinkStatsOrAnalytics(deps, caller, slug, domain === undefined ? query : { ...query, domain });
    },
  },
  {
    name: "set_targeting_rules",
    scope: "links:write",
    title: "Set country/device redirect rules",
    description:
      "Replace the redirect rules of one of your links: { kind, match, url } by country or device, checked in order, " +
      `first match wins; other visitors go to the A/B variants or the destination. Returns the link. ${ERRORS}: not_found, unknown_domain, invalid_input.`,
    input: TargetingRulesInput,
    output: LinkOutput,
    annotations: OVERWRITE,
    run: (deps, caller, args) => {
      const { slug, domain, rules } = validate(TargetingRulesInput, args);
      return links.updateLink(deps, caller, slug, { rules }, domain);
    },
  },
  {
    name: "set_ab_test",
    scope: "links:write",
    title: "Set A/B destinations",
    description:
      "Replace the weighted A/B destinations of one of your links: each click not matched by a rule goes to a variant " +
      "with probability weight / total weight (weights 1 and 3 split 25% / 75%); get_link_stats counts clicks per " +
      `variant under byVariant ("0" is the first). Returns the link. ${ERRORS}: not_found, unknown_domain, invalid_input.`,
    input: AbTestInput,
    output: LinkOutput,
    annotations: OVERWRITE,
    run: (deps, caller, args) => {
      const { slug, domain, abUrls } = validate(AbTestInput, args);
      return links.updateLink(deps, caller, slug, { abUrls }, domain);
    },
  },
  {
    name: "set_link_preview",
    scope: "links:write",
    title: "Set the social preview card",
    description:
      "Set the preview card social networks and chat apps show for one of your links: with serveOg true, crawlers " +
      "get og: and twitter: tags from ogTitle, ogDescription and ogImageUrl; people are still redirected. Only the " +
      `fields given change; null or \"\" clears one. Returns the link. ${ERRORS}: not_found, unknown_domain, invalid_input.`,
    input: LinkPreviewInput,
    output: LinkOutput,
    annotations: OVERWRITE,
    run: (deps, caller, args) => {
      const { slug, domain, ...preview } = validate(LinkPreviewInput, args);
      return links.updateLink(deps, caller, slug, preview, domain);
    },
  },
];

export { toJsonSchema, type JsonSchemaObject } from "./json-schema.ts";

/**
 * The bodies and answers of bulk changes (issue #25): which links (slugs, or the list's filters a page at a time)
 * and, for an update, the same `changes` object a single update takes. Used by REST, MCP and the OpenAPI document.
 */
import { Type as T, type Static } from "@sinclair/typebox";
import { LinkDomainParam, ListLinksQuery, Problem, UpdateLinkInput } from "../../shared/schemas.ts";
import { BULK_MAX } from "./service.ts";

/** The list's filters a bulk change selects by (the list's own, less its paging). */
export const BULK_FILTERS = ["tag", "folder", "status", "state", "externalId", "q", "domain"] as const;

export const BulkFilter = T.Object(
  Object.fromEntries(BULK_FILTERS.map((k) => [k, T.Optional(T.String({ maxLength: 500, description: ListLinksQuery.properties[k].description }))])),
  { additionalProperties: false, description: "The links GET /api/v1/links would list with these query parameters." },
);

const Slug = T.String({ minLength: 1, maxLength: 250, description: "A slug, or ext_ and an externalId." });

/** Which links: exactly one of slugs (on domain) and filter; cursor and limit page through a filter's matches. */
const selector = {
  slugs: T.Optional(T.Array(Slug, { minItems: 1, maxItems: BULK_MAX, description: `Up to ${BULK_MAX} slugs (or ext_{externalId}).` })),
  domain: T.Optional(T.String({ ...LinkDomainParam, description: "With slugs: the domain they are on, as ?domain= of a link's routes (leave out for the base domain's). Else unknown_domain." })),
  filter: T.Optional(BulkFilter),
  cursor: T.Optional(T.String({ maxLength: 512, description: "With filter: the nextCursor of the previous call, to continue after its links." })),
  limit: T.Optional(T.Integer({ minimum: 1, maximum: BULK_MAX, description: `With filter: links per call, 1-${BULK_MAX}, default ${BULK_MAX}.` })),
};

const TagList = (description: string) => T.Optional(T.Array(T.String({ minLength: 1, maxLength: 40 }), { minItems: 1, maxItems: 20, description }));

export const BulkChangeInput = T.Object(
  {
    ...selector,
    changes: T.Optional(UpdateLinkInput),
    addTags: TagList("Tags added to each link's own (kept once, ignoring case)."),
    removeTags: TagList("Tags removed from each link's own (ignoring case)."),
  },
  { additionalProperties: false, title: "BulkChangeInput" },
);
export type BulkChangeInput = Static<typeof BulkChangeInput>;

export const BulkDeleteInput = T.Object(selector, { additionalProperties: false, title: "BulkDeleteInput" });
export type BulkDeleteInput = Static<typeof BulkDeleteInput>;
export type BulkSelector = BulkDeleteInput;

export const BulkChangeRow = T.Object({
  index: T.Integer({ description: "The row's place: in slugs, or among the filter's matches of this call." }),
  slug: T.String(),
  ok: T.Boolean(),
  status: T.Union([T.Literal("updated"), T.Literal("deleted"), T.Literal("failed")]),
  error: T.Optional(Problem),
});
export type BulkChangeRow = Static<typeof BulkChangeRow>;

export const BulkChangeResult = T.Object({
  results: T.Array(BulkChangeRow),
  updated: T.Optional(T.Integer()),
  deleted: T.Optional(T.Integer()),
  failed: T.Integer(),
  nextCursor: T.Union([T.String(), T.Null()], { description: "With filter: more links match; send the same body with this cursor. Null when done (and with slugs)." }),
});

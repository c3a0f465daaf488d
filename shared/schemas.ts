/**
 * One TypeBox schema per concept (design §3.1, §3.2). The same objects drive request validation,
 * the TypeScript types, the OpenAPI document and the MCP tools' input schemas.
 */
import { Type as T, type Static, type TObject, type TSchema } from "@sinclair/typebox";
import { DeviceMatch, LINK_STATES, LINK_STATUSES, LinkState, listed } from "./enums.ts";
import { Value } from "@sinclair/typebox/value";
import { linkFieldEntries, type FieldSpec, type LinkFieldName, type ShownFields } from "./link-fields.ts";
import { SLUG_PATTERN } from "./messages.ts";

export { AbVariant, Rule } from "./link-fields.ts";
export { DeviceMatch, LinkState, LinkStatus } from "./enums.ts";

const NullableString = T.Union([T.String(), T.Null()]);

/** The input properties of every declared field that `op` accepts, under the name it accepts them by. */
function inputProperties(op: "create" | "update"): Record<string, TSchema> {
  const props: Record<string, TSchema> = {};
  for (const [name, f] of linkFieldEntries) {
    if (!f.input) continue;
    const as = op === "create" ? (f.input.createAs ?? name) : f.input.updateAs === false ? null : (f.input.updateAs ?? name);
    if (as === null) continue;
    props[as] = f.input.required === op ? f.input.schema : T.Optional(f.input.schema);
  }
  return props;
}

/** Create takes `url` (required) and `slug` besides every update field (design §3.2). */
export const CreateLinkInput = T.Object(
  {
    ...inputProperties("create"),
    slug: T.Optional(T.String({
      minLength: 3,
      maxLength: 40,
      pattern: SLUG_PATTERN,
      description: "Custom slug, case-sensitive; not a reserved word (api, mcp, dashboard, …) nor starting ext_. Random 7 characters when omitted.",
    })),
    domain: T.Optional(T.String({
      maxLength: 300,
      description: "A verified custom domain of yours (such as go.example.com) to put the link on; slugs are unique per domain. When omitted or empty: the workspace's default domain (PATCH /api/v1/workspace), else the base domain; the base host names the base domain.",
    })),
  },
  { additionalProperties: false, title: "CreateLinkInput" },
) as TObject<Record<string, TSchema>>;
/** Validated create input; field values are judged further by link-input.ts. */
export type CreateLinkInput = { url: string; slug?: string; externalId?: string | null; domain?: string } & Record<string, unknown>;

export const UpdateLinkInput = T.Object(inputProperties("update"), { additionalProperties: false, title: "UpdateLinkInput" });
export type UpdateLinkInput = { targetUrl?: string } & Record<string, unknown>;

/** A rule as stored and shown: its match normalised (a country code in capitals, a device in lower case). */
const ShownRule = T.Union([
  T.Object({ kind: T.Literal("country"), match: T.String({ pattern: "^[A-Z]{2}$" }), url: T.String() }, { additionalProperties: false }),
  T.Object({ kind: T.Literal("device"), match: DeviceMatch, url: T.String() }, { additionalProperties: false }),
]);

/** Fields the link object shows more precisely than their stored type says. */
const SHOWN_AS: Partial<Record<LinkFieldName, TSchema>> = { rules: T.Array(ShownRule) };

/** How a declared field appears in the API's link object: dates as ISO 8601 date-time strings (null when the field may be). */
function shownSchema(name: LinkFieldName, f: FieldSpec): TSchema {
  if (f.show !== "date") return SHOWN_AS[name] ?? f.type;
  const date = T.String({ format: "date-time" });
  return Value.Check(f.type, null) ? T.Union([date, T.Null()]) : date;
}

/** The link object of §3.1, derived from the declaration: shown fields, plus what is computed from them. */
export const LinkObject = T.Object(
  {
    ...Object.fromEntries(linkFieldEntries.filter(([, f]) => f.show !== false).map(([name, f]) => [name, shownSchema(name, f)])),
    shortUrl: T.String({ format: "uri" }),
    hasPassword: T.Boolean(),
    state: LinkState,
  },
  { title: "Link" },
);
/** The API view of a link. */
export type LinkObject = ShownFields & { shortUrl: string; hasPassword: boolean; state: LinkState };

export const BulkCreateInput = T.Union(
  [
    T.Array(T.Unknown(), { description: "Up to 500 create-link objects." }),
    T.Object({ links: T.Array(T.Unknown(), { description: "Up to 500 create-link objects." }) }, { additionalProperties: false }),
  ],
);

export const LinkList = T.Object({ links: T.Array(LinkObject), nextCursor: NullableString });

/** `domain` of the list and of a link's routes (links/service.ts domainParamOf). */
export const LinkDomainParam = T.String({
  maxLength: 300,
  description: "A verified domain of yours (or the base one): only its links; for one link, the one with this slug there (a slug may be on several domains). Else unknown_domain.",
});
export const LinkDomainQuery = T.Object({ domain: T.Optional(LinkDomainParam) });

export const ListLinksQuery = T.Object(
  {
    limit: T.Optional(T.Integer({ minimum: 1, maximum: 500, description: "Links per page, 1-500, default 50." })),
    cursor: T.Optional(T.String({ description: "nextCursor of the previous page." })),
    tag: T.Optional(T.String({ description: "Only links with this tag (any letter case)." })),
    folder: T.Optional(T.String({ description: "Only links in this folder (any letter case)." })),
    status: T.Optional(T.String({ description: `Only links with this status: ${listed(LINK_STATUSES)}.` })),
    state: T.Optional(T.String({ description: `Only links in this live state: ${listed(LINK_STATES)}.` })),
    externalId: T.Optional(T.String({ description: "Only the link with this externalId." })),
    q: T.Optional(T.String({ description: "Search in slug and target." })),
    domain: T.Optional(LinkDomainParam),
  },
);

export const BulkRow = T.Union([
  T.Object({
    index: T.Integer(), ok: T.Literal(true), slug: T.String(), domain: T.String({ description: "The host the link is on, as the link object names it." }), shortUrl: T.String(), target: T.String(),
    action: T.Union([T.Literal("created"), T.Literal("updated")], { description: "updated: the row's externalId named an existing link, which it changed." }),
  }),
  T.Object({ index: T.Integer(), ok: T.Literal(false), error: T.Unknown() }),
]);
export const BulkResult = T.Object({ results: T.Array(BulkRow), created: T.Integer(), updated: T.Integer(), failed: T.Integer() });

const Counts = T.Record(T.String(), T.Integer());
export const LinkStats = T.Object({
  slug: T.String(),
  totalClicks: T.Integer(),
  byDevice: Counts,
  byBrowser: Counts,
  byCountry: Counts,
  byVariant: Counts,
  last24h: T.Array(T.Object({ hour: T.String(), clicks: T.Integer() }), { minItems: 24, maxItems: 24 }),
});
export type LinkStats = Static<typeof LinkStats>;

export const Problem = T.Object({
  type: T.String(),
  title: T.String(),
  status: T.Integer(),
  detail: T.String(),
  code: T.String(),
  errors: T.Optional(T.Array(T.Object({ path: T.String(), message: T.String() }))),
});

/**
 * One TypeBox schema per concept (design §3.1, §3.2). The same objects drive request validation,
 * the TypeScript types, the OpenAPI document and the MCP tools' input schemas.
 */
import { Type as T, type Static } from "@sinclair/typebox";

const Address = (description: string) =>
  T.String({ minLength: 1, maxLength: 2048, description: `${description} Absolute http(s) URL, at most 2048 characters.` });
/** A field that `null` or `""` clears (design §3.2). */
const Clearable = <S extends ReturnType<typeof T.String>>(s: S) => T.Union([s, T.Literal(""), T.Null()]);
const DateInput = (description: string) =>
  T.Union([T.String({ maxLength: 64, description: `${description} ISO 8601 date-time.` }), T.Null()]);

export const LinkStatus = T.Union([T.Literal("active"), T.Literal("paused"), T.Literal("archived")], {
  description: "active serves redirects; paused answers 404; archived answers 410.",
});

export const DeviceMatch = T.Union(
  [T.Literal("desktop"), T.Literal("mobile"), T.Literal("tablet"), T.Literal("ios"), T.Literal("android")],
);

export const Rule = T.Object(
  {
    kind: T.Union([T.Literal("country"), T.Literal("device")], { description: "What the rule matches on." }),
    match: T.String({
      minLength: 1,
      maxLength: 16,
      description: "country: ISO 3166-1 alpha-2 code (e.g. US); device: desktop, mobile, tablet, ios or android.",
    }),
    url: Address("Destination when the rule matches."),
  },
  { additionalProperties: false, description: "Redirect rule; the first matching rule wins." },
);

export const AbVariant = T.Object(
  {
    url: Address("Destination of this variant."),
    weight: T.Number({ exclusiveMinimum: 0, maximum: 1_000_000, description: "Relative weight (positive)." }),
  },
  { additionalProperties: false },
);

const Tags = T.Union([T.Array(T.String({ maxLength: 200 }), { maxItems: 100 }), T.String({ maxLength: 4000 }), T.Null()], {
  description: "Tags as an array or a comma-separated string; trimmed, empty ones dropped; at most 20 of at most 40 characters.",
});

const Flag = T.Union([T.Boolean(), T.Literal("true"), T.Literal("false"), T.Literal(1), T.Literal(0), T.Literal("on"), T.Literal("off"), T.Literal("1"), T.Literal("0")], {
  description: "Boolean; also accepts \"true\"/\"false\", 1/0, \"on\"/\"off\".",
});

/** Fields both create and update accept. */
const commonFields = {
  expiresAt: T.Optional(DateInput("After this moment the link answers 410.")),
  startsAt: T.Optional(DateInput("Before this moment the link answers 425.")),
  maxHits: T.Optional(T.Union([T.Integer({ minimum: 1, maximum: 1_000_000 }), T.Literal(""), T.Null()], { description: "Clicks served before the link answers 410 (1-1,000,000); null or \"\" removes the limit." })),
  status: T.Optional(LinkStatus),
  password: T.Optional(T.Union([T.String({ maxLength: 200 }), T.Null()], { description: "Visitors must enter it; stored as Argon2id, never returned." })),
  tags: T.Optional(Tags),
  folder: T.Optional(Clearable(T.String({ maxLength: 80, description: "Folder name (at most 80 characters)." }))),
  utmSource: T.Optional(Clearable(T.String({ maxLength: 200, description: "utm_source added to the destination." }))),
  utmMedium: T.Optional(Clearable(T.String({ maxLength: 200, description: "utm_medium added to the destination." }))),
  utmCampaign: T.Optional(Clearable(T.String({ maxLength: 200, description: "utm_campaign added to the destination." }))),
  rules: T.Optional(T.Union([T.Array(Rule, { maxItems: 50 }), T.Literal(""), T.Null()], { description: "Country/device rules, first match wins (at most 50); null or \"\" removes them." })),
  abUrls: T.Optional(T.Union([T.Array(AbVariant, { maxItems: 10 }), T.Literal(""), T.Null()], { description: "Weighted A/B destinations used when no rule matches (at most 10); null or \"\" removes them." })),
  webhookUrl: T.Optional(Clearable(Address("Receives a signed POST for every click."))),
  serveOg: T.Optional(Flag),
  ogTitle: T.Optional(Clearable(T.String({ maxLength: 300, description: "Preview card title shown to social crawlers." }))),
  ogDescription: T.Optional(Clearable(T.String({ maxLength: 1000, description: "Preview card description." }))),
  ogImageUrl: T.Optional(Clearable(Address("Preview card image."))),
};

export const CreateLinkInput = T.Object(
  {
    url: Address("Destination of the short link."),
    slug: T.Optional(T.String({ maxLength: 200, description: "Custom slug: 3-40 of A-Z a-z 0-9 - _ (case-sensitive). Random 7 characters when omitted." })),
    ...commonFields,
  },
  { additionalProperties: false, title: "CreateLinkInput" },
);
export type CreateLinkInput = Static<typeof CreateLinkInput>;

export const UpdateLinkInput = T.Object(
  {
    targetUrl: T.Optional(Address("New destination.")),
    ...commonFields,
  },
  { additionalProperties: false, title: "UpdateLinkInput" },
);
export type UpdateLinkInput = Static<typeof UpdateLinkInput>;

export const BulkCreateInput = T.Union(
  [
    T.Array(T.Unknown(), { description: "Up to 500 create-link objects." }),
    T.Object({ links: T.Array(T.Unknown(), { description: "Up to 500 create-link objects." }) }, { additionalProperties: false }),
  ],
);

const NullableString = T.Union([T.String(), T.Null()]);
export const LinkObject = T.Object(
  {
    slug: T.String(),
    shortUrl: T.String(),
    target: T.String(),
    status: LinkStatus,
    createdAt: T.String(),
    updatedAt: T.String(),
    expiresAt: NullableString,
    startsAt: NullableString,
    maxHits: T.Union([T.Integer(), T.Null()]),
    hits: T.Integer(),
    hasPassword: T.Boolean(),
    tags: T.Array(T.String()),
    folder: NullableString,
    utmSource: NullableString,
    utmMedium: NullableString,
    utmCampaign: NullableString,
    rules: T.Array(Rule),
    abUrls: T.Array(AbVariant),
    webhookUrl: NullableString,
    serveOg: T.Boolean(),
    ogTitle: NullableString,
    ogDescription: NullableString,
    ogImageUrl: NullableString,
    webhookSecret: NullableString,
  },
  { title: "Link" },
);
export type LinkObject = Static<typeof LinkObject>;

export const LinkList = T.Object({ links: T.Array(LinkObject), nextCursor: NullableString });

export const ListLinksQuery = T.Object(
  {
    limit: T.Optional(T.Integer({ minimum: 1, maximum: 500, description: "Links per page, 1-500, default 50." })),
    cursor: T.Optional(T.String({ description: "nextCursor of the previous page." })),
    tag: T.Optional(T.String({ description: "Only links with this tag." })),
    folder: T.Optional(T.String({ description: "Only links in this folder." })),
    status: T.Optional(T.String({ description: "active, paused or archived." })),
    q: T.Optional(T.String({ description: "Search in slug and target." })),
  },
);

export const BulkRow = T.Union([
  T.Object({ index: T.Integer(), ok: T.Literal(true), slug: T.String(), shortUrl: T.String(), target: T.String() }),
  T.Object({ index: T.Integer(), ok: T.Literal(false), error: T.Unknown() }),
]);
export const BulkResult = T.Object({ results: T.Array(BulkRow), created: T.Integer(), failed: T.Integer() });

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

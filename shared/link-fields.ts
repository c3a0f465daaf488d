/**
 * The link, declared once (design §3.1, §3.2). Every field says here what it is, and the rest is derived:
 * - `type`: the value as stored: LinkRecord (link.ts) and the export format's link record;
 * - `codec` and `column`: the column both SQL stores use for rows, INSERT and UPDATE (adapters/link-columns.ts);
 * - `initial`: a new link's value when the input does not set it (newLinkRecord in link.ts);
 * - `show`: how the API and MCP show it in the link object (LinkObject in schemas.ts, toLinkObject in link.ts);
 * - `input`: the create/update input schema and the normalising rule that applies it (link-input.ts);
 * - `form`: the dashboard form's label, section and widget (control/dashboard/link-form*.ts).
 * A new stored field is one entry here plus a column in each store's migrations.
 */
import { Type as T, type Static, type StringOptions, type TSchema } from "@sinclair/typebox";
import { DEVICE_MATCHES, LinkStatus, listed, RuleKind } from "./enums.ts";

/** An address as input: `format: uri` for clients; checkAddress (link-input.ts) is the rule, http(s) only. */
const address = (description: string): StringOptions => ({
  minLength: 1, maxLength: 2048, format: "uri", description: `${description.replace(/\.$/, "")} (http or https).`,
});
const Address = (description: string) => T.String(address(description));
/** A text field that `null` or `""` clears (design §3.2); the description on top, where clients read it. */
const Clearable = ({ description, ...string }: StringOptions) => T.Union([T.String(string), T.Literal(""), T.Null()], { description });
const DateInput = (description: string) =>
  T.Union([T.String({ format: "date-time", maxLength: 64 }), T.Literal(""), T.Null()], {
    description: `${description} ISO 8601 such as 2030-01-31T12:00:00Z; without a zone, UTC.`,
  });
const NullableString = T.Union([T.String(), T.Null()]);
const NullableMillis = T.Union([T.Integer({ minimum: 0 }), T.Null()]);
const Millis = T.Integer({ minimum: 0 });

export const Rule = T.Object(
  {
    kind: RuleKind,
    match: T.String({
      minLength: 1,
      maxLength: 16,
      description: `country: ISO 3166-1 alpha-2 code (e.g. US); device: ${listed(DEVICE_MATCHES)}. Any letter case.`,
    }),
    url: Address("Destination when the rule matches."),
  },
  { additionalProperties: false, description: "Redirect rule; the first matching rule wins." },
);
export type Rule = Static<typeof Rule>;

export const AbVariant = T.Object(
  {
    url: Address("Destination of this variant."),
    weight: T.Number({ exclusiveMinimum: 0, maximum: 1_000_000, description: "Relative weight (positive)." }),
  },
  { additionalProperties: false },
);
export type AbVariant = Static<typeof AbVariant>;

const Tags = T.Union([T.Array(T.String({ maxLength: 40 }), { maxItems: 20 }), T.String({ maxLength: 900 }), T.Null()], {
  description: "Tags, as a list or a comma-separated string (trimmed; empty and repeated ones dropped).",
});

const Flag = T.Union([T.Boolean(), T.Literal("true"), T.Literal("false"), T.Literal(1), T.Literal(0), T.Literal("on"), T.Literal("off"), T.Literal("1"), T.Literal("0")], {
  description: "Serve the preview card to social crawlers: true or false (also \"true\"/\"false\", 1/0, \"on\"/\"off\").",
});

/** How a value is kept in a column: text and numbers as they are, booleans as 0/1 or boolean, JSON as text or jsonb. */
export type Codec = "text" | "int" | "bool" | "json";

/** The normalising rules of design §3.2 that a JSON Schema cannot express, by name (link-input.ts applies them). */
export type InputRule =
  | "address" | "optionalAddress" | "text" | "date" | "maxHits" | "status" | "password" | "tags" | "flag" | "rules"
  | "abUrls" | "externalId";

/** The dashboard form's widgets; `rows` fields are edited as repeated rows (rules, A/B variants). */
export type FormWidget = "url" | "text" | "number" | "datetime" | "select" | "tags" | "password" | "checkbox" | "textarea" | "ruleRows" | "abRows";
export type FormSection = "link" | "schedule" | "utm" | "rules" | "ab" | "preview" | "webhook";

export type Shown = "value" | "date" | false;

export interface FieldSpec<S extends TSchema = TSchema, Sh extends Shown = Shown> {
  type: S;
  codec: Codec;
  /** Column name in both stores; snake_case of the field name when absent. */
  column?: string;
  /** A new link's value; fields without one are set by the service (id, owner, slug, target, times). */
  initial?: Static<S>;
  /** In the API's link object: as stored, as an ISO date-time string, or not at all. */
  show: Sh;
  /** Input: its schema, the rule applied to it, and its name when create or update call it otherwise (false: not accepted). */
  input?: { schema: TSchema; rule: InputRule; createAs?: string; updateAs?: string | false; required?: "create" };
  form?: { label: string; section: FormSection; widget: FormWidget; hint?: string; attrs?: string };
}

const field = <S extends TSchema, const Sh extends Shown>(spec: FieldSpec<S, Sh>): FieldSpec<S, Sh> => spec;
const text = (description: string, maxLength: number, form?: FieldSpec["form"]) =>
  field({
    type: NullableString, codec: "text", initial: null, show: "value", form,
    input: { schema: Clearable({ maxLength, description: `${description}.` }), rule: "text" },
  });
const optionalAddress = (description: string, form: FieldSpec["form"]) =>
  field({ type: NullableString, codec: "text", initial: null, show: "value", form, input: { schema: Clearable(address(description)), rule: "optionalAddress" } });

/** Every field of the link, in the order the API shows them. */
export const LINK_FIELDS = {
  id: field({ type: T.String({ minLength: 1, maxLength: 200 }), codec: "text", show: false }),
  accountId: field({ type: T.String({ minLength: 1, maxLength: 200 }), codec: "text", show: false }),
  /**
   * Links are keyed by domain + slug from the start (design §9 custom domains). Shown as stored: the custom
   * domain's hostname, or the base domain's (BASE_URL's host), never null, as Dub's and Bitly's links always name
   * theirs; it is what `?domain=` and a create's `domain` take, so a link read back can be named again.
   */
  domain: field({ type: T.String({ minLength: 1 }), codec: "text", show: "value" }),
  slug: field({ type: T.String({ minLength: 1, maxLength: 200 }), codec: "text", show: "value" }),
  target: field({
    type: T.String({ minLength: 1 }), codec: "text", show: "value",
    input: { schema: Address("Destination of the short link."), rule: "address", createAs: "url", updateAs: "targetUrl", required: "create" },
    form: { label: "Destination URL", section: "link", widget: "url", attrs: 'required maxlength="2048" placeholder="https://example.com/page"' },
  }),
  status: field({
    type: LinkStatus, codec: "text", initial: "active", show: "value",
    input: { schema: LinkStatus, rule: "status" },
    form: { label: "Status", section: "link", widget: "select" },
  }),
  createdAt: field({ type: Millis, codec: "int", show: "date" }),
  updatedAt: field({ type: Millis, codec: "int", show: "date" }),
  expiresAt: field({
    type: NullableMillis, codec: "int", initial: null, show: "date",
    input: { schema: DateInput("After this moment the link answers 410 (or sends visitors to expiredUrl)."), rule: "date" },
    form: { label: "Expires at", section: "schedule", widget: "datetime", hint: "(UTC)" },
  }),
  startsAt: field({
    type: NullableMillis, codec: "int", initial: null, show: "date",
    input: { schema: DateInput("Before this moment the link answers 425."), rule: "date" },
    form: { label: "Starts at", section: "schedule", widget: "datetime", hint: "(UTC)" },
  }),
  maxHits: field({
    type: T.Union([T.Integer({ minimum: 1 }), T.Null()]), codec: "int", initial: null, show: "value",
    input: {
      schema: T.Union([T.Integer({ minimum: 1, maximum: 1_000_000 }), T.Literal(""), T.Null()], { description: "Clicks served before the link answers 410; null or \"\" removes the limit." }),
      rule: "maxHits",
    },
    form: { label: "Click limit", section: "schedule", widget: "number", hint: "(1-1,000,000)", attrs: 'min="1" max="1000000" step="1"' },
  }),
  hits: field({ type: T.Integer({ minimum: 0 }), codec: "int", initial: 0, show: "value" }),
  /** Set through the `password` input (hashed by the service); the API shows only `hasPassword`. */
  passwordHash: field({
    type: NullableString, codec: "text", initial: null, show: false,
    input: { schema: T.Union([T.String({ maxLength: 200 }), T.Null()], { description: "Visitors must enter it; stored as Argon2id, never returned." }), rule: "password", createAs: "password", updateAs: "password" },
    form: { label: "Password", section: "schedule", widget: "password" },
  }),
  tags: field({
    type: T.Array(T.String()), codec: "json", initial: [], show: "value",
    input: { schema: Tags, rule: "tags" },
    form: { label: "Tags", section: "link", widget: "tags", hint: "(comma-separated)", attrs: 'maxlength="900"' },
  }),
  folder: text("Folder name", 80, { label: "Folder", section: "link", widget: "text", attrs: 'maxlength="80"' }),
  utmSource: text("utm_source added to the destination", 200, { label: "utm_source", section: "utm", widget: "text", attrs: 'maxlength="200"' }),
  utmMedium: text("utm_medium added to the destination", 200, { label: "utm_medium", section: "utm", widget: "text", attrs: 'maxlength="200"' }),
  utmCampaign: text("utm_campaign added to the destination", 200, { label: "utm_campaign", section: "utm", widget: "text", attrs: 'maxlength="200"' }),
  rules: field({
    type: T.Array(Rule), codec: "json", initial: [], show: "value",
    input: { schema: T.Union([T.Array(Rule, { maxItems: 50 }), T.Literal(""), T.Null()], { description: "Country/device redirect rules, first match wins; null or \"\" removes them." }), rule: "rules" },
    form: { label: "Rules", section: "rules", widget: "ruleRows" },
  }),
  abUrls: field({
    type: T.Array(AbVariant), codec: "json", initial: [], show: "value",
    input: { schema: T.Union([T.Array(AbVariant, { maxItems: 10 }), T.Literal(""), T.Null()], { description: "Weighted A/B destinations for clicks no rule matches; null or \"\" removes them." }), rule: "abUrls" },
    form: { label: "A/B variants", section: "ab", widget: "abRows" },
  }),
  webhookUrl: optionalAddress("Receives a signed POST for every click.", {
    label: "Webhook URL", section: "webhook", widget: "url", hint: "(receives a signed POST for every click)", attrs: 'maxlength="2048"',
  }),
  serveOg: field({
    type: T.Boolean(), codec: "bool", initial: false, show: "value",
    input: { schema: Flag, rule: "flag" },
    form: { label: "Serve a preview card to social crawlers", section: "preview", widget: "checkbox" },
  }),
  ogTitle: text("Preview card title shown to social crawlers", 300, { label: "Title", section: "preview", widget: "text", attrs: 'maxlength="300"' }),
  ogDescription: text("Preview card description", 1000, { label: "Description", section: "preview", widget: "textarea", attrs: 'maxlength="1000"' }),
  ogImageUrl: optionalAddress("Preview card image.", { label: "Image URL", section: "preview", widget: "url", attrs: 'maxlength="2048"' }),
  /** Generated when the link first gets a webhookUrl (design §3.1). */
  webhookSecret: field({ type: NullableString, codec: "text", initial: null, show: "value" }),
  /**
   * Set when the webhook sender paused this link's webhook because its endpoint kept failing
   * (shared/webhooks/endpoint-health.ts): no process sends for it until the owner sets webhookUrl again.
   */
  webhookPausedAt: field({ type: NullableMillis, codec: "int", initial: null, show: "date" }),
  /** Why, in words for the owner (failures, how long, the last one). */
  webhookPausedReason: field({ type: NullableString, codec: "text", initial: null, show: "value" }),
  expiredUrl: optionalAddress("Where visitors go (302) once the link is expired, archived or at its click limit, instead of a 410 page.", {
    label: "After the link ends, send visitors to", section: "schedule", widget: "url", hint: "(optional; instead of a 410 page)", attrs: 'maxlength="2048"',
  }),
  externalId: field({
    type: NullableString, codec: "text", initial: null, show: "value",
    input: {
      schema: Clearable({ maxLength: 200, description: "Your own id for the link (visible ASCII but / ? # % \\), unique in your account: a create with one you used before updates that link; ext_{externalId} names it where a slug is asked." }),
      rule: "externalId",
    },
    form: { label: "External id", section: "link", widget: "text", hint: "(optional; your own id, unique in your account)", attrs: 'maxlength="200" autocomplete="off"' },
  }),
} satisfies Record<string, FieldSpec>;

export type LinkFieldName = keyof typeof LINK_FIELDS;
type Fields = typeof LINK_FIELDS;

/** The link as stored: one property per declared field. */
export type LinkRecord = { -readonly [K in LinkFieldName]: Static<Fields[K]["type"]> };

/** A field's value as the API shows it: dates as ISO 8601 strings. */
type ShownValue<F extends FieldSpec> = F["show"] extends "date"
  ? (null extends Static<F["type"]> ? string | null : string)
  : Static<F["type"]>;

/** The declared fields the API shows, as the API shows them (LinkObject adds what is computed from them). */
export type ShownFields = { -readonly [K in LinkFieldName as Fields[K]["show"] extends false ? never : K]: ShownValue<Fields[K]> };

/** The stored link's schema (the export format validates link records with it). */
export const LinkRecordSchema = T.Object(
  Object.fromEntries(Object.entries(LINK_FIELDS).map(([name, f]) => [name, f.type])) as { [K in LinkFieldName]: Fields[K]["type"] },
);

/** The declared fields as [name, spec] pairs, in declaration order. */
export const linkFieldEntries = Object.entries(LINK_FIELDS) as [LinkFieldName, FieldSpec][];

/** snake_case column name of a field. */
export const columnOf = (name: LinkFieldName): string =>
  (LINK_FIELDS[name] as FieldSpec).column ?? name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

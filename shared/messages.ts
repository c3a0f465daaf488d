/**
 * Every validation message, written once for the people and the models who read them: REST problem+json, MCP tool
 * errors and the dashboard's forms show the same words. A message says what a valid value is ("must be 3 to 40
 * characters of A-Z a-z 0-9 - _"), never what a validator expected; the field it belongs to is its path.
 */
import { ValueErrorType, type ValueError } from "@sinclair/typebox/errors";
import { DEVICE_MATCHES, listed } from "./enums.ts";
import type { FieldError } from "./errors.ts";

/** A custom slug's characters and length (design §3.2): the schema's pattern and checkSlug's rule. */
export const SLUG_PATTERN = "^[A-Za-z0-9_-]{3,40}$";
/** A slug, or `ext_` and an externalId (visible ASCII other than / ? # % \), naming an existing link. */
export const LINK_REF_PATTERN = "^(?:[A-Za-z0-9_-]{3,40}|ext_(?:(?![/?#%\\\\])[!-~]){1,200})$";

export const MESSAGES = {
  slug: "must be 3 to 40 characters of A-Z a-z 0-9 - _",
  linkRef: "must be a slug (3 to 40 characters of A-Z a-z 0-9 - _) or ext_ followed by an externalId",
  reserved: "is reserved for the service's own paths; choose another slug",
  extPrefix: "must not start with ext_ (ext_{externalId} names a link by its externalId)",
  address: "must be an absolute http or https URL",
  date: "must be an ISO 8601 date-time that exists (e.g. 2030-01-31T12:00:00Z; without a zone it is UTC)",
  device: `must be ${listed(DEVICE_MATCHES)}`,
  country: "must be an ISO 3166-1 alpha-2 country code (e.g. US, DE, GB)",
  tagCount: "must be at most 20 tags",
  tagLength: "must be tags of at most 40 characters each",
  externalId: "must be 1 to 200 visible ASCII characters other than / ? # % and \\",
  required: "is required",
  unknownField: "unknown field",
} as const;

/** What an unknown field most likely meant, where the schema has that field: `url` on an update is `targetUrl`. */
const UNKNOWN_FIELD_HINTS: Record<string, { instead: string; message: string }> = {
  url: { instead: "targetUrl", message: `${MESSAGES.unknownField}: to change the destination use targetUrl` },
};

/** Patterns the schemas use, with what a value that misses one is told. */
const PATTERN_MESSAGES: Record<string, string> = { [SLUG_PATTERN]: MESSAGES.slug, [LINK_REF_PATTERN]: MESSAGES.linkRef };

/** Formats the schemas publish; the field rules (link-input.ts) judge them, with these words. */
const FORMAT_MESSAGES: Record<string, string> = { uri: MESSAGES.address, "date-time": MESSAGES.date };

const LENGTH_OR_PATTERN = new Set([ValueErrorType.StringMinLength, ValueErrorType.StringMaxLength, ValueErrorType.StringPattern]);

/** A number's bounds: which keyword, in which words. */
const BOUNDS = new Map<ValueErrorType, [string, string]>([
  [ValueErrorType.IntegerMinimum, ["minimum", "at least"]], [ValueErrorType.NumberMinimum, ["minimum", "at least"]],
  [ValueErrorType.IntegerMaximum, ["maximum", "at most"]], [ValueErrorType.NumberMaximum, ["maximum", "at most"]],
  [ValueErrorType.IntegerExclusiveMinimum, ["exclusiveMinimum", "greater than"]], [ValueErrorType.NumberExclusiveMinimum, ["exclusiveMinimum", "greater than"]],
  [ValueErrorType.IntegerExclusiveMaximum, ["exclusiveMaximum", "less than"]], [ValueErrorType.NumberExclusiveMaximum, ["exclusiveMaximum", "less than"]],
]);

const plural = (n: unknown, one: string) => `${Number(n).toLocaleString("en-US")} ${one}${n === 1 ? "" : "s"}`;
const num = (n: unknown) => Number(n).toLocaleString("en-US");

/** A TypeBox error in these words; `field` is the last segment of its path (for unknown-field hints). */
export function schemaMessage(e: ValueError, field: string): string {
  const s = e.schema;
  // A string with a declared pattern (a slug) is told the whole rule, whichever part of it the value missed.
  if (typeof s.pattern === "string" && Object.hasOwn(PATTERN_MESSAGES, s.pattern) && LENGTH_OR_PATTERN.has(e.type)) return PATTERN_MESSAGES[s.pattern];
  const bound = BOUNDS.get(e.type);
  if (bound) return `must be ${bound[1]} ${num(s[bound[0]])}`;
  switch (e.type) {
    case ValueErrorType.ObjectAdditionalProperties:
    case ValueErrorType.IntersectUnevaluatedProperties:
      return Object.hasOwn(UNKNOWN_FIELD_HINTS, field) && s.properties?.[UNKNOWN_FIELD_HINTS[field].instead]
        ? UNKNOWN_FIELD_HINTS[field].message
        : MESSAGES.unknownField;
    case ValueErrorType.ObjectRequiredProperty:
      return MESSAGES.required;
    case ValueErrorType.String:
      return "must be a string";
    case ValueErrorType.StringMinLength:
      return s.minLength === 1 ? "must not be empty" : `must be at least ${plural(s.minLength, "character")}`;
    case ValueErrorType.StringMaxLength:
      return `must be at most ${plural(s.maxLength, "character")}`;
    case ValueErrorType.StringPattern:
      return PATTERN_MESSAGES[s.pattern as string] ?? "contains characters this field does not allow";
    case ValueErrorType.StringFormat:
      return FORMAT_MESSAGES[s.format as string] ?? `must be a ${s.format}`;
    case ValueErrorType.Integer:
      return "must be a whole number";
    case ValueErrorType.Number:
      return "must be a number";
    case ValueErrorType.Boolean:
      return "must be true or false";
    case ValueErrorType.Null:
      return "must be null";
    case ValueErrorType.Object:
      return "must be an object";
    case ValueErrorType.Array:
      return "must be an array";
    case ValueErrorType.ArrayMaxItems:
      return `must have at most ${plural(s.maxItems, "item")}`;
    case ValueErrorType.ArrayMinItems:
      return `must have at least ${plural(s.minItems, "item")}`;
    case ValueErrorType.Literal:
      return `must be ${JSON.stringify(s.const)}`;
    default:
      return "is not a value this field takes";
  }
}

/** A path as a reader names the field: "/rules/0/url" → "rules[0].url"; the root is "the input". */
export function fieldName(path: string): string {
  const name = path.split("/").filter(Boolean).map((seg, i) => (/^\d+$/.test(seg) ? `[${seg}]` : i ? `.${seg}` : seg)).join("");
  return name || "the input";
}

/** An invalid_input's detail: each field with its message, so one sentence says everything wrong. */
export function describeErrors(errors: FieldError[]): string {
  const shown = errors.slice(0, 5).map((e) => `${fieldName(e.path)} ${e.message}`);
  const more = errors.length > 5 ? `; and ${errors.length - 5} more (see errors)` : "";
  return errors.length ? `${shown.join("; ")}${more}` : "One or more fields are invalid";
}

/**
 * The link form ⇄ the API's input (design §3.2). The form posts strings; this turns them into exactly the
 * JSON a REST client would send, so the service validates both the same way and the messages match.
 * Which fields the form has, and the names they are posted and sent under, come from the link's declaration
 * (LINK_FIELDS' `form` and `input` entries); how a value is read and sent depends only on its widget.
 * Pure: no I/O, no page markup.
 */
import { RULE_KINDS } from "../../shared/enums.ts";
import { linkFieldEntries, type FieldSpec, type FormWidget, type LinkFieldName } from "../../shared/link-fields.ts";
import type { LinkObject } from "../../shared/schemas.ts";

export interface RuleRow { kind: string; match: string; url: string }
export interface AbRow { url: string; weight: string }

/** A field as the form holds it: the text in its input, a checkbox's state, or rows. */
export type FormValue = string | boolean | RuleRow[] | AbRow[];

/** What the form shows. */
export interface LinkFormValues {
  /** Create: the custom slug typed (blank: a random one). Edit: the link's slug. */
  slug: string;
  /** Edit: whether the link has a password now (the form never shows it). */
  hasPassword: boolean;
  /** Edit: "Remove the password" is ticked. */
  removePassword: boolean;
  /** Every form field (FORM_FIELDS) by its field name. */
  fields: Record<string, FormValue>;
  /** Create: the custom domain chosen (blank: the base domain). */
  domain?: string;
}

type FormEntry = NonNullable<FieldSpec["form"]>;
type InputEntry = NonNullable<FieldSpec["input"]>;

/** A declared field the form shows, and the names its value goes by. */
export interface FormField {
  name: LinkFieldName;
  spec: FieldSpec;
  form: FormEntry;
  input: InputEntry;
  /** The form control's name: the create input's (`url` for the target, `password`), in both modes. */
  posted: string;
  /** Its name in the create body. */
  createAs: string;
  /** Its name in the PATCH body; null when an update cannot set it. */
  updateAs: string | null;
}

/** The fields with a `form` entry, in declaration order. A form entry without an input would post nothing: skipped. */
export const FORM_FIELDS: FormField[] = linkFieldEntries.flatMap(([name, spec]) => {
  if (!spec.form || !spec.input) return [];
  const createAs = spec.input.createAs ?? name;
  const updateAs = spec.input.updateAs === false ? null : (spec.input.updateAs ?? name);
  return [{ name, spec, form: spec.form, input: spec.input, posted: createAs, createAs, updateAs }];
});

/** The name a field's value and its errors (`/name`) go by in a create or an update. */
export const sentAs = (f: FormField, mode: "create" | "edit"): string => (mode === "create" ? f.createAs : (f.updateAs ?? f.createAs));

/** The values a select offers: the literals of the field's type (an enums.ts `oneOf`, e.g. LINK_STATUSES). */
export function choicesOf(f: FormField): string[] {
  const members = (f.spec.type as { anyOf?: { const?: unknown }[] }).anyOf ?? [];
  return members.map((m) => m.const).filter((c): c is string => typeof c === "string");
}

/** How many rows a rows field takes: the maxItems of its input schema's array (the API refuses more). */
export function maxRowsOf(f: FormField): number {
  const members = (f.input.schema as { anyOf?: { maxItems?: number }[] }).anyOf ?? [f.input.schema as { maxItems?: number }];
  return members.find((m) => typeof m.maxItems === "number")?.maxItems ?? 100;
}

/** Names the rows are posted under, one per column, repeated once per row. */
export const RULE_ROW = { kind: "rule_kind", match: "rule_match", url: "rule_url" } as const;
export const AB_ROW = { url: "ab_url", weight: "ab_weight" } as const;

/** ISO date → the value of a datetime-local input, in UTC (the form labels its dates as UTC). */
export function toLocalInput(iso: string | null): string {
  return iso ? iso.slice(0, 16) : "";
}

/** A datetime-local value is read as UTC; a value that already names its zone is left alone. */
export function fromLocalInput(value: string): string {
  const v = value.trim();
  if (!v) return v;
  return /(?:Z|[+-]\d{2}:?\d{2})$/i.test(v) || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/.test(v) ? v : `${v}Z`;
}

/** A number when the text is one (so the schema can judge its range), else the text (so it says "Expected integer"). */
function numberOrText(text: string): number | string {
  const n = Number(text);
  return text !== "" && Number.isFinite(n) ? n : text;
}

/** Rows posted as repeated names, in document order, each cell trimmed. */
function postedRows<K extends string>(form: URLSearchParams, names: Record<K, string>): Record<K, string>[] {
  const keys = Object.keys(names) as K[];
  const columns = keys.map((k) => form.getAll(names[k]));
  const count = Math.max(0, ...columns.map((c) => c.length));
  return Array.from({ length: count }, (_, i) => Object.fromEntries(keys.map((k, j) => [k, (columns[j][i] ?? "").trim()])) as Record<K, string>);
}

/** Left out of a body. */
const OMIT = Symbol("omit");

/** How a widget reads its value and turns it into input. */
interface Widget {
  /** The form's value for the field as the link object shows it. */
  fromLink(shown: unknown): FormValue;
  fromPost(form: URLSearchParams, posted: string, f: FormField): FormValue;
  toInput(v: FormValue): unknown;
  /** A blank field: create leaves it out, update sends `cleared` (null unless said). Absent: never blank. */
  isBlank?(v: FormValue): boolean;
  cleared?: unknown;
  /** An update's value when the generic rule does not fit (the password: blank keeps it). */
  update?(v: FormValue, values: LinkFormValues): unknown;
  /** False: sent whenever set, not only when it differs from what the form showed (it shows nothing). */
  compared?: false;
}

const text = (v: unknown) => (v === null || v === undefined ? "" : String(v));
const posted = (form: URLSearchParams, name: string) => form.get(name) ?? "";
const trimmed = (form: URLSearchParams, name: string) => posted(form, name).trim();
const asIs = (v: FormValue) => v;
const noText = (v: FormValue) => !(v as string).trim();
const noValue = (v: FormValue) => !v;
const noRows = (v: FormValue) => !(v as unknown[]).length;

const WIDGETS: Record<FormWidget, Widget> = {
  url: { fromLink: text, fromPost: trimmed, toInput: asIs, isBlank: noValue },
  text: { fromLink: text, fromPost: posted, toInput: asIs, isBlank: noText },
  // Browsers send a textarea's line breaks as CRLF; the API keeps what a REST client would send.
  textarea: { fromLink: text, fromPost: (form, name) => posted(form, name).replaceAll("\r\n", "\n"), toInput: asIs, isBlank: noText },
  number: { fromLink: text, fromPost: trimmed, toInput: (v) => numberOrText(v as string), isBlank: noValue },
  datetime: { fromLink: (v) => toLocalInput(v as string | null), fromPost: posted, toInput: (v) => fromLocalInput(v as string), isBlank: noText },
  tags: { fromLink: (v) => ((v ?? []) as string[]).join(", "), fromPost: posted, toInput: asIs, isBlank: noText, cleared: "" },
  select: { fromLink: text, fromPost: (form, name, f) => posted(form, name) || text(f.spec.initial), toInput: asIs },
  checkbox: { fromLink: (v) => v === true, fromPost: (form, name) => form.has(name), toInput: asIs },
  password: {
    fromLink: () => "", fromPost: posted, toInput: asIs, isBlank: noValue, compared: false,
    update: (v, values) => (v ? v : values.removePassword ? null : OMIT),
  },
  ruleRows: {
    fromLink: (v) => ((v ?? []) as RuleRow[]).map((r) => ({ kind: r.kind, match: r.match, url: r.url })),
    fromPost: (form) => postedRows(form, RULE_ROW).map((r) => ({ kind: r.kind || RULE_KINDS[0], match: r.match, url: r.url })).filter((r) => r.match || r.url),
    toInput: (v) => (v as RuleRow[]).map((r) => ({ kind: r.kind, match: r.match, url: r.url })),
    isBlank: noRows,
  },
  abRows: {
    fromLink: (v) => ((v ?? []) as { url: string; weight: number }[]).map((a) => ({ url: a.url, weight: String(a.weight) })),
    fromPost: (form) => postedRows(form, AB_ROW).filter((r) => r.url || r.weight),
    toInput: (v) => (v as AbRow[]).map((r) => ({ url: r.url, weight: numberOrText(r.weight) })),
    isBlank: noRows,
  },
};

const widgetOf = (f: FormField) => WIDGETS[f.form.widget];
/** The create input's required field (the target) is always sent, even blank: the API then names what is missing. */
const blank = (f: FormField, v: FormValue) => !f.input.required && (widgetOf(f).isBlank?.(v) ?? false);

/** A field's value in the link object as the API shows it: dates as ISO strings. */
function shownInitial(f: FormField): unknown {
  const v = f.spec.initial ?? null;
  return f.spec.show === "date" && typeof v === "number" ? new Date(v).toISOString() : v;
}

function valuesOf(read: (f: FormField) => FormValue): Record<string, FormValue> {
  return Object.fromEntries(FORM_FIELDS.map((f) => [f.name, read(f)]));
}

/** A new link's form: every field at its declared initial value. */
export const EMPTY_FORM: LinkFormValues = {
  slug: "", hasPassword: false, removePassword: false, fields: valuesOf((f) => widgetOf(f).fromLink(shownInitial(f))),
};

export function valuesFromLink(link: LinkObject): LinkFormValues {
  const shown = link as unknown as Record<string, unknown>;
  return { slug: link.slug, hasPassword: link.hasPassword, removePassword: false, fields: valuesOf((f) => widgetOf(f).fromLink(shown[f.name])) };
}

/** Rows come as repeated names (rule_kind, rule_match, rule_url …) in document order; blank rows are dropped. */
export function valuesFromForm(form: URLSearchParams): LinkFormValues {
  return {
    slug: trimmed(form, "slug"),
    domain: trimmed(form, "domain"),
    hasPassword: form.get("hasPassword") === "1",
    removePassword: form.has("removePassword"),
    fields: valuesOf((f) => widgetOf(f).fromPost(form, f.posted, f)),
  };
}

/** POST /api/v1/links body: blank fields are left out, as a REST client would. */
export function createInputFrom(v: LinkFormValues): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of FORM_FIELDS) {
    const value = v.fields[f.name];
    if (!blank(f, value)) out[f.createAs] = widgetOf(f).toInput(value);
  }
  if (v.slug) out.slug = v.slug;
  if (v.domain) out.domain = v.domain;
  return out;
}

/** Form values compared as a person reads them: surrounding spaces and line-break style do not count. */
const asRead = (_key: string, v: unknown) => (typeof v === "string" ? v.trim().replaceAll("\r\n", "\n") : v);
const sameValue = (a: unknown, b: unknown) => JSON.stringify(a, asRead) === JSON.stringify(b, asRead);

/**
 * PATCH body: a blank field clears it. Only fields that differ from `shown` (what the form displayed) are sent,
 * so saving a form unchanged rewrites nothing: the form cannot show everything exactly (dates to the minute, tags
 * joined by commas), and an untouched field must keep its value. The password is the exception: blank keeps the
 * current one, "remove password" clears it.
 */
export function updateInputFrom(v: LinkFormValues, shown?: LinkFormValues): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of FORM_FIELDS) {
    if (f.updateAs === null) continue;
    const w = widgetOf(f);
    const value = v.fields[f.name];
    if (shown && w.compared !== false && sameValue(value, shown.fields[f.name])) continue;
    const sent = w.update ? w.update(value, v) : blank(f, value) ? (w.cleared ?? null) : w.toInput(value);
    if (sent !== OMIT) out[f.updateAs] = sent;
  }
  return out;
}

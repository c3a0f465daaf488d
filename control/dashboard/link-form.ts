/**
 * The create/edit form: one fieldset per form section, each showing the declared fields of that section
 * (link-form-input.ts FORM_FIELDS, from LINK_FIELDS) with the markup of their widget. A field added to the
 * declaration with a `form` entry appears here, posts and is sent without an edit in this folder.
 * Rows (rules, A/B variants) post as repeated names; without JavaScript two blank rows are always offered,
 * with it an "Add" button clones more.
 */
import { DEVICE_MATCHES, listed, RULE_KINDS } from "../../shared/enums.ts";
import type { FieldError } from "../../shared/errors.ts";
import type { FormSection, FormWidget } from "../../shared/link-fields.ts";
import type { TagsAndFolders } from "../../shared/ports.ts";
import { errorSummary, fieldProblems, fieldRef, invalidAttrs, type FieldRef, type FieldRefs, type FormProblem } from "./form-errors.ts";
import { csrfField, esc } from "./layout.ts";
import { AB_ROW, choicesOf, FORM_FIELDS, maxRowsOf, RULE_ROW, sentAs, type AbRow, type FormField, type LinkFormValues, type RuleRow } from "./link-form-input.ts";
import { linkPath } from "./link-paths.ts";
import { FOLDER_LIST_ID, suggestionLists, TAG_LIST_ID } from "./suggestions.ts";

export interface LinkFormOptions {
  mode: "create" | "edit";
  values: LinkFormValues;
  csrf: string;
  error?: FormProblem;
  /** Edit mode: the link's webhook secret, shown so the owner can verify signatures. */
  webhookSecret?: string | null;
  /** The account's tags and folders, offered as the tag and folder inputs are typed in. */
  suggestions?: TagsAndFolders;
  /** Create: the account's verified custom domains, offered beside the base one (none: no choice shown). */
  domains?: string[];
  /**
   * Create: the base domain's host, its option's value (named, since a blank domain means the workspace's default
   * domain); the new-link page preselects the default domain through values.domain.
   */
  baseDomain?: string;
  /** Edit: where the form posts and Cancel goes (the link's pages, with its domain: link-paths.ts), and its custom domain. */
  link?: { action: string; cancel: string; domain: string | null };
}

type Mode = LinkFormOptions["mode"];
type Errors = FieldError[];

/** Each section's fieldset, in the order the form shows them. `errorPrefix` names its fields in the error list. */
export const FORM_SECTIONS: Record<FormSection, { legend: string; hint?: string; errorPrefix?: string }> = {
  link: { legend: "Link" },
  schedule: { legend: "Schedule and limits" },
  utm: { legend: "UTM parameters" },
  rules: {
    legend: "Targeting rules",
    hint: `First matching rule wins. Country: a two-letter code (US, DE). Device: ${listed(DEVICE_MATCHES)}. Clear a row to remove it.`,
  },
  ab: { legend: "A/B rotation", hint: "Used when no rule matches: each visitor gets one of these destinations, chosen by weight. Clear a row to remove it." },
  preview: { legend: "Social preview card", errorPrefix: "Preview" },
  webhook: { legend: "Click webhook" },
};

/**
 * Row widgets: what a row and its columns are called in messages ("Rule 2 URL"), the names its controls post
 * under, and the name of its box (the script's "Add a row" finds it by that).
 */
const ROWS = {
  ruleRows: { noun: "Rule", columns: { kind: "kind", match: "match", url: "URL" }, names: RULE_ROW, box: "rules" },
  abRows: { noun: "Variant", columns: { url: "URL", weight: "weight" }, names: AB_ROW, box: "ab" },
} as const;
type RowsWidget = keyof typeof ROWS;
const rowsOf = (f: FormField) => (f.form.widget === "ruleRows" || f.form.widget === "abRows" ? ROWS[f.form.widget] : null);

/** A control's id: `f-` and its posted name; in a row, the column's posted name and the row's index (app.js numbers added rows the same way). */
const fieldId = (f: FormField) => `f-${f.posted}`;
const rowId = (name: string, i: number | "#") => `${name}-${i}`;
const BLANK_ROWS = 2;

/** "Title" in the preview section is "Preview title" in the error list; a label that names its section stays. */
function errorLabel(f: FormField): string {
  const prefix = FORM_SECTIONS[f.form.section].errorPrefix;
  if (!prefix || f.form.label.toLowerCase().includes(prefix.toLowerCase())) return f.form.label;
  const label = /^[A-Z][a-z]/.test(f.form.label) ? f.form.label[0].toLowerCase() + f.form.label.slice(1) : f.form.label;
  return `${prefix} ${label}`;
}

/**
 * Error paths → each field's label and control, for the summary's links and the messages under the controls:
 * every form field under both its names, and the row columns (a rows field as a whole is its box).
 */
export const FIELD_REFS: FieldRefs = Object.fromEntries([
  ["/slug", { label: "Slug", id: "f-slug" }],
  ["/domain", { label: "Domain", id: "f-domain" }],
  ...FORM_FIELDS.flatMap((f) => {
    const names = [...new Set([f.createAs, f.updateAs ?? f.createAs])];
    const rows = rowsOf(f);
    const columns = rows
      ? Object.entries(rows.columns).map(([key, word]) => [key, { label: `${rows.noun} # ${word}`, id: rowId(rows.names[key as keyof typeof rows.names], "#") }] as const)
      : [];
    return names.flatMap((n) => [[`/${n}`, { label: errorLabel(f), id: fieldId(f) }], ...columns.map(([key, ref]) => [`/${n}/*/${key}`, ref])]);
  }),
]);

/** Error paths → labels alone (FIELD_REFS without the controls). */
export const FIELD_LABELS: Record<string, string> = Object.fromEntries(Object.entries(FIELD_REFS).map(([path, ref]) => [path, ref.label]));

interface Ctx {
  mode: Mode;
  values: LinkFormValues;
  errors: Errors;
  /** Where the API reports this field's errors: `/url` on create, `/targetUrl` on edit. */
  path: string;
  /** The field's label and control id, for its messages. */
  ref: FieldRef;
}

/** Suggestion lists by field: the tags input adds to a comma-separated list (app.js), the folder takes one value. */
const SUGGESTED: Partial<Record<string, string>> = {
  tags: ` list="${TAG_LIST_ID}" data-multi autocomplete="off"`,
  folder: ` list="${FOLDER_LIST_ID}" autocomplete="off"`,
};

const hintOf = (hint?: string) => (hint ? ` <span class="hint">${esc(hint)}</span>` : "");
/** A field's label element, for the control with id `f-{posted name}`. */
const labelOf = (f: FormField, hint = f.form.hint) => `<label for="f-${f.posted}">${esc(f.form.label)}${hintOf(hint)}</label>`;

/** The control's own attributes: id, and when its field has errors, aria-invalid and aria-describedby. */
const controlAttrs = (c: Ctx, id: string, path = c.path) => `id="${id}"${invalidAttrs(c.errors, path, id)}`;

interface InputOptions {
  value?: string;
  hint?: string;
  attrs?: string;
}

function input(f: FormField, c: Ctx, type: string, o: InputOptions = {}): string {
  const value = o.value ?? (c.values.fields[f.name] as string);
  return `${labelOf(f, o.hint ?? f.form.hint)}<input ${controlAttrs(c, fieldId(f))} name="${f.posted}" type="${type}" value="${esc(value)}" ${o.attrs ?? f.form.attrs ?? ""}${SUGGESTED[f.name] ?? ""}>${fieldProblems(c.errors, c.path, c.ref)}`;
}

/** One row's controls' attributes and messages, by column: `Rule 2 URL` is /rules/1/url, id rule_url-1. */
function rowCells<K extends string>(c: Ctx, i: number, names: Record<K, string>) {
  const path = (col: K) => `${c.path}/${i}/${col}`;
  return {
    attrs: (col: K) => controlAttrs(c, rowId(names[col], i), path(col)),
    errors: () => (Object.keys(names) as K[]).map((col) => fieldProblems(c.errors, path(col), fieldRef(path(col), FIELD_REFS), true)).join(""),
  };
}

function ruleRow(r: RuleRow, i: number, c: Ctx): string {
  const opt = (v: string) => `<option value="${v}"${r.kind === v ? " selected" : ""}>${v[0].toUpperCase()}${v.slice(1)}</option>`;
  const cells = rowCells(c, i, RULE_ROW);
  return `<div class="row"><select name="${RULE_ROW.kind}" ${cells.attrs("kind")} aria-label="Rule ${i + 1} kind">${RULE_KINDS.map(opt).join("")}</select>
<input name="${RULE_ROW.match}" ${cells.attrs("match")} value="${esc(r.match)}" maxlength="16" placeholder="US or mobile" aria-label="Rule ${i + 1} match">
<input name="${RULE_ROW.url}" ${cells.attrs("url")} class="url" type="url" value="${esc(r.url)}" maxlength="2048" placeholder="https://…" aria-label="Rule ${i + 1} URL"></div>${cells.errors()}`;
}

function abRow(a: AbRow, i: number, c: Ctx): string {
  const cells = rowCells(c, i, AB_ROW);
  return `<div class="row"><input name="${AB_ROW.url}" ${cells.attrs("url")} class="url" type="url" value="${esc(a.url)}" maxlength="2048" placeholder="https://…" aria-label="Variant ${i + 1} URL">
<input name="${AB_ROW.weight}" ${cells.attrs("weight")} value="${esc(a.weight)}" inputmode="decimal" placeholder="weight" aria-label="Variant ${i + 1} weight"></div>${cells.errors()}`;
}

/**
 * The field's rows and blank ones to fill in, up to as many as the API takes. The box has the field's id (and
 * takes the focus from the error summary's link) for errors about the rows as a whole, shown above it.
 */
function rows<T>(f: FormField, c: Ctx, widget: RowsWidget, items: T[], blank: T, render: (item: T, i: number) => string): string {
  const { box } = ROWS[widget];
  const max = maxRowsOf(f);
  const all = [...items];
  for (let i = 0; i < BLANK_ROWS && all.length < max; i++) all.push(blank);
  return `${fieldProblems(c.errors, c.path, c.ref)}<div class="rows${box === "ab" ? " ab" : ""}" id="${fieldId(f)}" tabindex="-1" data-rows="${box}" data-max="${max}">${all.map(render).join("")}</div>
<button type="button" class="btn-small" data-add-row="${box}">+ Add a row</button>`;
}

function passwordField(f: FormField, c: Ctx): string {
  const set = c.mode === "edit" && c.values.hasPassword;
  const hint = set ? "(set; leave blank to keep it)" : "(optional; visitors must enter it)";
  const remove = set
    ? `<label class="check"><input type="checkbox" name="removePassword" value="1"${c.values.removePassword ? " checked" : ""}>Remove the password</label>`
    : "";
  return `${input(f, c, "password", { value: "", hint, attrs: 'maxlength="200" autocomplete="new-password"' })}${remove}<input type="hidden" name="hasPassword" value="${c.values.hasPassword ? "1" : "0"}">`;
}

/** The markup of each widget. */
const RENDER: Record<FormWidget, (f: FormField, c: Ctx) => string> = {
  url: (f, c) => input(f, c, "url"),
  text: (f, c) => input(f, c, "text"),
  tags: (f, c) => input(f, c, "text"),
  number: (f, c) => input(f, c, "number"),
  datetime: (f, c) => input(f, c, "datetime-local"),
  password: passwordField,
  select: (f, c) => {
    const value = c.values.fields[f.name];
    const options = choicesOf(f).map((s) => `<option value="${esc(s)}"${value === s ? " selected" : ""}>${esc(s)}</option>`).join("");
    return `${labelOf(f)}<select ${controlAttrs(c, fieldId(f))} name="${f.posted}" ${f.form.attrs ?? ""}>${options}</select>${fieldProblems(c.errors, c.path, c.ref)}`;
  },
  checkbox: (f, c) =>
    `<label class="check"><input type="checkbox" ${controlAttrs(c, fieldId(f))} name="${f.posted}" value="on"${c.values.fields[f.name] ? " checked" : ""}>${esc(f.form.label)}</label>${fieldProblems(c.errors, c.path, c.ref)}`,
  textarea: (f, c) =>
    `${labelOf(f)}<textarea ${controlAttrs(c, fieldId(f))} name="${f.posted}" ${f.form.attrs ?? ""}>${esc(c.values.fields[f.name])}</textarea>${fieldProblems(c.errors, c.path, c.ref)}`,
  ruleRows: (f, c) => rows(f, c, "ruleRows", c.values.fields[f.name] as RuleRow[], { kind: RULE_KINDS[0], match: "", url: "" }, (r, i) => ruleRow(r, i, c)),
  abRows: (f, c) => rows(f, c, "abRows", c.values.fields[f.name] as AbRow[], { url: "", weight: "" }, (a, i) => abRow(a, i, c)),
};

/** Widgets that take the section's whole width; the rest share its grid. The required field (the target) too. */
const WIDE: ReadonlySet<FormWidget> = new Set(["checkbox", "textarea", "ruleRows", "abRows"]);
const isWide = (f: FormField) => WIDE.has(f.form.widget) || f.input.required !== undefined;
const cell = (html: string, wide = false) => `<div${wide ? ' class="wide"' : ""}>${html}</div>`;

function slugCell(o: LinkFormOptions, errors: Errors): string {
  if (o.mode === "edit") return cell(`<label>Slug</label><p class="mono">${esc(o.values.slug)}</p>`);
  const ref = FIELD_REFS["/slug"];
  const options = (o.domains ?? []).map((d) => `<option value="${esc(d)}"${o.values.domain === d ? " selected" : ""}>${esc(d)}</option>`).join("");
  const domain = options ? `<label for="f-domain">Domain</label><select id="f-domain" name="domain"${invalidAttrs(errors, "/domain", "f-domain")}><option value="${esc(o.baseDomain ?? "")}"${o.values.domain === o.baseDomain ? " selected" : ""}>base domain</option>${options}</select>${fieldProblems(errors, "/domain", FIELD_REFS["/domain"])}` : "";
  return cell(`${domain}<label for="f-slug">Slug <span class="hint">(optional; 3-40 of A-Z a-z 0-9 - _)</span></label><input id="f-slug"${invalidAttrs(errors, "/slug", "f-slug")} name="slug" type="text" value="${esc(o.values.slug)}" maxlength="40" autocomplete="off">${fieldProblems(errors, "/slug", ref)}`);
}

function webhookSecret(o: LinkFormOptions): string {
  if (o.mode !== "edit" || !o.webhookSecret) return "";
  return cell(`<p class="small">Signing secret: <code class="mono">${esc(o.webhookSecret)}</code> <button type="button" class="btn-small" data-copy="${esc(o.webhookSecret)}">Copy</button></p>`, true);
}

/** A section's cells: its fields, the slug after the link's required field (the target), the webhook's secret last. */
function sectionCells(section: FormSection, o: LinkFormOptions, errors: Errors): string[] {
  const cells: string[] = [];
  for (const f of FORM_FIELDS.filter((field) => field.form.section === section)) {
    const path = `/${sentAs(f, o.mode)}`;
    cells.push(cell(RENDER[f.form.widget](f, { mode: o.mode, values: o.values, errors, path, ref: fieldRef(path, FIELD_REFS) }), isWide(f)));
    if (section === "link" && f.input.required === "create") cells.push(slugCell(o, errors));
  }
  if (section === "webhook") cells.push(webhookSecret(o));
  return cells;
}

export function linkForm(o: LinkFormOptions): string {
  const errors = o.error?.errors ?? [];
  const edit = o.mode === "edit";
  // Edit: the link's own pages (its domain named); without them, by slug alone.
  const pages = o.link ?? { action: linkPath(o.values.slug, "edit"), cancel: linkPath(o.values.slug, "stats") };
  const fieldsets = (Object.entries(FORM_SECTIONS) as [FormSection, (typeof FORM_SECTIONS)[FormSection]][]).map(([section, s]) => {
    const cells = sectionCells(section, o, errors).filter(Boolean).join("\n");
    return cells ? `<fieldset><legend>${s.legend}</legend>${s.hint ? `\n<p class="hint">${s.hint}</p>` : ""}\n<div class="grid">${cells}</div></fieldset>` : "";
  });
  return `${o.error ? errorSummary(o.error, FIELD_REFS) : ""}
<form method="post" action="${esc(edit ? pages.action : "/dashboard/links")}" novalidate>${csrfField(o.csrf)}
${fieldsets.join("\n")}
<div class="actions"><button type="submit" class="btn-primary">${edit ? "Save changes" : "Create link"}</button><a class="btn" href="${esc(edit ? pages.cancel : "/dashboard/links")}">Cancel</a></div>
</form>${suggestionLists(o.suggestions ?? { tags: [], folders: [] })}`;
}

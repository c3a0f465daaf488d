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
import { csrfField, errorsBox, esc, fieldErrors } from "./layout.ts";
import { AB_ROW, choicesOf, FORM_FIELDS, maxRowsOf, RULE_ROW, sentAs, type AbRow, type FormField, type LinkFormValues, type RuleRow } from "./link-form-input.ts";

export interface LinkFormOptions {
  mode: "create" | "edit";
  values: LinkFormValues;
  csrf: string;
  error?: { detail: string; errors: FieldError[] };
  /** Edit mode: the link's webhook secret, shown so the owner can verify signatures. */
  webhookSecret?: string | null;
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
 * Row widgets: what a row and its columns are called in messages ("Rule 2 URL") and the name of its box (the
 * script's "Add a row" finds it by that).
 */
const ROWS = {
  ruleRows: { noun: "Rule", columns: { kind: "kind", match: "match", url: "URL" }, box: "rules" },
  abRows: { noun: "Variant", columns: { url: "URL", weight: "weight" }, box: "ab" },
} as const;
const BLANK_ROWS = 2;

/** "Title" in the preview section is "Preview title" in the error list; a label that names its section stays. */
function errorLabel(f: FormField): string {
  const prefix = FORM_SECTIONS[f.form.section].errorPrefix;
  if (!prefix || f.form.label.toLowerCase().includes(prefix.toLowerCase())) return f.form.label;
  const label = /^[A-Z][a-z]/.test(f.form.label) ? f.form.label[0].toLowerCase() + f.form.label.slice(1) : f.form.label;
  return `${prefix} ${label}`;
}

/** Error paths → labels for the list at the top: every form field under both its names, and the row columns. */
export const FIELD_LABELS: Record<string, string> = Object.fromEntries([
  ["/slug", "Slug"],
  ...FORM_FIELDS.flatMap((f) => {
    const names = [...new Set([f.createAs, f.updateAs ?? f.createAs])];
    const rows = f.form.widget === "ruleRows" || f.form.widget === "abRows" ? ROWS[f.form.widget] : null;
    const columns = rows ? Object.entries(rows.columns).map(([key, word]) => [key, `${rows.noun} # ${word}`]) : [];
    return names.flatMap((n) => [[`/${n}`, errorLabel(f)], ...columns.map(([key, label]) => [`/${n}/*/${key}`, label])]);
  }),
]);

interface Ctx {
  mode: Mode;
  values: LinkFormValues;
  errors: Errors;
  /** Where the API reports this field's errors: `/url` on create, `/targetUrl` on edit. */
  path: string;
}

const hintOf = (hint?: string) => (hint ? ` <span class="hint">${esc(hint)}</span>` : "");
/** A field's label element, for the control with id `f-{posted name}`. */
const labelOf = (f: FormField, hint = f.form.hint) => `<label for="f-${f.posted}">${esc(f.form.label)}${hintOf(hint)}</label>`;

function input(f: FormField, c: Ctx, type: string, value = c.values.fields[f.name] as string, hint = f.form.hint, attrs = f.form.attrs): string {
  return `${labelOf(f, hint)}<input id="f-${f.posted}" name="${f.posted}" type="${type}" value="${esc(value)}" ${attrs ?? ""}>${fieldErrors(c.errors, c.path)}`;
}

function rowErrors(errors: Errors, prefix: string, i: number, noun: string): string {
  return errors
    .filter((e) => e.path.startsWith(`${prefix}/${i}/`))
    .map((e) => `<p class="err">${noun} ${i + 1} ${esc(e.path.split("/").pop())}: ${esc(e.message)}</p>`)
    .join("");
}

function ruleRow(r: RuleRow, i: number, c: Ctx): string {
  const opt = (v: string) => `<option value="${v}"${r.kind === v ? " selected" : ""}>${v[0].toUpperCase()}${v.slice(1)}</option>`;
  return `<div class="row"><select name="${RULE_ROW.kind}" aria-label="Rule ${i + 1} kind">${RULE_KINDS.map(opt).join("")}</select>
<input name="${RULE_ROW.match}" value="${esc(r.match)}" maxlength="16" placeholder="US or mobile" aria-label="Rule ${i + 1} match">
<input name="${RULE_ROW.url}" class="url" type="url" value="${esc(r.url)}" maxlength="2048" placeholder="https://…" aria-label="Rule ${i + 1} URL"></div>${rowErrors(c.errors, c.path, i, ROWS.ruleRows.noun)}`;
}

function abRow(a: AbRow, i: number, c: Ctx): string {
  return `<div class="row"><input name="${AB_ROW.url}" class="url" type="url" value="${esc(a.url)}" maxlength="2048" placeholder="https://…" aria-label="Variant ${i + 1} URL">
<input name="${AB_ROW.weight}" value="${esc(a.weight)}" inputmode="decimal" placeholder="weight" aria-label="Variant ${i + 1} weight"></div>${rowErrors(c.errors, c.path, i, ROWS.abRows.noun)}`;
}

/** The field's rows and blank ones to fill in, up to as many as the API takes. */
function rows<T>(f: FormField, widget: keyof typeof ROWS, items: T[], blank: T, render: (item: T, i: number) => string): string {
  const { box } = ROWS[widget];
  const max = maxRowsOf(f);
  const all = [...items];
  for (let i = 0; i < BLANK_ROWS && all.length < max; i++) all.push(blank);
  return `<div class="rows${box === "ab" ? " ab" : ""}" data-rows="${box}" data-max="${max}">${all.map(render).join("")}</div>
<button type="button" class="btn-small" data-add-row="${box}">+ Add a row</button>`;
}

function passwordField(f: FormField, c: Ctx): string {
  const set = c.mode === "edit" && c.values.hasPassword;
  const hint = set ? "(set; leave blank to keep it)" : "(optional; visitors must enter it)";
  const remove = set
    ? `<label class="check"><input type="checkbox" name="removePassword" value="1"${c.values.removePassword ? " checked" : ""}>Remove the password</label>`
    : "";
  return `${input(f, c, "password", "", hint, 'maxlength="200" autocomplete="new-password"')}${remove}<input type="hidden" name="hasPassword" value="${c.values.hasPassword ? "1" : "0"}">`;
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
    return `${labelOf(f)}<select id="f-${f.posted}" name="${f.posted}" ${f.form.attrs ?? ""}>${options}</select>${fieldErrors(c.errors, c.path)}`;
  },
  checkbox: (f, c) =>
    `<label class="check"><input type="checkbox" name="${f.posted}" value="on"${c.values.fields[f.name] ? " checked" : ""}>${esc(f.form.label)}</label>${fieldErrors(c.errors, c.path)}`,
  textarea: (f, c) =>
    `${labelOf(f)}<textarea id="f-${f.posted}" name="${f.posted}" ${f.form.attrs ?? ""}>${esc(c.values.fields[f.name])}</textarea>${fieldErrors(c.errors, c.path)}`,
  ruleRows: (f, c) =>
    `${fieldErrors(c.errors, c.path)}${rows(f, "ruleRows", c.values.fields[f.name] as RuleRow[], { kind: RULE_KINDS[0], match: "", url: "" }, (r, i) => ruleRow(r, i, c))}`,
  abRows: (f, c) =>
    `${fieldErrors(c.errors, c.path)}${rows(f, "abRows", c.values.fields[f.name] as AbRow[], { url: "", weight: "" }, (a, i) => abRow(a, i, c))}`,
};

/** Widgets that take the section's whole width; the rest share its grid. The required field (the target) too. */
const WIDE: ReadonlySet<FormWidget> = new Set(["checkbox", "textarea", "ruleRows", "abRows"]);
const isWide = (f: FormField) => WIDE.has(f.form.widget) || f.input.required !== undefined;
const cell = (html: string, wide = false) => `<div${wide ? ' class="wide"' : ""}>${html}</div>`;

function slugCell(o: LinkFormOptions, errors: Errors): string {
  if (o.mode === "edit") return cell(`<label>Slug</label><p class="mono">${esc(o.values.slug)}</p>`);
  return cell(`<label for="f-slug">Slug <span class="hint">(optional; 3-40 of A-Z a-z 0-9 - _)</span></label><input id="f-slug" name="slug" type="text" value="${esc(o.values.slug)}" maxlength="40" autocomplete="off">${fieldErrors(errors, "/slug")}`);
}

function webhookSecret(o: LinkFormOptions): string {
  if (o.mode !== "edit" || !o.webhookSecret) return "";
  return cell(`<p class="small">Signing secret: <code class="mono">${esc(o.webhookSecret)}</code> <button type="button" class="btn-small" data-copy="${esc(o.webhookSecret)}">Copy</button></p>`, true);
}

/** A section's cells: its fields, the slug after the link's required field (the target), the webhook's secret last. */
function sectionCells(section: FormSection, o: LinkFormOptions, errors: Errors): string[] {
  const cells: string[] = [];
  for (const f of FORM_FIELDS.filter((field) => field.form.section === section)) {
    cells.push(cell(RENDER[f.form.widget](f, { mode: o.mode, values: o.values, errors, path: `/${sentAs(f, o.mode)}` }), isWide(f)));
    if (section === "link" && f.input.required === "create") cells.push(slugCell(o, errors));
  }
  if (section === "webhook") cells.push(webhookSecret(o));
  return cells;
}

export function linkForm(o: LinkFormOptions): string {
  const errors = o.error?.errors ?? [];
  const edit = o.mode === "edit";
  const slugPath = `/dashboard/links/${encodeURIComponent(o.values.slug)}`;
  const fieldsets = (Object.entries(FORM_SECTIONS) as [FormSection, (typeof FORM_SECTIONS)[FormSection]][]).map(([section, s]) => {
    const cells = sectionCells(section, o, errors).filter(Boolean).join("\n");
    return cells ? `<fieldset><legend>${s.legend}</legend>${s.hint ? `\n<p class="hint">${s.hint}</p>` : ""}\n<div class="grid">${cells}</div></fieldset>` : "";
  });
  return `${o.error ? errorsBox(o.error.detail, errors, FIELD_LABELS) : ""}
<form method="post" action="${edit ? `${slugPath}/edit` : "/dashboard/links"}" novalidate>${csrfField(o.csrf)}
${fieldsets.join("\n")}
<div class="actions"><button type="submit" class="btn-primary">${edit ? "Save changes" : "Create link"}</button><a class="btn" href="${edit ? `${slugPath}/stats` : "/dashboard/links"}">Cancel</a></div>
</form>`;
}

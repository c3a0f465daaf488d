/**
 * How a form's problems are shown (design §6; the GOV.UK error summary pattern): a summary at the top that takes
 * the focus (app.js) and links to each field, and under each field its message, tied to the control with
 * aria-invalid and aria-describedby. Messages are worded for people here, in the dashboard only: the API keeps
 * the schema's words ("Expected integer to be greater or equal to 1"), a person reads "Enter a whole number of
 * at least 1".
 */
import type { FieldError } from "../../shared/errors.ts";
import { esc } from "./layout.ts";

/** What the API said was wrong with a posted form. */
export interface FormProblem {
  detail: string;
  errors: FieldError[];
}

/** A field as a person sees it: its label, and the id of its control (absent: nothing to focus, e.g. a cursor). */
export interface FieldRef {
  label: string;
  id?: string;
}

/**
 * Fields by error path. A key may stand for rows: "/rules/*\/url" with label "Rule # URL" and id "rule_url-#"
 * gives "/rules/2/url" the label "Rule 3 URL" (counted from 1) and the id "rule_url-2" (from 0, as rendered).
 */
export type FieldRefs = Record<string, FieldRef>;

/** The field behind an error path; unknown paths are named by the path itself and link nowhere. */
export function fieldRef(path: string, refs: FieldRefs): FieldRef {
  if (Object.hasOwn(refs, path)) return refs[path];
  const m = /^\/(\w+)\/(\d+)\/(\w+)$/.exec(path);
  const rows = m ? refs[`/${m[1]}/*/${m[3]}`] : undefined;
  if (m && rows) {
    const i = Number(m[2]);
    return { label: rows.label.replace("#", String(i + 1)), id: rows.id?.replace("#", String(i)) };
  }
  return { label: path.replace(/^\//, "") || "Form" };
}

const count = (n: string) => (/^-?\d+$/.test(n) ? Number(n).toLocaleString("en-US") : n);

/** Schema messages (TypeBox's, and validation.ts' rewordings of them) → what a person should do. */
const SCHEMA_WORDS: [RegExp, (...m: string[]) => string][] = [
  [/^Expected integer to be greater or equal to (\S+)$/, (n) => `Enter a whole number of at least ${count(n)}`],
  [/^Expected integer to be greater than (\S+)$/, (n) => `Enter a whole number greater than ${count(n)}`],
  [/^Expected integer to be less or equal to (\S+)$/, (n) => `Enter a whole number no greater than ${count(n)}`],
  [/^Expected integer to be less than (\S+)$/, (n) => `Enter a whole number less than ${count(n)}`],
  [/^Expected integer$/, () => "Enter a whole number, like 100"],
  [/^Expected number to be greater or equal to (\S+)$/, (n) => `Enter a number of at least ${count(n)}`],
  [/^Expected number to be greater than (\S+)$/, (n) => `Enter a number greater than ${count(n)}`],
  [/^Expected number to be less or equal to (\S+)$/, (n) => `Enter a number no greater than ${count(n)}`],
  [/^Expected number to be less than (\S+)$/, (n) => `Enter a number less than ${count(n)}`],
  [/^Expected number$/, () => "Enter a number, like 2 or 0.5"],
  [/^Expected string length greater or equal to 1$|^Expected required property$/, () => "Fill in this field"],
  [/^Expected string length greater or equal to (\d+)$/, (n) => `Use at least ${count(n)} characters`],
  [/^Expected string length less or equal to (\d+)$/, (n) => `Use at most ${count(n)} characters`],
  [/^Expected array length to be less or equal to (\d+)$/, (n) => `Use at most ${count(n)} rows`],
  [/^Expected array length to be greater or equal to (\d+)$/, (n) => `Fill in at least ${count(n)} rows`],
  [/^Expected string to match 'email' format$/, () => "Enter an email address, like name@example.com"],
  [/^Expected string to match '(?:uri|url)' format$/, () => "Enter a full web address, like https://example.com/page"],
  [/^Expected string to match 'date-time' format$/, () => "Enter a date and time"],
  [/^Expected string to match /, () => "Use only the characters this field allows"],
  [/^Expected boolean$/, () => "Tick the box or leave it empty"],
  [/^Expected string$/, () => "Enter text"],
  [/^(?:Unexpected property|unknown field)$/, () => "This form does not have this field: reload the page and try again"],
  // validation.ts' wording of a union of literals: must be one of "active", "paused", "archived".
  [/^must be one of (.+)$/, (list) => `must be ${orList(list.split(", ").map((v) => v.replace(/^"(.*)"$/, "$1")))}`],
  // The list's cursor (link-store-support.ts): only a link the list made is one.
  [/^invalid cursor$/, () => "is out of date or was changed: start again from the first page"],
  // Anything else in the schema's voice: never shown as is.
  [/^Expected /, () => "Check this value: it is not one this field takes"],
];

const orList = (items: string[]) => (items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`);

/** A message in words for people: schema messages reworded, the services' own ("must be …") kept. */
export function humanMessage(message: string): string {
  for (const [pattern, say] of SCHEMA_WORDS) {
    const m = pattern.exec(message);
    if (m) return say(...m.slice(1));
  }
  return message;
}

/** One problem in the summary: the field's label, then what is wrong ("Click limit: Enter a whole number of at least 1"). */
export const summaryText = (e: FieldError, ref: FieldRef) => `${ref.label}: ${humanMessage(e.message)}`;

/** Id of the paragraph holding the errors of the control with this id. */
export const errorIdOf = (controlId: string) => `${controlId}-error`;

/**
 * The summary at the top of a form: what went wrong, each item a link to its field. It carries tabindex -1 and
 * data-error-summary so app.js can move the focus to it, and role=alert so it is read out without a script.
 */
export function errorSummary(problem: FormProblem, refs: FieldRefs = {}): string {
  const items = problem.errors
    .map((e) => {
      const ref = fieldRef(e.path, refs);
      const text = esc(summaryText(e, ref));
      return `<li>${ref.id ? `<a href="#${esc(ref.id)}">${text}</a>` : text}</li>`;
    })
    .join("");
  const detail = items ? "" : `<p>${esc(problem.detail)}</p>`;
  return `<div class="errors" role="alert" tabindex="-1" aria-labelledby="error-summary-title" data-error-summary>
<h2 id="error-summary-title">There is a problem</h2>${detail}${items ? `<ul>${items}</ul>` : ""}</div>`;
}

/**
 * The errors at `path`, shown under its control (`ref.id`). The label is right above a field, so the message
 * stands alone; under a row of several controls it is named (`named`: "Rule 2 URL: must use http or https").
 */
export function fieldProblems(errors: FieldError[], path: string, ref: FieldRef, named = false): string {
  const mine = errors.filter((e) => e.path === path);
  if (!mine.length || !ref.id) return "";
  const text = (e: FieldError) => (named ? summaryText(e, ref) : humanMessage(e.message));
  return `<p class="err" id="${esc(errorIdOf(ref.id))}">${mine.map((e) => esc(text(e))).join(". ")}</p>`;
}

/** Attributes for a control whose field has errors: announced as invalid, described by its message. */
export function invalidAttrs(errors: FieldError[], path: string, controlId: string): string {
  return errors.some((e) => e.path === path) ? ` aria-invalid="true" aria-describedby="${esc(errorIdOf(controlId))}"` : "";
}

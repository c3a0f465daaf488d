/**
 * How a form's problems are shown (design §6; the GOV.UK error summary pattern): a summary at the top that takes
 * the focus (app.js) and links to each field, and under each field its message, tied to the control with
 * aria-invalid and aria-describedby. Messages are the API's own (shared/messages.ts: "must be at least 1"), so a
 * person, a script and a model read the same words; only what means something else in a form is reworded.
 */
import type { FieldError } from "../../shared/errors.ts";
import { MESSAGES } from "../../shared/messages.ts";
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

/**
 * The few messages that read differently in a form than in an API answer. Every other message is shown as REST
 * and MCP give it: shared/messages.ts writes them for people and models alike ("must be at most 80 characters").
 */
const FORM_WORDS: [RegExp, string][] = [
  // A posted field the form does not have: the page is older than the service (unknown field, with or without a hint).
  [new RegExp(`^${MESSAGES.unknownField}\\b`), "This form does not have this field: reload the page and try again"],
  // The list's cursor (link-store-support.ts): only a link the list made is one.
  [/^invalid cursor$/, "is out of date or was changed: start again from the first page"],
  // A validator's own voice, should a schema message ever come from elsewhere than messages.ts: never shown as is.
  [/^Expected /, "is not a value this field takes"],
];

/** A message as a form shows it: the shared words, but for the few that mean something else in a form. */
export function humanMessage(message: string): string {
  return FORM_WORDS.find(([pattern]) => pattern.test(message))?.[1] ?? message;
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

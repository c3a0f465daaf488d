/**
 * Bulk actions on the links list (issue #25): tick links, then add a tag, move them to a folder, pause, archive or
 * delete them. The form posts the ticked slugs to the same bulk service functions as PATCH /api/v1/links/bulk and
 * POST /api/v1/links/bulk-delete; a delete asks for confirmation first. Every change answers 303 back to the list
 * (POST-redirect-GET) with what was done, in words chosen here from a fixed set and counts.
 */
import { AppError } from "../../shared/errors.ts";
import { bulkDeleteLinks, bulkUpdateLinks } from "../links/bulk-change.ts";
import { BULK_MAX } from "../links/service.ts";
import { htmlResponse, redirect, safeNext } from "./http.ts";
import { csrfField, esc, layout } from "./layout.ts";
import type { FormCtx, SignedInCtx } from "./session.ts";

/** Each action: its button, the body it sends to the bulk update (delete has its own service), its outcome in words. */
export const BULK_ACTIONS = {
  "add-tag": { button: "Add tag", done: "tagged", body: (form: URLSearchParams) => ({ addTags: [form.get("tag")?.trim() ?? ""] }) },
  move: { button: "Move to folder", done: "moved", body: (form: URLSearchParams) => ({ changes: { folder: form.get("folder")?.trim() ?? "" } }) },
  pause: { button: "Pause", done: "paused", body: () => ({ changes: { status: "paused" } }) },
  archive: { button: "Archive", done: "archived", body: () => ({ changes: { status: "archived" } }) },
  delete: { button: "Delete…", done: "deleted", body: () => ({}) },
} as const;
type BulkAction = keyof typeof BULK_ACTIONS;
const isAction = (v: string | null): v is BulkAction => v !== null && Object.hasOwn(BULK_ACTIONS, v);

/** The controls above the list's table (inside the bulk form, which wraps the table and its checkboxes). */
export function bulkControls(): string {
  const button = (a: BulkAction) => `<button type="submit" name="action" value="${a}"${a === "delete" ? ' class="btn-danger"' : ""}>${esc(BULK_ACTIONS[a].button)}</button>`;
  return `<fieldset class="card bulk"><legend>With the ticked links</legend>
<div><label for="bulk-tag">Tag</label> <input id="bulk-tag" name="tag" maxlength="40" autocomplete="off"> ${button("add-tag")}</div>
<div><label for="bulk-folder">Folder</label> <input id="bulk-folder" name="folder" maxlength="80" autocomplete="off" aria-describedby="bulk-folder-hint"> ${button("move")} <span id="bulk-folder-hint" class="small muted">(empty: no folder)</span></div>
<div>${button("pause")} ${button("archive")} ${button("delete")}</div></fieldset>`;
}

/** A row's checkbox, labelled with the link it ticks. */
export const bulkCheckbox = (slug: string, i: number) =>
  `<input type="checkbox" name="slug" value="${esc(slug)}" id="tick-${i}" aria-label="${esc(`Select ${slug}`)}">`;

/** The words of a bulk outcome the list shows after the redirect (`bulk`, `n` and `failed` from its URL). */
export function bulkOutcome(sp: URLSearchParams): string {
  const done = sp.get("bulk");
  const action = Object.values(BULK_ACTIONS).find((a) => a.done === done);
  const n = Number(sp.get("n") || NaN);
  const failed = Number(sp.get("failed") ?? "0");
  if (!action || !Number.isSafeInteger(n) || !Number.isSafeInteger(failed) || n < 0 || failed < 0) return "";
  const links = (k: number) => `${k} link${k === 1 ? "" : "s"}`;
  const text = `${links(n)} ${action.done}.${failed ? ` ${links(failed)} could not be changed (deleted meanwhile, or too many tags).` : ""}`;
  return `<p class="flash" role="status">${esc(text)}</p>`;
}

/** The list page to go back to (its filters and page), never outside the dashboard. */
const backOf = (form: URLSearchParams) => safeNext(form.get("back"));
const withOutcome = (back: string, done: string, n: number, failed: number) =>
  `${back}${back.includes("?") ? "&" : "?"}${new URLSearchParams({ bulk: done, n: String(n), failed: String(failed) })}`;

function refusal(ctx: SignedInCtx, back: string, message: string): Response {
  const body = `<h1>Nothing was changed</h1><div class="card" role="alert"><p>${esc(message)}</p><p><a href="${esc(back)}">Back to the links</a></p></div>`;
  return htmlResponse(400, layout({ title: "Nothing was changed", body, viewer: ctx.viewer, current: "links" }));
}

/** The delete confirmation: the ticked links, and a button that posts them again with confirm=1. */
function confirmDelete(ctx: SignedInCtx, slugs: string[], back: string): Response {
  const hidden = slugs.map((s) => `<input type="hidden" name="slug" value="${esc(s)}">`).join("");
  const body = `<h1>Delete ${slugs.length} link${slugs.length === 1 ? "" : "s"}?</h1>
<div class="card"><p>These short addresses will stop working (they answer 404). This cannot be undone.</p>
<ul>${slugs.map((s) => `<li class="mono">${esc(s)}</li>`).join("")}</ul>
<form method="post" action="/dashboard/links/bulk" class="actions">${csrfField(ctx.session.csrfToken)}${hidden}
<input type="hidden" name="back" value="${esc(back)}"><input type="hidden" name="confirm" value="1">
<button type="submit" name="action" value="delete" class="btn-danger">Delete permanently</button><a class="btn" href="${esc(back)}">Cancel</a></form></div>`;
  return htmlResponse(200, layout({ title: "Delete links", body, viewer: ctx.viewer, current: "links" }));
}

/** What a refused bulk body says, in the form's words. */
function refusedWords(e: AppError): string {
  const first = e.errors?.[0];
  if (first?.path.startsWith("/addTags")) return `Tag: ${first.message}.`;
  if (first?.path === "/changes/folder") return `Folder: ${first.message}.`;
  return first ? `${first.path.slice(1)}: ${first.message}.` : e.message;
}

/** POST /dashboard/links/bulk. */
export async function bulkAction({ ctx, form }: FormCtx<SignedInCtx>): Promise<Response> {
  const back = backOf(form);
  const action = form.get("action");
  const slugs = form.getAll("slug");
  if (!isAction(action)) return refusal(ctx, back, "Choose what to do with the ticked links.");
  if (slugs.length === 0) return refusal(ctx, back, "Tick at least one link first.");
  if (slugs.length > BULK_MAX) return refusal(ctx, back, `At most ${BULK_MAX} links at a time.`);
  if (action === "delete" && form.get("confirm") !== "1") return confirmDelete(ctx, slugs, back);
  try {
    const r = action === "delete"
      ? await bulkDeleteLinks(ctx.deps, ctx.caller, { slugs })
      : await bulkUpdateLinks(ctx.deps, ctx.caller, { slugs, ...BULK_ACTIONS[action].body(form) });
    const done = "deleted" in r ? r.deleted : r.updated;
    return redirect(withOutcome(back, BULK_ACTIONS[action].done, done, r.failed));
  } catch (e) {
    if (!(e instanceof AppError) || e.code !== "invalid_input") throw e;
    return refusal(ctx, back, refusedWords(e));
  }
}

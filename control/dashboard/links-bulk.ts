/**
 * Bulk actions on the links list (issue #25): tick links, then add a tag, move them to a folder, pause, archive or
 * delete them. The form posts the ticked slugs to the same bulk service functions as PATCH /api/v1/links/bulk and
 * POST /api/v1/links/bulk-delete; a delete asks for confirmation first. When the filters match more links than one
 * page shows, the form also offers every link they match (as Gmail's "select all conversations that match this
 * search"): it posts the filters instead of slugs, a confirmation names the action and how many links it changes,
 * and the change goes through the same services by filter, page after page (keyset: changed links do not shift
 * the rest). Every change answers 303 back to the list (POST-redirect-GET) with what was done, in words chosen here
 * from a fixed set and counts.
 */
import { AppError } from "../../shared/errors.ts";
import { bulkDeleteLinks, bulkUpdateLinks, checkBulkUpdate } from "../links/bulk-change.ts";
import { BULK_FILTERS } from "../links/bulk-schemas.ts";
import { BULK_MAX, countLinks, domainParamOf } from "../links/service.ts";
import { htmlResponse, redirect, safeNext } from "./http.ts";
import { csrfField, esc, layout } from "./layout.ts";
import { bulkTargets } from "./link-paths.ts";
import type { FormCtx, SignedInCtx } from "./session.ts";

/**
 * Each action: its button, the body it sends to the bulk update (delete has its own service), its outcome in words,
 * and what the confirmation of a change to every matching link asks ("Pause 1,200 links…?").
 */
export const BULK_ACTIONS = {
  "add-tag": {
    button: "Add tag", done: "tagged", body: (form: URLSearchParams) => ({ addTags: [form.get("tag")?.trim() ?? ""] }),
    ask: (form: URLSearchParams) => `Add the tag “${form.get("tag")?.trim() ?? ""}” to`,
  },
  move: {
    button: "Move to folder", done: "moved", body: (form: URLSearchParams) => ({ changes: { folder: form.get("folder")?.trim() ?? "" } }),
    ask: (form: URLSearchParams) => (form.get("folder")?.trim() ? `Move to the folder “${form.get("folder")!.trim()}”` : "Take out of their folder"),
  },
  pause: { button: "Pause", done: "paused", body: () => ({ changes: { status: "paused" } }), ask: () => "Pause" },
  archive: { button: "Archive", done: "archived", body: () => ({ changes: { status: "archived" } }), ask: () => "Archive" },
  delete: { button: "Delete…", done: "deleted", body: () => ({}), ask: () => "Delete" },
} as const;
type BulkAction = keyof typeof BULK_ACTIONS;
const isAction = (v: string | null): v is BulkAction => v !== null && Object.hasOwn(BULK_ACTIONS, v);

/** The list's filters as the form carries them for "every matching link": a hidden `match_{name}` each. */
const MATCH_PREFIX = "match_";
const FILTER_WORDS: Record<string, string> = { q: "Search", tag: "Tag", folder: "Folder", status: "Status", state: "State", externalId: "External id", domain: "Domain" };

/** Every link the list's filters match, beyond the page shown: the filters (non-empty ones) and how many. */
export interface AllMatching {
  filters: Record<string, string>;
  count: number;
  /** The count stopped at `count`: there are more. */
  capped: boolean;
}

const linksWord = (n: number) => `${n.toLocaleString("en-US")} link${n === 1 ? "" : "s"}`;

function hiddenFilters(filters: Record<string, string>): string {
  return Object.entries(filters).map(([k, v]) => `<input type="hidden" name="${MATCH_PREFIX}${esc(k)}" value="${esc(v)}">`).join("");
}

/** Every matching link instead of the ticked ones: offered when the filters match more than the page shows. */
function scopeChoice(all: AllMatching): string {
  const n = `${all.count.toLocaleString("en-US")}${all.capped ? "+" : ""}`;
  const which = Object.keys(all.filters).length > 0 ? "matching these filters" : "of your account";
  return `${hiddenFilters(all.filters)}<label class="check"><input type="checkbox" name="scope" value="all"> All ${n} links ${which}, not only the ticked ones</label>`;
}

/** The controls above the list's table (inside the bulk form, which wraps the table and its checkboxes). */
export function bulkControls(all?: AllMatching): string {
  const button = (a: BulkAction) => `<button type="submit" name="action" value="${a}"${a === "delete" ? ' class="btn-danger"' : ""}>${esc(BULK_ACTIONS[a].button)}</button>`;
  return `<fieldset class="card bulk"><legend>${all ? "Change links" : "With the ticked links"}</legend>${all ? scopeChoice(all) : ""}
<div><label for="bulk-tag">Tag</label> <input id="bulk-tag" name="tag" maxlength="40" autocomplete="off"> ${button("add-tag")}</div>
<div><label for="bulk-folder">Folder</label> <input id="bulk-folder" name="folder" maxlength="80" autocomplete="off" aria-describedby="bulk-folder-hint"> ${button("move")} <span id="bulk-folder-hint" class="small muted">(empty: no folder)</span></div>
<div>${button("pause")} ${button("archive")} ${button("delete")}</div></fieldset>`;
}

/** A row's checkbox, labelled with the link it ticks: its slug, or domain/slug on a custom domain (linkName). */
export const bulkCheckbox = (value: string, i: number) =>
  `<input type="checkbox" name="slug" value="${esc(value)}" id="tick-${i}" aria-label="${esc(`Select ${value}`)}">`;

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

/** The filters a form posted for "every matching link" (the bulk filters only, empty ones left out). */
function postedFilters(form: URLSearchParams): Record<string, string> {
  const filters: Record<string, string> = {};
  for (const k of BULK_FILTERS) {
    const v = form.get(`${MATCH_PREFIX}${k}`)?.trim();
    if (v) filters[k] = v;
  }
  return filters;
}

/** The confirmation of a change to every matching link: the action, how many links, the filters; posts again with confirm=1. */
function confirmAll(ctx: SignedInCtx, form: URLSearchParams, action: BulkAction, filters: Record<string, string>, count: number, back: string): Response {
  const question = `${BULK_ACTIONS[action].ask(form)} ${linksWord(count)}?`;
  const conditions = Object.entries(filters).map(([k, v]) => `<li>${esc(FILTER_WORDS[k] ?? k)}: <span class="mono">${esc(v)}</span></li>`).join("");
  const kept = ["tag", "folder"].map((k) => `<input type="hidden" name="${k}" value="${esc(form.get(k) ?? "")}">`).join("");
  const body = `<h1>${esc(question)}</h1>
<div class="card"><p>${conditions ? "Every link matching these filters:" : "Every link of your account."}</p>${conditions ? `<ul>${conditions}</ul>` : ""}
${action === "delete" ? "<p>Their short addresses will stop working (they answer 404). This cannot be undone.</p>" : ""}
<p class="small muted">Links that come to match, or stop matching, before you confirm are counted as they are then.</p>
<form method="post" action="/dashboard/links/bulk" class="actions">${csrfField(ctx.session.csrfToken)}${hiddenFilters(filters)}${kept}
<input type="hidden" name="scope" value="all"><input type="hidden" name="back" value="${esc(back)}"><input type="hidden" name="confirm" value="1">
<button type="submit" name="action" value="${action}" class="${action === "delete" ? "btn-danger" : "btn-primary"}">${esc(`${BULK_ACTIONS[action].ask(form)} ${linksWord(count)}`)}</button><a class="btn" href="${esc(back)}">Cancel</a></form></div>`;
  return htmlResponse(200, layout({ title: "Change links", body, viewer: ctx.viewer, current: "links" }));
}

type Selector = { slugs: string[]; domain?: string } | { filter: Record<string, string>; cursor?: string };

/**
 * Applies the action to the ticked links (a call per domain they are on, link-paths.ts bulkTargets), or to every
 * link the filters match (a call per page of them).
 */
async function apply(ctx: SignedInCtx, form: URLSearchParams, action: BulkAction, ticked: string[] | { filter: Record<string, string> }) {
  let done = 0;
  let failed = 0;
  const run = async (selector: Selector) => {
    const r = action === "delete"
      ? await bulkDeleteLinks(ctx.deps, ctx.caller, selector)
      : await bulkUpdateLinks(ctx.deps, ctx.caller, { ...selector, ...BULK_ACTIONS[action].body(form) });
    done += "deleted" in r ? r.deleted : r.updated;
    failed += r.failed;
    return r.nextCursor ?? undefined;
  };
  if (Array.isArray(ticked)) {
    const groups = bulkTargets(ticked);
    // Every domain is checked before any link changes: a bad one (deleted meanwhile) refuses the whole action.
    for (const domain of groups.keys()) await domainParamOf(ctx.deps, ctx.caller, domain);
    for (const [domain, slugs] of groups) await run(domain === undefined ? { slugs } : { slugs, domain });
  } else {
    let cursor: string | undefined;
    do cursor = await run({ ...ticked, cursor });
    while (cursor !== undefined);
  }
  return { done, failed };
}

/** POST /dashboard/links/bulk. */
export async function bulkAction({ ctx, form }: FormCtx<SignedInCtx>): Promise<Response> {
  const back = backOf(form);
  const action = form.get("action");
  const all = form.get("scope") === "all";
  const slugs = form.getAll("slug");
  const filters = postedFilters(form);
  if (!isAction(action)) return refusal(ctx, back, `Choose what to do with the ${all ? "matching" : "ticked"} links.`);
  if (!all && slugs.length === 0) return refusal(ctx, back, "Tick at least one link first.");
  if (!all && slugs.length > BULK_MAX) return refusal(ctx, back, `At most ${BULK_MAX} links at a time.`);
  try {
    if (all && form.get("confirm") !== "1") {
      const count = await countLinks(ctx.deps, ctx.caller, filters);
      if (count === 0) return refusal(ctx, back, "No links match these filters.");
      // The change's own checks (a tag too long, say) are refused before the count is asked about.
      if (action !== "delete") checkBulkUpdate(ctx.deps, { filter: filters, ...BULK_ACTIONS[action].body(form) });
      return confirmAll(ctx, form, action, filters, count, back);
    }
    if (action === "delete" && !all && form.get("confirm") !== "1") return confirmDelete(ctx, slugs, back);
    const { done, failed } = await apply(ctx, form, action, all ? { filter: filters } : slugs);
    return redirect(withOutcome(back, BULK_ACTIONS[action].done, done, failed));
  } catch (e) {
    if (!(e instanceof AppError) || (e.code !== "invalid_input" && e.code !== "unknown_domain")) throw e;
    return refusal(ctx, back, refusedWords(e));
  }
}

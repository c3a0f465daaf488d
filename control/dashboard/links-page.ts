/**
 * The links table: search, tag/folder/status/state/domain filters and cursor pagination, all through the same
 * listLinks service the REST API uses (its cursor, its validation). Each row shows the link's live state.
 * Tag and folder match whole values ignoring case, and suggest the account's own values as they are typed.
 */
import { hasScope } from "../auth/scopes.ts";
import { LINK_STATES, LINK_STATUSES } from "../../shared/enums.ts";
import { AppError, type FieldError } from "../../shared/errors.ts";
import type { LinkObject } from "../../shared/schemas.ts";
import { listDomains } from "../domains/service.ts";
import { exportLinks } from "../links/export.ts";
import { countLinks, listLinks } from "../links/service.ts";
import { errorSummary, fieldProblems, invalidAttrs, type FieldRefs } from "./form-errors.ts";
import { htmlResponse } from "./http.ts";
import { csrfField, esc, flashBox, fmtDate, layout } from "./layout.ts";
import { bulkCheckbox, bulkControls, bulkOutcome, type AllMatching } from "./links-bulk.ts";
import { linkHref, linkName, type LinkPage } from "./link-paths.ts";
import type { SignedInCtx } from "./session.ts";
import { stateBadge, stateLabel, stateReason } from "./state-badge.ts";
import { accountSuggestions, FOLDER_LIST_ID, suggestionLists, TAG_LIST_ID } from "./suggestions.ts";

const PAGE_SIZE = 25;
/** The list counts the links its filters match (for "all N links") up to this many: a bounded look, not a full count. */
const COUNT_SHOWN_MAX = 10_000;
const FILTERS = ["q", "tag", "folder", "status", "state", "domain"] as const;
type Filter = (typeof FILTERS)[number];
type Filters = Record<Filter, string>;

/** The filters' controls (their ids are their names), and the cursor, which a person cannot type. */
const FIELDS: FieldRefs = {
  "/q": { label: "Search", id: "q" },
  "/tag": { label: "Tag", id: "tag" },
  "/folder": { label: "Folder", id: "folder" },
  "/status": { label: "Status", id: "status" },
  "/state": { label: "State", id: "state" },
  "/domain": { label: "Domain", id: "domain" },
  "/cursor": { label: "The page link" },
};

/** The list URL for these filters (and cursor); empty values are left out. */
function listUrl(f: Filters, cursor?: string, path = "/dashboard/links", extra: Record<string, string> = {}): string {
  const p = new URLSearchParams(extra);
  for (const k of FILTERS) if (f[k]) p.set(k, f[k]);
  if (cursor) p.set("cursor", cursor);
  const qs = p.toString();
  return `${path}${qs ? `?${qs}` : ""}`;
}

/** The export links: every link the current filters match (all pages), as the API's export streams them. */
const exportLinksHtml = (f: Filters) =>
  `<span class="exports">Export: <a class="btn" href="${esc(listUrl(f, undefined, "/dashboard/links/export", { format: "csv" }))}" download>CSV</a> <a class="btn" href="${esc(listUrl(f, undefined, "/dashboard/links/export", { format: "json" }))}" download>JSON</a></span>`;

/** GET /dashboard/links/export: the API's export (same filters, same stream) behind the session. */
export const linksExport = (ctx: SignedInCtx): Promise<Response> => exportLinks(ctx.deps, ctx.caller, ctx.url.searchParams);

/**
 * `writes`: the caller may change links (a viewer may not: no boxes to tick, no edit or delete). `base`: the base
 * domain, whose links are named by slug alone; the others' pages and boxes name their domain too (link-paths.ts).
 */
function linkRow(l: LinkObject, f: Filters, i: number, writes: boolean, base: string): string {
  const href = (page: LinkPage) => esc(linkHref(l, base, page));
  const tags = l.tags.map((t) => `<a class="tag" href="${esc(listUrl({ ...f, tag: t }))}">${esc(t)}</a>`).join("");
  const folder = l.folder ? `<a href="${esc(listUrl({ ...f, folder: l.folder }))}">${esc(l.folder)}</a>` : '<span class="muted">—</span>';
  const hits = l.maxHits === null ? String(l.hits) : `${l.hits} / ${l.maxHits}`;
  const lock = l.hasPassword ? ' <span class="small muted" title="Password protected">(password)</span>' : "";
  return `<tr>
${writes ? `<td data-label="Select">${bulkCheckbox(linkName(l, base), i)}</td>` : ""}
<td data-label="Short link"><a class="mono" href="${href("stats")}">${esc(l.slug)}</a>${lock}${l.domain === base ? "" : `<br><span class="small muted">${esc(l.domain)}</span>`}<br><button type="button" class="btn-small" data-copy="${esc(l.shortUrl)}">Copy</button></td>
<td data-label="Destination" class="target"><a href="${esc(l.target)}" rel="noopener noreferrer" target="_blank">${esc(l.target)}</a></td>
<td data-label="Tags">${tags || '<span class="muted">—</span>'}</td>
<td data-label="Folder">${folder}</td>
<td data-label="State">${stateBadge(l)}${l.state === "live" ? "" : `<br><span class="small muted">${esc(stateReason(l))}</span>`}</td>
<td data-label="Clicks">${esc(hits)}</td>
<td data-label="Created">${fmtDate(l.createdAt)}</td>
<td><a href="${href("stats")}">Stats</a>${writes ? ` · <a href="${href("edit")}">Edit</a> · <a href="${href("delete")}">Delete</a>` : ""}</td>
</tr>`;
}

/** A filter's control attributes and messages: marked invalid and described by its message when it has one. */
const invalid = (errors: FieldError[], name: Filter) => invalidAttrs(errors, `/${name}`, name);
const problems = (errors: FieldError[], name: Filter) => fieldProblems(errors, `/${name}`, FIELDS[`/${name}`]);

/** A filter's select: "any", then each value (as `show` words it), the current one selected. */
function select(errors: FieldError[], name: "status" | "state" | "domain", values: readonly string[], current: string, show: (v: string) => string = (v) => v): string {
  const option = (v: string, text: string) => `<option value="${esc(v)}"${current === v ? " selected" : ""}>${esc(text)}</option>`;
  return `<div><label for="${name}">${FIELDS[`/${name}`].label}</label><select id="${name}" name="${name}"${invalid(errors, name)}>${option("", "any")}${values.map((v) => option(v, show(v))).join("")}</select>${problems(errors, name)}</div>`;
}

/** A text filter; tag and folder offer the account's values (`list`). */
function textFilter(errors: FieldError[], name: "q" | "tag" | "folder", value: string, attrs: string): string {
  return `<div${name === "q" ? ' class="q"' : ""}><label for="${name}">${FIELDS[`/${name}`].label}</label><input id="${name}" name="${name}" value="${esc(value)}" maxlength="500" ${attrs}${invalid(errors, name)}>${problems(errors, name)}</div>`;
}

/** `domains`: the base domain and the workspace's verified ones; the domain filter is offered only when there are several. */
function filterForm(f: Filters, errors: FieldError[], domains: string[]): string {
  return `<form method="get" action="/dashboard/links" class="card filters" role="search">
${textFilter(errors, "q", f.q, 'type="search" placeholder="slug or destination"')}
${textFilter(errors, "tag", f.tag, `list="${TAG_LIST_ID}" autocomplete="off"`)}
${textFilter(errors, "folder", f.folder, `list="${FOLDER_LIST_ID}" autocomplete="off"`)}
${select(errors, "status", LINK_STATUSES, f.status)}
${select(errors, "state", LINK_STATES, f.state, stateLabel)}
${domains.length > 1 ? select(errors, "domain", domains, f.domain) : ""}
<div><button type="submit">Filter</button></div></form>`;
}

/** Every link the filters match, for the bulk form's "all N links" (offered when they fill more than one page). */
async function allMatching(ctx: SignedInCtx, f: Filters): Promise<AllMatching> {
  const count = await countLinks(ctx.deps, ctx.caller, f, COUNT_SHOWN_MAX + 1);
  const filters = Object.fromEntries(FILTERS.filter((k) => f[k]).map((k) => [k, f[k]]));
  return { filters, count: Math.min(count, COUNT_SHOWN_MAX), capped: count > COUNT_SHOWN_MAX };
}

/** The domains the list can be filtered by: the base one, then the workspace's verified ones. */
async function domainChoices(ctx: SignedInCtx): Promise<string[]> {
  const verified = (await listDomains(ctx.deps, ctx.caller)).domains.filter((d) => d.state === "verified").map((d) => d.hostname);
  return [ctx.deps.config.defaultDomain, ...verified];
}

export async function linksIndex(ctx: SignedInCtx): Promise<Response> {
  const sp = ctx.url.searchParams;
  const f = Object.fromEntries(FILTERS.map((k) => [k, (sp.get(k) ?? "").trim()])) as Filters;
  const cursor = sp.get("cursor") ?? "";
  let result: { links: LinkObject[]; nextCursor: string | null } = { links: [], nextCursor: null };
  let problem = "";
  let errors: FieldError[] = [];
  try {
    result = await listLinks(ctx.deps, ctx.caller, { ...f, cursor, limit: PAGE_SIZE });
  } catch (e) {
    if (!(e instanceof AppError) || (e.code !== "invalid_input" && e.code !== "unknown_domain")) throw e;
    errors = e.errors ?? [];
    problem = errorSummary({ detail: e.message, errors }, FIELDS);
  }
  const filtered = FILTERS.some((k) => f[k]);
  const all = result.nextCursor || (cursor && result.links.length) ? await allMatching(ctx, f) : undefined;
  const writes = hasScope(ctx.caller, "links:write");
  const rows = result.links.map((l, i) => linkRow(l, f, i, writes, ctx.deps.config.defaultDomain)).join("");
  const empty = filtered || cursor ? "No links match these filters." : `No links yet.${writes ? ' <a href="/dashboard/links/new">Create your first one</a>.' : ""}`;
  const grid = `<table class="responsive"><thead><tr>${writes ? '<th><span class="muted">Select</span></th>' : ""}<th>Short link</th><th>Destination</th><th>Tags</th><th>Folder</th><th>State</th><th>Clicks</th><th>Created</th><th><span class="muted">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>`;
  const table = !result.links.length
    ? `<p class="card muted">${empty}</p>`
    : writes
      ? `<form method="post" action="/dashboard/links/bulk">${csrfField(ctx.session.csrfToken)}<input type="hidden" name="back" value="${esc(listUrl(f, cursor))}">${bulkControls(all)}
${grid}</form>`
      : grid;
  const pager = `<nav class="pager" aria-label="Pages">${cursor ? `<a href="${esc(listUrl(f))}">← First page</a>` : "<span></span>"}${
    result.nextCursor ? `<a href="${esc(listUrl(f, result.nextCursor))}">Next page →</a>` : ""}</nav>`;
  const body = `<div class="head"><h1>Links</h1><div>${exportLinksHtml(f)} ${writes ? '<a class="btn btn-primary" href="/dashboard/links/new">New link</a>' : ""}</div></div>${flashBox(sp.get("flash"))}${bulkOutcome(sp)}${problem}${filterForm(f, errors, await domainChoices(ctx))}
${filtered ? `<p class="small">Filtered. <a href="/dashboard/links">Show all links</a></p>` : ""}${table}${pager}${suggestionLists(await accountSuggestions(ctx))}`;
  return htmlResponse(200, layout({ title: "Links", body, viewer: ctx.viewer, current: "links" }));
}

/**
 * The audit log in the dashboard (issue #24): the same entries and filters as GET /api/v1/audit (one read function,
 * control/audit/read.ts), for the workspace's admins and owners (anyone else gets the 403 page). A table of when,
 * who, what and on what, newest first; filters by action, person (email), and days; a page of 50, then older ones.
 * Filters are a GET form, so a filtered view is a link one can share with another admin.
 */
import { AppError, type FieldError } from "../../shared/errors.ts";
import { AUDIT_ACTIONS } from "../audit/service.ts";
import { readAuditLog, type AuditEntryObject } from "../audit/read.ts";
import { errorSummary, fieldProblems, invalidAttrs, type FieldRefs } from "./form-errors.ts";
import { htmlResponse } from "./http.ts";
import { esc, fmtDate, layout } from "./layout.ts";
import type { SignedInCtx } from "./session.ts";

const FILTERS = ["action", "actor", "from", "to"] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

const FIELDS: FieldRefs = {
  "/action": { label: "Action", id: "action" },
  "/actor": { label: "Person", id: "actor" },
  "/from": { label: "From", id: "from" },
  "/to": { label: "To", id: "to" },
  "/cursor": { label: "The page link" },
};

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The page's filters as the read function takes them: a `to` day includes that whole day (the form picks days). */
function queryOf(f: Filters, cursor: string): Record<string, string> {
  const q: Record<string, string> = {};
  for (const k of FILTERS) if (f[k]) q[k] = f[k];
  if (DAY.test(q.to ?? "")) q.to = `${q.to}T23:59:59.999Z`;
  if (cursor) q.cursor = cursor;
  return q;
}

const pageUrl = (f: Filters, cursor?: string) => {
  const q = new URLSearchParams(Object.entries(f).filter(([, v]) => v));
  if (cursor) q.set("cursor", cursor);
  const s = q.toString();
  return `/dashboard/audit${s ? `?${s}` : ""}`;
};

/** Who: the person's email (or their account id once the account is gone) and the API key or app used; clink itself. */
function who(e: AuditEntryObject): string {
  if (e.actor.accountId === null) return '<span class="muted">clink</span>';
  const person = e.actor.email ? esc(e.actor.email) : `<span class="muted">deleted account ${esc(e.actor.accountId)}</span>`;
  // Neither: the dashboard, or the server's command line (create-key).
  const via = e.actor.keyId ? `API key <code>${esc(e.actor.keyId)}</code>` : e.actor.grantId ? "a connected application" : "";
  return via ? `${person}<br><span class="small muted">${via}</span>` : person;
}

/** On what: the slug, hostname, name or client the detail names, else the target's kind and id. */
function onWhat(e: AuditEntryObject): string {
  const d = e.detail;
  const named = [d.slug, d.hostname, d.name, d.client, d.host].find((v) => typeof v === "string") as string | undefined;
  if (named) return `${esc(named)}${e.target ? `<br><span class="small muted">${esc(e.target.type)}</span>` : ""}`;
  if (e.target) return `<span class="muted">${esc(e.target.type)}</span> <code>${esc(e.target.id)}</code>`;
  return '<span class="muted">—</span>';
}

/** The rest of the detail, as short "key: value" pieces (field lists, counts, roles). */
function details(e: AuditEntryObject): string {
  const shown = new Set(["slug", "hostname", "name", "client", "host"]);
  const text = (v: unknown): string => (Array.isArray(v) ? v.map(text).join(", ") : typeof v === "object" && v !== null ? JSON.stringify(v) : String(v));
  return Object.entries(e.detail).filter(([k]) => !shown.has(k)).map(([k, v]) => `<span class="small">${esc(k)}: ${esc(text(v))}</span>`).join("<br>");
}

function row(e: AuditEntryObject): string {
  return `<tr><td data-label="When">${fmtDate(e.at)}</td><td data-label="Who">${who(e)}</td><td data-label="What"><code>${esc(e.action)}</code></td>
<td data-label="On what">${onWhat(e)}</td><td data-label="Details">${details(e) || '<span class="muted">—</span>'}</td></tr>`;
}

function filterForm(f: Filters, errors: FieldError[]): string {
  const problems = (name: string) => fieldProblems(errors, `/${name}`, FIELDS[`/${name}`]!);
  const invalid = (name: string) => invalidAttrs(errors, `/${name}`, name);
  const option = (v: string, text: string) => `<option value="${esc(v)}"${f.action === v ? " selected" : ""}>${esc(text)}</option>`;
  const input = (name: "actor" | "from" | "to", attrs: string) =>
    `<div><label for="${name}">${FIELDS[`/${name}`]!.label}</label><input id="${name}" name="${name}" value="${esc(f[name])}" ${attrs}${invalid(name)}>${problems(name)}</div>`;
  return `<form method="get" action="/dashboard/audit" class="card filters" role="search">
<div><label for="action">Action</label><select id="action" name="action"${invalid("action")}>${option("", "any")}${AUDIT_ACTIONS.map((a) => option(a, a)).join("")}</select>${problems("action")}</div>
${input("actor", 'type="email" maxlength="320" placeholder="email" autocomplete="off"')}
${input("from", 'type="date"')}
${input("to", 'type="date"')}
<div><button type="submit">Filter</button></div></form>`;
}

export async function auditIndex(ctx: SignedInCtx): Promise<Response> {
  const sp = ctx.url.searchParams;
  const f = Object.fromEntries(FILTERS.map((k) => [k, (sp.get(k) ?? "").trim()])) as Filters;
  const cursor = sp.get("cursor") ?? "";
  let page: { entries: AuditEntryObject[]; nextCursor: string | null } = { entries: [], nextCursor: null };
  let errors: FieldError[] = [];
  let problem = "";
  try {
    page = await readAuditLog(ctx.deps, ctx.caller, queryOf(f, cursor));
  } catch (e) {
    if (!(e instanceof AppError) || (e.code !== "invalid_parameter" && e.code !== "invalid_range")) throw e;
    errors = e.errors ?? [];
    problem = errorSummary({ detail: e.message, errors }, FIELDS);
  }
  const filtered = FILTERS.some((k) => f[k]);
  const table = page.entries.length
    ? `<table class="responsive"><caption class="sr-only">Audit log entries, newest first</caption><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">On what</th><th scope="col">Details</th></tr></thead><tbody>${page.entries.map(row).join("")}</tbody></table>`
    : `<p class="muted">${problem ? "" : filtered ? "No entry matches these filters." : "Nothing recorded yet."}</p>`;
  const pager = `<nav class="pager" aria-label="Pages">${cursor ? `<a href="${esc(pageUrl(f))}">← Newest</a>` : "<span></span>"}${
    page.nextCursor ? `<a href="${esc(pageUrl(f, page.nextCursor))}">Older entries →</a>` : ""}</nav>`;
  const days = ctx.deps.config.auditRetentionDays;
  const body = `<h1>Audit log</h1>
<p class="muted">Who changed links, keys, domains, webhooks and members of this workspace, and who signed in. ${days > 0 ? `Entries are kept ${days} days.` : "Entries are kept for ever."} The same log is at <code>GET /api/v1/audit</code>.</p>
${problem}${filterForm(f, errors)}
${filtered ? `<p class="small">Filtered. <a href="/dashboard/audit">Show everything</a></p>` : ""}${table}${pager}`;
  return htmlResponse(problem ? 400 : 200, layout({ title: "Audit log", body, viewer: ctx.viewer }));
}

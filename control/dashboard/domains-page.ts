/**
 * Custom domains in the dashboard (docs/domains.md), reached from the API keys page like webhooks: the list with
 * each domain's state, what to publish for its check and the last check's result; add, verify (runs the check now)
 * and delete (its links deleted or moved to the base domain in the same step, or refused); make a verified one the
 * workspace's default domain (where new links go when none is chosen) or go back to the base domain. Every action is
 * the REST API's own service function.
 */
import { roleAtLeast } from "../auth/roles.ts";
import { AppError } from "../../shared/errors.ts";
import type { DomainObject } from "../../shared/domain.ts";
import * as domains from "../domains/service.ts";
import { getWorkspace, updateWorkspace } from "../workspaces/service.ts";
import { errorSummary, fieldProblems, invalidAttrs, type FieldRefs, type FormProblem } from "./form-errors.ts";
import { field, htmlResponse, redirect } from "./http.ts";
import { csrfField, esc, fmtDate, layout } from "./layout.ts";
import type { FormCtx, SignedInCtx } from "./session.ts";

const FIELDS: FieldRefs = { "/hostname": { label: "Domain", id: "domain-hostname" }, "/method": { label: "Verification", id: "domain-method" } };
const LIST = "/dashboard/domains";
const domainPath = (id: string) => `${LIST}/${encodeURIComponent(id)}`;
const DEFAULT_ACTION = `${LIST}/default`;

interface IndexView {
  list: DomainObject[];
  /** The workspace's live default domain; null: the base domain. */
  defaultDomain: string | null;
  error?: FormProblem;
  hostname?: string;
  method?: string;
}

function challenge(d: DomainObject): string {
  const c = d.challenge;
  return c.method === "dns"
    ? `TXT record <code>${esc(c.name)}</code> with the value <code>${esc(c.value)}</code>`
    : `a file at <code>${esc(c.url)}</code> holding <code>${esc(c.body)}</code>`;
}

/** The form that makes `hostname` the workspace's default domain ("": back to the base domain). */
const defaultForm = (csrf: string, hostname: string, label: string) =>
  `<form method="post" action="${DEFAULT_ACTION}" class="inline">${csrfField(csrf)}<input type="hidden" name="hostname" value="${esc(hostname)}"><button type="submit" class="btn-small">${label}</button></form>`;

/** `admin`: the caller manages domains (admins and owners; others see the list, not its controls). */
function row(d: DomainObject, csrf: string, admin: boolean, isDefault: boolean): string {
  const check = d.lastCheck ? `${d.lastCheck.ok ? "passed" : "failed"} ${fmtDate(d.lastCheck.at)}: ${esc(d.lastCheck.result)}` : '<span class="muted">not checked yet</span>';
  const verify = `<form method="post" action="${domainPath(d.id)}/verify" class="inline">${csrfField(csrf)}<button type="submit" class="btn-small">Verify now</button></form>`;
  const remove = `<form method="post" action="${domainPath(d.id)}/delete" class="inline" data-confirm="Delete ${esc(d.hostname)}?">${csrfField(csrf)}
<label class="inline" for="links-${esc(d.id)}">Its links</label> <select id="links-${esc(d.id)}" name="links"><option value="">keep (refuse if any)</option><option value="delete">delete them</option><option value="base">move to the base domain</option></select>
<button type="submit" class="btn-danger btn-small">Delete</button></form>`;
  const makeDefault = d.state === "verified" && !isDefault ? ` ${defaultForm(csrf, d.hostname, "Make default")}` : "";
  const badge = isDefault ? ' <span class="status status-active">Default</span>' : "";
  return `<tr><td data-label="Domain"><span class="mono">${esc(d.hostname)}</span>${badge}</td>
<td data-label="State"><span class="status ${d.state === "verified" ? "status-active" : "status-revoked"}">${d.state}</span></td>
<td data-label="Publish">${challenge(d)}</td><td data-label="Last check">${check}</td><td>${admin ? `${verify}${makeDefault} ${remove}` : ""}</td></tr>`;
}

function indexPage(ctx: SignedInCtx, v: IndexView): string {
  const csrf = ctx.session.csrfToken;
  const errors = v.error?.errors ?? [];
  const method = v.method ?? "dns";
  const admin = roleAtLeast(ctx.caller.role, "admin");
  const table = v.list.length
    ? `<table class="responsive"><thead><tr><th>Domain</th><th>State</th><th>To verify, publish</th><th>Last check</th><th><span class="muted">Actions</span></th></tr></thead><tbody>${v.list.map((d) => row(d, csrf, admin, d.hostname === v.defaultDomain)).join("")}</tbody></table>`
    : `<p class="muted">No custom domains yet.</p>`;
  const body = `<h1>Domains</h1>
<p class="muted">A domain of yours (such as go.example.com) serves your links once verified: point it at this server, publish what its row says, then verify. New links can be put on it.</p>
${v.error ? errorSummary(v.error, FIELDS) : ""}
${!admin ? `<p class="card">Admins and owners of the workspace add, verify and delete its domains.</p>` : `<form method="post" action="${LIST}" class="card">${csrfField(csrf)}
<label for="domain-hostname">Domain</label>
<input id="domain-hostname" name="hostname" required maxlength="253" placeholder="go.example.com" value="${esc(v.hostname ?? "")}"${invalidAttrs(errors, "/hostname", "domain-hostname")}>${fieldProblems(errors, "/hostname", FIELDS["/hostname"])}
<label for="domain-method">Verification</label>
<select id="domain-method" name="method"><option value="dns"${method === "dns" ? " selected" : ""}>DNS TXT record</option><option value="http"${method === "http" ? " selected" : ""}>HTTP file</option></select>
<button type="submit" class="btn-primary">Add domain</button>
</form>`}
<h2>Your domains</h2>
<p>New links go on ${v.defaultDomain ? `<span class="mono">${esc(v.defaultDomain)}</span>, the default domain,` : "the base domain"} unless another is chosen.${v.defaultDomain && admin ? ` ${defaultForm(csrf, "", "Use the base domain")}` : ""}</p>
${table}`;
  return layout({ title: "Domains", body, viewer: ctx.viewer, current: "keys" });
}

async function page(ctx: SignedInCtx, status: number, v: Omit<IndexView, "list" | "defaultDomain">): Promise<Response> {
  const { domains: list } = await domains.listDomains(ctx.deps, ctx.caller);
  const { defaultDomain } = await getWorkspace(ctx.deps, ctx.caller);
  return htmlResponse(status, indexPage(ctx, { ...v, list, defaultDomain }));
}

export const domainsIndex = (ctx: SignedInCtx): Promise<Response> => page(ctx, 200, {});

export async function addDomainAction({ ctx, form }: FormCtx<SignedInCtx>): Promise<Response> {
  const hostname = field(form, "hostname");
  const method = field(form, "method") || undefined;
  try {
    await domains.createDomain(ctx.deps, ctx.caller, { hostname, method });
    return redirect(LIST);
  } catch (err) {
    if (!(err instanceof AppError) || (err.code !== "invalid_input" && err.code !== "domain_taken")) throw err;
    const errors = err.errors ?? [{ path: "/hostname", message: err.message }];
    return page(ctx, err.status, { hostname, method, error: { detail: err.message, errors } });
  }
}

export async function verifyDomainAction({ ctx }: FormCtx<SignedInCtx>): Promise<Response> {
  await domains.verifyDomain(ctx.deps, ctx.caller, ctx.params.id ?? "");
  return redirect(LIST);
}

export async function deleteDomainAction({ ctx, form }: FormCtx<SignedInCtx>): Promise<Response> {
  const links = field(form, "links");
  const query = links === "delete" ? { links } : links === "base" ? { moveTo: "base" } : {};
  try {
    await domains.deleteDomain(ctx.deps, ctx.caller, ctx.params.id ?? "", query);
    return redirect(LIST);
  } catch (err) {
    if (!(err instanceof AppError) || (err.code !== "domain_has_links" && err.code !== "domain_slug_conflict")) throw err;
    return page(ctx, err.status, { error: { detail: err.message, errors: [] } });
  }
}

/** Makes a verified domain the workspace's default domain, or (a blank hostname) goes back to the base domain. */
export async function defaultDomainAction({ ctx, form }: FormCtx<SignedInCtx>): Promise<Response> {
  const hostname = field(form, "hostname");
  try {
    await updateWorkspace(ctx.deps, ctx.caller, { defaultDomain: hostname || null });
    return redirect(LIST);
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== "unknown_domain") throw err;
    return page(ctx, err.status, { error: { detail: err.message, errors: [] } });
  }
}

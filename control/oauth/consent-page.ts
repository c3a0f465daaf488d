/**
 * The consent page (under /dashboard, where the session cookie is sent): who asks, where the answer goes, what it may
 * do, allow or deny. The form carries the authorization request on, is checked again when posted (nothing in it is
 * trusted), and needs the session's CSRF token and our Origin like every dashboard form (withSessionForm).
 */
import { SCOPE_DESCRIPTIONS, type Scope } from "../../shared/enums.ts";
import { CSP, field, htmlResponse } from "../dashboard/http.ts";
import { csrfField, errorPage, esc, layout } from "../dashboard/layout.ts";
import type { FormCtx, SignedInCtx } from "../dashboard/session.ts";
import {
  approve, AUTHORIZE_PARAMS, checkAuthorizationRequest, deny, earlierScopes, withEarlier, type AuthorizationRequest, type AuthorizeCheck,
} from "./authorize.ts";

const RESOURCE_WORDS = { mcp: "the MCP server (assistant tools)", api: "the REST API" } as const;

/** Where the browser is sent after the form: 303 to the client (its origin is let through the page's form-action). */
const toClient = (location: string) => new Response(null, { status: 303, headers: { location, "cache-control": "no-store" } });

/** A refused request: a page of ours, or the error at the client's checked redirect URI. */
function refused(ctx: SignedInCtx, check: Exclude<AuthorizeCheck, { ok: true }>): Response {
  return "location" in check ? toClient(check.location) : errorPage(400, "This application cannot connect", check.page, ctx.viewer);
}

function returnsTo(uri: string): string {
  const u = new URL(uri);
  if (u.protocol === "http:") return `<span class="mono">${esc(u.host)}</span> <span class="muted">(an application on this computer)</span>`;
  if (u.protocol === "https:") return `<span class="mono">${esc(u.host)}</span>`;
  return `<span class="mono">${esc(u.protocol)}</span> <span class="muted">(an application installed on this device)</span>`;
}

/** The workspace the session works in, which the connection will act for (switch first to connect another). */
const workspaceName = (ctx: SignedInCtx): string => ctx.viewer.workspaces?.all.find((w) => w.id === ctx.caller.workspaceId)?.name ?? "Personal";

function consentHtml(ctx: SignedInCtx, r: AuthorizationRequest, earlier: Scope[], params: URLSearchParams): string {
  const c = r.client;
  const who = c.verifiedHost
    ? `<span class="muted">published by</span> <strong>${esc(c.verifiedHost)}</strong>`
    : `<span class="muted">(a name the application gave itself: not verified${c.clientUri ? `; it says it is from ${esc(c.clientUri)}` : ""})</span>`;
  const hidden = AUTHORIZE_PARAMS.filter((n) => params.get(n) !== null)
    .map((n) => `<input type="hidden" name="${n}" value="${esc(params.get(n))}">`)
    .join("");
  const scopes = r.scopes
    .map((s) => `<li><strong>${esc(SCOPE_DESCRIPTIONS[s])}</strong> <code class="small">${esc(s)}</code>${earlier.includes(s) ? ' <span class="small muted">(already allowed)</span>' : ""}</li>`)
    .join("");
  const body = `<h1>Connect “${esc(c.name)}”?</h1>
<section class="card" aria-labelledby="consent-who">
<h2 id="consent-who" class="sr-only">The application</h2>
<dl class="facts"><dt>Application</dt><dd><strong>${esc(c.name)}</strong> ${who}</dd>
<dt>Returns to</dt><dd>${returnsTo(r.redirectUri)}</dd>
<dt>Uses</dt><dd>${RESOURCE_WORDS[r.resourceKind]} <span class="mono small">${esc(r.resource)}</span></dd>
<dt>Account</dt><dd>${esc(ctx.account.email)}</dd>
<dt>Workspace</dt><dd>${esc(workspaceName(ctx))} <span class="small muted">(as your role there allows)</span></dd></dl>
<h2>It will be able to</h2><ul>${scopes}</ul>
<p class="small muted">Allow only applications you started yourself. You can disconnect it at any time under <a href="/dashboard/apps">Connected applications</a>.</p>
<form method="post" action="/dashboard/authorize">${csrfField(ctx.session.csrfToken)}${hidden}
<div class="actions"><button type="submit" name="decision" value="allow" class="btn-primary">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button></div></form>
</section>`;
  return layout({ title: `Connect ${c.name}`, body, viewer: ctx.viewer, narrow: true });
}

/**
 * The page's CSP lets its form lead to the client's redirect URI: browsers apply form-action to the redirect that
 * follows a form post, and the answer to this one goes to the client.
 */
function withFormAction(res: Response, redirectUri: string): Response {
  const u = new URL(redirectUri);
  const target = u.protocol === "http:" || u.protocol === "https:" ? u.origin : u.protocol;
  res.headers.set("content-security-policy", CSP.replace("form-action 'self'", `form-action 'self' ${target}`));
  return res;
}

export async function consentPage(ctx: SignedInCtx): Promise<Response> {
  const check = await checkAuthorizationRequest(ctx.deps, ctx.url.searchParams);
  if (!check.ok) return refused(ctx, check);
  const earlier = await earlierScopes(ctx.deps, ctx.account.id, check.request);
  const html = consentHtml(ctx, withEarlier(check.request, earlier), earlier, ctx.url.searchParams);
  return withFormAction(htmlResponse(200, html), check.request.redirectUri);
}

export async function consentDecision({ ctx, form }: FormCtx<SignedInCtx>): Promise<Response> {
  const params = new URLSearchParams();
  for (const n of AUTHORIZE_PARAMS) for (const v of form.getAll(n)) params.append(n, v);
  const check = await checkAuthorizationRequest(ctx.deps, params);
  if (!check.ok) return refused(ctx, check);
  if (field(form, "decision") !== "allow") return toClient(deny(ctx.deps, check.request));
  const earlier = await earlierScopes(ctx.deps, ctx.account.id, check.request);
  return toClient(await approve(ctx.deps, ctx.account.id, withEarlier(check.request, earlier), ctx.caller.workspaceId));
}

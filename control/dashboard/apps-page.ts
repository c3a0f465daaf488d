/**
 * Connected applications (issue #23): every OAuth grant of the account not revoked (the assistants and apps it
 * allowed), with what each may do and when it was last used, and a button that disconnects one: its tokens stop
 * working at once here and within a second in every process (control/oauth/grants.ts).
 */
import { SCOPE_DESCRIPTIONS } from "../../shared/enums.ts";
import { disconnectApp, listConnectedApps, type ConnectedApp } from "../oauth/grants.ts";
import { htmlResponse, redirect } from "./http.ts";
import { csrfField, esc, fmtDate, layout } from "./layout.ts";
import type { FormCtx, SignedInCtx } from "./session.ts";

/** The client's host when its client_id is its metadata document's URL; a dynamically registered one has none. */
const publisher = (clientId: string): string =>
  clientId.startsWith("https://") && URL.canParse(clientId) ? `<span class="small muted">${esc(new URL(clientId).host)}</span>` : "";

function appRow(a: ConnectedApp, csrf: string): string {
  const scopes = a.scopes.map((s) => `<span class="chip" title="${esc(SCOPE_DESCRIPTIONS[s])}">${esc(s)}</span>`).join(" ");
  const uses = a.resource.endsWith("/mcp") ? "MCP" : "REST API";
  return `<tr><td data-label="Application">${esc(a.clientName)} ${publisher(a.clientId)}</td><td data-label="Uses">${uses}</td>
<td data-label="May">${scopes}</td><td data-label="Connected">${fmtDate(a.createdAt)}</td>
<td data-label="Last used">${a.lastUsedAt ? fmtDate(a.lastUsedAt) : '<span class="muted">never</span>'}</td>
<td><form method="post" action="/dashboard/apps/${encodeURIComponent(a.id)}/revoke" class="inline" data-confirm="Disconnect “${esc(a.clientName)}”? It stops working immediately and must ask again.">${csrfField(csrf)}<button type="submit" class="btn-danger btn-small">Disconnect</button></form></td></tr>`;
}

export async function appsIndex(ctx: SignedInCtx): Promise<Response> {
  const apps = await listConnectedApps(ctx.deps, ctx.account.id);
  const flash = ctx.url.searchParams.get("flash") === "disconnected" ? `<p class="flash" role="status">Application disconnected. Its tokens are refused from now on.</p>` : "";
  const table = apps.length
    ? `<table class="responsive"><thead><tr><th>Application</th><th>Uses</th><th>May</th><th>Connected</th><th>Last used</th><th><span class="muted">Actions</span></th></tr></thead><tbody>${apps.map((a) => appRow(a, ctx.session.csrfToken)).join("")}</tbody></table>`
    : `<p class="muted">No application is connected. Assistants such as Claude, Cursor or VS Code connect here when you add this server's MCP address (<code>${esc(ctx.deps.config.baseUrl)}/mcp</code>) and sign in.</p>`;
  const body = `<h1>Connected applications</h1>${flash}
<p class="muted">Applications you allowed to use your account with OAuth. They hold short-lived tokens, never your password or an API key. Keys are on the <a href="/dashboard/keys">API keys</a> page.</p>${table}`;
  return htmlResponse(200, layout({ title: "Connected applications", body, viewer: ctx.viewer, current: "keys" }));
}

export async function revokeApp({ ctx }: FormCtx<SignedInCtx>): Promise<Response> {
  await disconnectApp(ctx.deps, ctx.account.id, ctx.params.id ?? "");
  return redirect("/dashboard/apps?flash=disconnected");
}

/**
 * API keys (design §6): create, list, revoke. Every form posts and redirects (a reload never creates a second
 * key); the new key is handed to the page after the redirect once (new-key-handoff.ts), never stored in full.
 * Revocation goes through the API's own KeyAuthenticator so its cache forgets the key at once.
 */
import { roleAtLeast } from "../auth/roles.ts";
import { SCOPE_DESCRIPTIONS, SCOPES } from "../../shared/enums.ts";
import { AppError } from "../../shared/errors.ts";
import { createApiKey, listApiKeys, type ApiKeyView, type KeyAuthenticator } from "../keys/service.ts";
import { errorIdOf, errorSummary, fieldProblems, invalidAttrs, type FieldRefs, type FormProblem } from "./form-errors.ts";
import { field, htmlResponse, redirect } from "./http.ts";
import { csrfField, esc, flashBox, fmtDate, layout } from "./layout.ts";
import { handOffCookie, takeNewKey } from "./new-key-handoff.ts";
import type { FormCtx, SignedInCtx } from "./session.ts";

interface KeysView {
  keys: ApiKeyView[];
  created?: { id: string; key: string; name: string } | null;
  error?: FormProblem;
  name?: string;
  /** The boxes ticked when the form is shown again; every scope at first. */
  scopes?: readonly string[];
  flash?: string | null;
}

const scopeBoxId = (scope: string) => `key-scope-${scope.replace(":", "-")}`;
/** The scopes' problems link to the first box (GOV.UK's pattern for a group of checkboxes). */
const FIELDS: FieldRefs = { "/name": { label: "Name", id: "key-name" }, "/scopes": { label: "What it may do", id: scopeBoxId(SCOPES[0]) } };

/**
 * Sent with the boxes, so that a form with every box unticked is refused (no scope) rather than read as a post
 * that names none (every scope, as create-key without --scope).
 */
const SCOPES_SHOWN = "scopesShown";

/** A box per scope, labelled with what it lets the key do; all ticked by default. */
function scopeBoxes(chosen: readonly string[], errors: FormProblem["errors"]): string {
  const boxes = SCOPES.map((s) => {
    const id = scopeBoxId(s);
    return `<label class="check" for="${id}"><input type="checkbox" id="${id}" name="scope" value="${s}"${chosen.includes(s) ? " checked" : ""}><span><code>${s}</code>: ${esc(SCOPE_DESCRIPTIONS[s])}</span></label>`;
  }).join("\n");
  const invalid = errors.some((e) => e.path === "/scopes");
  return `<input type="hidden" name="${SCOPES_SHOWN}" value="1">
<fieldset id="key-scopes"${invalid ? ` aria-invalid="true" aria-describedby="${errorIdOf(FIELDS["/scopes"].id!)}"` : ""}><legend>What it may do</legend>
${boxes}</fieldset>${fieldProblems(errors, "/scopes", FIELDS["/scopes"])}`;
}

/** The scopes a posted form asks for: the ticked boxes, or undefined for a post without the boxes (every scope). */
function postedScopes(form: URLSearchParams): string[] | undefined {
  return form.has(SCOPES_SHOWN) || form.has("scope") ? form.getAll("scope") : undefined;
}

/** The key made just now, once; with what it may do (its row in `keys`). */
function newKeyBox(created: { id: string; key: string; name: string }, keys: ApiKeyView[]): string {
  const scopes = keys.find((k) => k.id === created.id)?.scopes ?? [];
  return `<section class="once" aria-labelledby="new-key-title">
<h2 id="new-key-title">Your new API key “${esc(created.name)}”</h2>
<p><strong>Copy it now: you will not see it again.</strong> Only a hash is stored, so it cannot be shown later; if you lose it, revoke it and create another.</p>
<div class="copyrow"><input id="new-key" class="mono" readonly value="${esc(created.key)}" aria-label="New API key">
<button type="button" class="btn-primary" data-copy="${esc(created.key)}">Copy</button></div>
<p class="small muted">Use it as <code>Authorization: Bearer ${esc(created.key.slice(0, 7))}…</code> with the REST API (<code>/api/v1</code>) and the MCP server (<code>/mcp</code>). It may: ${scopes.map((s) => `<code>${s}</code>`).join(" ")}.</p>
</section>`;
}

function keyRow(k: ApiKeyView, csrf: string): string {
  const status = k.revokedAt
    ? `<span class="status status-revoked">revoked</span> <span class="small muted">${fmtDate(k.revokedAt)}</span>`
    : `<span class="status status-active">active</span>`;
  const action = k.revokedAt
    ? ""
    : `<form method="post" action="/dashboard/keys/${encodeURIComponent(k.id)}/revoke" class="inline" data-confirm="Revoke the key “${esc(k.name)}”? Anything using it stops working immediately.">${csrfField(csrf)}<button type="submit" class="btn-danger btn-small">Revoke</button></form>`;
  return `<tr><td data-label="Name">${esc(k.name)}</td><td data-label="Key" class="mono">${esc(k.prefix)}…</td>
<td data-label="Scopes">${k.scopes.map((s) => `<code>${s}</code>`).join(" ")}</td>
<td data-label="Created">${fmtDate(k.createdAt)}</td><td data-label="Last used">${k.lastUsedAt ? fmtDate(k.lastUsedAt) : '<span class="muted">never</span>'}</td>
<td data-label="Status">${status}</td><td>${action}</td></tr>`;
}

function keysPage(ctx: SignedInCtx, v: KeysView): string {
  const csrf = ctx.session.csrfToken;
  const errors = v.error?.errors ?? [];
  const rows = v.keys.map((k) => keyRow(k, csrf)).join("");
  const table = v.keys.length
    ? `<table class="responsive"><thead><tr><th>Name</th><th>Key</th><th>Scopes</th><th>Created</th><th>Last used</th><th>Status</th><th><span class="muted">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>`
    : `<p class="muted">No API keys yet.</p>`;
  const body = `<h1>API keys</h1>${flashBox(v.flash ?? null)}${v.created ? newKeyBox(v.created, v.keys) : ""}
<p class="muted">Keys authenticate the REST API and the MCP server. Treat them like passwords.${roleAtLeast(ctx.caller.role, "admin") ? ' To have your own systems told when links change or are clicked, add <a href="/dashboard/webhooks">webhook endpoints</a>.' : ""} Assistants you signed in with OAuth are under <a href="/dashboard/apps">Connected applications</a>. Your own short domains are under <a href="/dashboard/domains">Domains</a>.</p>
<form method="post" action="/dashboard/keys" class="card">${csrfField(csrf)}
${v.error ? errorSummary(v.error, FIELDS) : ""}
<label for="key-name">New key name <span class="hint">(e.g. “laptop” or “Claude”)</span></label>
<input id="key-name" name="name" required maxlength="80" value="${esc(v.name ?? "")}"${invalidAttrs(errors, "/name", "key-name")}>${fieldProblems(errors, "/name", FIELDS["/name"])}
${scopeBoxes(v.scopes ?? SCOPES, errors)}
<button type="submit" class="btn-primary">Create key</button>
</form>
<h2>Your keys</h2>${table}`;
  return layout({ title: "API keys", body, viewer: ctx.viewer, current: "keys" });
}

/** The list; right after a key was created (and only then), the key itself, once. */
export async function keysIndex(ctx: SignedInCtx): Promise<Response> {
  const { created, setCookie } = await takeNewKey(ctx, "apiKey");
  const keys = await listApiKeys(ctx.deps, ctx.caller);
  return htmlResponse(200, keysPage(ctx, { keys, created, flash: ctx.url.searchParams.get("flash") }), { "set-cookie": setCookie });
}

/** Creates the key and redirects to the list, which shows it once; a name the API refuses shows the form again. */
export async function createKey({ ctx, form }: FormCtx<SignedInCtx>): Promise<Response> {
  const name = field(form, "name");
  const scopes = postedScopes(form);
  try {
    const { key, view } = await createApiKey(ctx.deps, ctx.caller, name, scopes);
    return redirect("/dashboard/keys", [handOffCookie(ctx, { kind: "apiKey", id: view.id, name: view.name, key })]);
  } catch (e) {
    if (!(e instanceof AppError) || e.code !== "invalid_input") throw e;
    const keys = await listApiKeys(ctx.deps, ctx.caller);
    // A scope the boxes do not offer (a forged post) is a problem of the boxes as a whole.
    const errors = (e.errors ?? []).map((x) => (x.path.startsWith("/scopes/") ? { ...x, path: "/scopes" } : x));
    return htmlResponse(400, keysPage(ctx, { keys, name, scopes, error: { detail: e.message, errors } }));
  }
}

export const revokeKey = (auth: KeyAuthenticator) => async ({ ctx }: FormCtx<SignedInCtx>): Promise<Response> => {
  await auth.revoke(ctx.caller, ctx.params.id ?? "");
  return redirect("/dashboard/keys?flash=revoked");
};

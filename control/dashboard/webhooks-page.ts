/**
 * Event webhook endpoints in the dashboard (docs/webhooks.md), reached from the API keys page (the header's links
 * must fit one row on a phone, so webhooks are not among them): list and create (the secret shown once, handed
 * across the POST-redirect-GET in the keys page's sealed cookie, new-key-handoff.ts), an endpoint's delivery log
 * with "send again", pause/resume and delete. Every action is the REST API's own service function.
 */
import { AppError } from "../../shared/errors.ts";
import { WEBHOOK_EVENT_TYPES } from "../../shared/ports.ts";
import * as webhooks from "../webhooks/service.ts";
import { errorSummary, fieldProblems, invalidAttrs, type FieldRefs, type FormProblem } from "./form-errors.ts";
import { field, htmlResponse, redirect } from "./http.ts";
import { csrfField, esc, fmtDate, layout } from "./layout.ts";
import { handOffCookie, takeNewKey } from "./new-key-handoff.ts";
import type { FormCtx, SignedInCtx } from "./session.ts";

const FIELDS: FieldRefs = { "/url": { label: "URL", id: "hook-url" }, "/events": { label: "Events", id: "hook-events" } };

interface IndexView {
  endpoints: webhooks.EndpointView[];
  created?: { id: string; url: string; secret: string } | null;
  error?: FormProblem;
  url?: string;
  events?: string[];
}

function secretBox(c: { url: string; secret: string }): string {
  return `<section class="once" aria-labelledby="new-secret-title">
<h2 id="new-secret-title">Signing secret for ${esc(c.url)}</h2>
<p><strong>Copy it now: you will not see it again.</strong> Verify each delivery's <code>webhook-signature</code> with it (Standard Webhooks).</p>
<div class="copyrow"><input id="new-secret" class="mono" readonly value="${esc(c.secret)}" aria-label="Signing secret">
<button type="button" class="btn-primary" data-copy="${esc(c.secret)}">Copy</button></div>
</section>`;
}

const hookPath = (id: string) => `/dashboard/webhooks/${encodeURIComponent(id)}`;
const state = (active: boolean) => `<span class="status ${active ? "status-active" : "status-revoked"}">${active ? "active" : "paused"}</span>`;

function indexPage(ctx: SignedInCtx, v: IndexView): string {
  const csrf = ctx.session.csrfToken;
  const errors = v.error?.errors ?? [];
  const chosen = new Set(v.events ?? WEBHOOK_EVENT_TYPES);
  const boxes = WEBHOOK_EVENT_TYPES.map((t) => `<label class="inline"><input type="checkbox" name="events" value="${t}"${chosen.has(t) ? " checked" : ""}> ${t}</label>`).join(" ");
  const rows = v.endpoints.map((e) => `<tr><td data-label="URL" class="mono"><a href="${hookPath(e.id)}">${esc(e.url)}</a></td>
<td data-label="Events">${esc(e.events.join(", "))}</td><td data-label="State">${state(e.active)}</td><td data-label="Created">${fmtDate(e.createdAt)}</td></tr>`).join("");
  const table = v.endpoints.length
    ? `<table class="responsive"><thead><tr><th>URL</th><th>Events</th><th>State</th><th>Created</th></tr></thead><tbody>${rows}</tbody></table>`
    : `<p class="muted">No webhook endpoints yet.</p>`;
  const body = `<h1>Webhooks</h1>${v.created ? secretBox(v.created) : ""}
<p class="muted">Endpoints receive link.created, link.updated, link.deleted and link.clicked, signed and retried for a day.</p>
<form method="post" action="/dashboard/webhooks" class="card">${csrfField(csrf)}
${v.error ? errorSummary(v.error, FIELDS) : ""}
<label for="hook-url">Endpoint URL</label>
<input id="hook-url" name="url" type="url" required maxlength="2048" value="${esc(v.url ?? "")}"${invalidAttrs(errors, "/url", "hook-url")}>${fieldProblems(errors, "/url", FIELDS["/url"])}
<fieldset id="hook-events"><legend>Events</legend>${boxes}</fieldset>${fieldProblems(errors, "/events", FIELDS["/events"])}
<button type="submit" class="btn-primary">Add endpoint</button>
</form>
<h2>Your endpoints</h2>${table}`;
  return layout({ title: "Webhooks", body, viewer: ctx.viewer, current: "keys" });
}

/** The list; right after an endpoint was created (and only then), its secret, once. */
export async function webhooksIndex(ctx: SignedInCtx): Promise<Response> {
  const { created, setCookie } = await takeNewKey(ctx, "webhookSecret");
  const shown = created ? { id: created.id, url: created.name, secret: created.key } : null;
  const { endpoints } = await webhooks.listEndpoints(ctx.deps, ctx.caller);
  return htmlResponse(200, indexPage(ctx, { endpoints, created: shown }), { "set-cookie": setCookie });
}

export async function createWebhookAction({ ctx, form }: FormCtx<SignedInCtx>): Promise<Response> {
  const url = field(form, "url");
  const events = form.getAll("events");
  try {
    const e = await webhooks.createEndpoint(ctx.deps, ctx.caller, { url, events });
    return redirect("/dashboard/webhooks", [handOffCookie(ctx, { kind: "webhookSecret", id: e.id, name: e.url, key: e.secret })]);
  } catch (err) {
    if (!(err instanceof AppError) || (err.code !== "invalid_input" && err.code !== "webhook_endpoint_limit")) throw err;
    const { endpoints } = await webhooks.listEndpoints(ctx.deps, ctx.caller);
    return htmlResponse(err.status, indexPage(ctx, { endpoints, url, events, error: { detail: err.message, errors: err.errors ?? [] } }));
  }
}

function deliveryRow(endpointId: string, d: webhooks.DeliveryView, csrf: string): string {
  const again = `<form method="post" action="${hookPath(endpointId)}/deliveries/${encodeURIComponent(d.id)}/retry" class="inline">${csrfField(csrf)}<button type="submit" class="btn-small">Send again</button></form>`;
  const when = d.status === "pending" && d.nextAttemptAt ? `next ${fmtDate(d.nextAttemptAt)}` : d.deliveredAt ? fmtDate(d.deliveredAt) : "—";
  return `<tr><td data-label="Event">${esc(d.eventType)}</td><td data-label="Status"><span class="status status-${d.status === "delivered" ? "active" : "revoked"}">${esc(d.status)}</span></td>
<td data-label="Attempts">${d.attempts}</td><td data-label="Created">${fmtDate(d.createdAt)}</td><td data-label="When">${when}</td>
<td data-label="Last error">${d.lastError ? esc(d.lastError) : '<span class="muted">—</span>'}</td><td>${again}</td></tr>`;
}

/** One endpoint: its settings, pause/resume and delete, and its delivery log (newest first, paged). */
export async function webhookPage(ctx: SignedInCtx): Promise<Response> {
  const id = ctx.params.id ?? "";
  const e = await webhooks.getEndpoint(ctx.deps, ctx.caller, id);
  const cursor = ctx.url.searchParams.get("cursor") ?? undefined;
  const { deliveries, nextCursor } = await webhooks.listDeliveries(ctx.deps, ctx.caller, id, { limit: "50", cursor });
  const csrf = ctx.session.csrfToken;
  const rows = deliveries.map((d) => deliveryRow(e.id, d, csrf)).join("");
  const log = deliveries.length
    ? `<table class="responsive"><thead><tr><th>Event</th><th>Status</th><th>Attempts</th><th>Created</th><th>Delivered / next</th><th>Last error</th><th><span class="muted">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>`
    : `<p class="muted">No deliveries yet.</p>`;
  const more = nextCursor ? `<p><a href="${hookPath(e.id)}?cursor=${encodeURIComponent(nextCursor)}">Older deliveries</a></p>` : "";
  const body = `<h1>Webhook endpoint</h1>
<p class="mono">${esc(e.url)}</p><p>${state(e.active)} · ${esc(e.events.join(", "))} · created ${fmtDate(e.createdAt)}</p>
<form method="post" action="${hookPath(e.id)}/active" class="inline">${csrfField(csrf)}<input type="hidden" name="active" value="${e.active ? "false" : "true"}"><button type="submit">${e.active ? "Pause" : "Resume"}</button></form>
<form method="post" action="${hookPath(e.id)}/delete" class="inline" data-confirm="Delete this endpoint and its delivery log?">${csrfField(csrf)}<button type="submit" class="btn-danger">Delete</button></form>
<h2>Deliveries</h2>${log}${more}
<p><a href="/dashboard/webhooks">All endpoints</a></p>`;
  return htmlResponse(200, layout({ title: "Webhook endpoint", body, viewer: ctx.viewer, current: "keys" }));
}

export async function setWebhookActiveAction({ ctx, form }: FormCtx<SignedInCtx>): Promise<Response> {
  const id = ctx.params.id ?? "";
  await webhooks.updateEndpoint(ctx.deps, ctx.caller, id, { active: field(form, "active") === "true" });
  return redirect(hookPath(id));
}

export async function deleteWebhookAction({ ctx }: FormCtx<SignedInCtx>): Promise<Response> {
  await webhooks.deleteEndpoint(ctx.deps, ctx.caller, ctx.params.id ?? "");
  return redirect("/dashboard/webhooks");
}

export async function retryDeliveryAction({ ctx }: FormCtx<SignedInCtx>): Promise<Response> {
  const id = ctx.params.id ?? "";
  await webhooks.retryDelivery(ctx.deps, ctx.caller, id, ctx.params.deliveryId ?? "");
  return redirect(hookPath(id));
}

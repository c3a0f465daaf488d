/**
 * Account webhook endpoints and their delivery logs: one function per operation, used by REST and the dashboard.
 * An endpoint's URL passes the same SSRF check as a link's click webhook when it is set, and again at every
 * delivery (worker.ts). The secret is shown once, in the answer to the create; it is never listed.
 */
import type { ShortBase } from "../../shared/domain.ts";
import { AppError, invalidInput, type FieldError } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { FairLimiter } from "../../shared/limiter.ts";
import { WEBHOOK_EVENT_TYPES, type WebhookDelivery, type WebhookEndpoint, type WebhookEventType } from "../../shared/ports.ts";
import { generateWebhookSecret } from "../../shared/webhooks/sign.ts";
import { checkWebhookTarget } from "../../shared/webhooks/ssrf.ts";
import { requireRole } from "../auth/roles.ts";
import type { Caller, Deps } from "../deps.ts";
import { deliveryBody, forgetSubscribers, sendingAgain, wakeWorkers } from "./events.ts";
import { eventWebhookSettings } from "./settings.ts";
import { recordAudit } from "../audit/service.ts";

/** Endpoints one account may have. */
export const MAX_ENDPOINTS = 20;
const MAX_URL = 2048;

export interface EndpointView {
  id: string;
  url: string;
  events: WebhookEventType[];
  active: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface DeliveryView {
  id: string;
  eventType: WebhookEventType;
  status: WebhookDelivery["status"];
  attempts: number;
  createdAt: string;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  lastError: string | null;
  deliveredAt: string | null;
  payload: unknown;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export const endpointView = (e: WebhookEndpoint): EndpointView => ({
  id: e.id, url: e.url, events: e.events, active: e.active, createdAt: iso(e.createdAt)!, updatedAt: iso(e.updatedAt)!,
});

/** A delivery as the log shows it, its payload as it is sent (deliveryBody: a click's shortUrl made from `base`). */
export const deliveryView = (d: WebhookDelivery, base: ShortBase): DeliveryView => ({
  id: d.id, eventType: d.eventType, status: d.status, attempts: d.attempts, createdAt: iso(d.createdAt)!,
  nextAttemptAt: iso(d.status === "pending" ? d.nextAttemptAt : null), lastAttemptAt: iso(d.lastAttemptAt), lastError: d.lastError,
  deliveredAt: iso(d.deliveredAt), payload: JSON.parse(deliveryBody(base, d.eventType, d.payload)),
});

/** The same fair bound on resolving targets as links' webhook checks: one account's burst waits behind itself. */
const targetChecks = new FairLimiter(8);

async function assertTargetAllowed(deps: Deps, caller: Caller, url: string): Promise<void> {
  const r = await targetChecks.run(caller.workspaceId, () => checkWebhookTarget(url, deps.config.webhookAllowPrivate, deps.resolveHost));
  if (!r.ok) throw invalidInput([{ path: "/url", message: r.reason }], "The webhook URL is not allowed");
}

interface EndpointInput {
  url?: string;
  events?: WebhookEventType[];
  active?: boolean;
}

/** Checks a create (everything but active required) or a change (anything, at least one); unknown fields are refused. */
function endpointInput(raw: unknown, creating: boolean): EndpointInput {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw invalidInput([{ path: "/", message: "must be an object" }]);
  const body = raw as Record<string, unknown>;
  const errors: FieldError[] = [];
  const out: EndpointInput = {};
  for (const k of Object.keys(body)) if (!["url", "events", "active"].includes(k)) errors.push({ path: `/${k}`, message: "is not a known field" });
  if (body.url !== undefined || creating) {
    const url = body.url;
    let ok = typeof url === "string" && url.length <= MAX_URL;
    if (ok) {
      try {
        ok = ["http:", "https:"].includes(new URL(url as string).protocol);
      } catch {
        ok = false;
      }
    }
    if (ok) out.url = url as string;
    else errors.push({ path: "/url", message: `must be an http or https URL of at most ${MAX_URL} characters` });
  }
  if (body.events !== undefined || creating) {
    const events = body.events;
    const known = (e: unknown): e is WebhookEventType => (WEBHOOK_EVENT_TYPES as readonly unknown[]).includes(e);
    if (Array.isArray(events) && events.length > 0 && events.every(known)) out.events = WEBHOOK_EVENT_TYPES.filter((t) => events.includes(t));
    else errors.push({ path: "/events", message: `must be a non-empty list of ${WEBHOOK_EVENT_TYPES.join(", ")}` });
  }
  if (body.active !== undefined) {
    if (typeof body.active === "boolean") out.active = body.active;
    else errors.push({ path: "/active", message: "must be true or false" });
  }
  if (!creating && errors.length === 0 && Object.keys(out).length === 0) errors.push({ path: "/", message: "give url, events or active" });
  if (errors.length) throw invalidInput(errors);
  return out;
}

/** Webhook endpoints are the workspace's, managed by its admins and owners (issue #24), from the API and the dashboard alike. */
const MANAGING = "Managing webhooks";

/** Creates an endpoint; the answer carries its secret, the only time it is shown. */
export async function createEndpoint(deps: Deps, caller: Caller, raw: unknown): Promise<EndpointView & { secret: string }> {
  requireRole(caller, "admin", MANAGING);
  const input = endpointInput(raw, true);
  if ((await deps.store.listWebhookEndpoints(caller.workspaceId)).length >= MAX_ENDPOINTS) {
    throw new AppError("webhook_endpoint_limit", `An account can have at most ${MAX_ENDPOINTS} webhook endpoints; delete one first`);
  }
  await assertTargetAllowed(deps, caller, input.url!);
  const now = deps.now();
  const endpoint: WebhookEndpoint = {
    id: `we_${newId()}`, accountId: caller.workspaceId, url: input.url!, secret: generateWebhookSecret(), events: input.events!,
    active: input.active ?? true, createdAt: now, updatedAt: now,
  };
  await deps.store.createWebhookEndpoint(endpoint);
  forgetSubscribers();
  // The host only: a receiver's URL may carry its own secret in the path (a Slack or Discord webhook's does).
  await recordAudit(deps, caller, "webhook.created", { type: "webhook", id: endpoint.id }, { host: new URL(endpoint.url).host, events: endpoint.events });
  return { ...endpointView(endpoint), secret: endpoint.secret };
}

export async function listEndpoints(deps: Deps, caller: Caller): Promise<{ endpoints: EndpointView[] }> {
  requireRole(caller, "admin", MANAGING);
  return { endpoints: (await deps.store.listWebhookEndpoints(caller.workspaceId)).map(endpointView) };
}

/** The caller's endpoint, or not_found (also for another account's: no existence leaks). */
export async function findOwnEndpoint(deps: Deps, caller: Caller, id: string): Promise<WebhookEndpoint> {
  requireRole(caller, "admin", MANAGING);
  const e = typeof id === "string" && id.length <= 100 ? await deps.store.getWebhookEndpoint(caller.workspaceId, id) : null;
  if (!e) throw new AppError("not_found", `No webhook endpoint "${String(id).slice(0, 100)}"`);
  return e;
}

export async function getEndpoint(deps: Deps, caller: Caller, id: string): Promise<EndpointView> {
  return endpointView(await findOwnEndpoint(deps, caller, id));
}

/** Changes url, events or active; a new URL is checked as on creation. Re-activating wakes the worker for its backlog. */
export async function updateEndpoint(deps: Deps, caller: Caller, id: string, raw: unknown): Promise<EndpointView> {
  const input = endpointInput(raw, false);
  const current = await findOwnEndpoint(deps, caller, id);
  if (input.url !== undefined && input.url !== current.url) await assertTargetAllowed(deps, caller, input.url);
  const next: WebhookEndpoint = { ...current, ...input, updatedAt: Math.max(deps.now(), current.updatedAt + 1) };
  if (!(await deps.store.updateWebhookEndpoint(next))) throw new AppError("not_found", `No webhook endpoint "${id}"`);
  forgetSubscribers();
  if (next.active) wakeWorkers();
  return endpointView(next);
}

export async function deleteEndpoint(deps: Deps, caller: Caller, id: string): Promise<void> {
  requireRole(caller, "admin", MANAGING);
  if (!(typeof id === "string" && id.length <= 100 && (await deps.store.deleteWebhookEndpoint(caller.workspaceId, id)))) {
    throw new AppError("not_found", `No webhook endpoint "${String(id).slice(0, 100)}"`);
  }
  forgetSubscribers();
  await recordAudit(deps, caller, "webhook.deleted", { type: "webhook", id });
}

export interface DeliveriesQuery {
  limit?: string;
  cursor?: string;
}

/** The endpoint's delivery log, newest first. */
export async function listDeliveries(deps: Deps, caller: Caller, id: string, query: DeliveriesQuery) {
  const limit = query.limit === undefined || query.limit === "" ? 50 : /^\d{1,3}$/.test(query.limit) ? Number(query.limit) : NaN;
  if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new AppError("invalid_parameter", "limit must be an integer from 1 to 200");
  if (query.cursor !== undefined && (typeof query.cursor !== "string" || query.cursor.length > 300)) {
    throw new AppError("invalid_parameter", "cursor must be the nextCursor of a previous page");
  }
  const endpoint = await findOwnEndpoint(deps, caller, id);
  const page = await deps.store.listWebhookDeliveries(caller.workspaceId, endpoint.id, limit, query.cursor || undefined);
  return { deliveries: page.deliveries.map((d) => deliveryView(d, deps.config)), nextCursor: page.nextCursor };
}

/** Send again: the delivery is due now and retried as a new one would be (for a day, with backoff). */
export async function retryDelivery(deps: Deps, caller: Caller, id: string, deliveryId: string): Promise<DeliveryView> {
  const endpoint = await findOwnEndpoint(deps, caller, id);
  const now = deps.now();
  const d = typeof deliveryId === "string" && deliveryId.length <= 300
    ? await deps.store.retryWebhookDelivery(caller.workspaceId, endpoint.id, deliveryId, now, now + eventWebhookSettings().retryWindowMs)
    : null;
  if (!d) throw new AppError("not_found", `No delivery "${String(deliveryId).slice(0, 300)}" of this endpoint`);
  sendingAgain(endpoint.id);
  return deliveryView(d, deps.config);
}

/** What the SQLite and Postgres event-webhook adapters share: rows to endpoints, and the delivery log's cursor. */
import { WEBHOOK_EVENT_TYPES, type DeliveryPage, type WebhookDelivery, type WebhookEndpoint, type WebhookEventType } from "../ports/event-webhooks.ts";

export interface EndpointRow extends Omit<WebhookEndpoint, "events" | "active"> {
  events: string;
  active: number | boolean;
}

const known = new Set<string>(WEBHOOK_EVENT_TYPES);

export function endpointOf(row: EndpointRow): WebhookEndpoint {
  const events = row.events.split(",").filter((e): e is WebhookEventType => known.has(e));
  return { ...row, events, active: row.active === true || row.active === 1 };
}

/** The first page starts after the newest possible row. */
const START = { createdAt: Number.MAX_SAFE_INTEGER, id: "" };

/** A cursor is `{createdAt}.{id}` of the last row of the previous page; anything else starts at the top. */
export function pageCursor(cursor: string | undefined): { createdAt: number; id: string } {
  const m = cursor ? /^(\d{1,16})\.(.{1,200})$/.exec(cursor) : null;
  return m ? { createdAt: Number(m[1]), id: m[2]! } : START;
}

/** A page of `limit` from `limit + 1` rows read, with the cursor of its last row when there are more. */
export function cursorOf(rows: WebhookDelivery[], limit: number): DeliveryPage {
  const deliveries = rows.slice(0, limit);
  const last = deliveries[deliveries.length - 1];
  return { deliveries, nextCursor: rows.length > limit && last ? `${last.createdAt}.${last.id}` : null };
}

/** Column types of a dialect. */
interface Dialect {
  text: string;
  int: string;
  bigint: string;
  bool: string;
}

/** The tables (SQLite migration 15, Postgres migration 17), written once for both dialects. */
export const eventWebhooksDdl = (t: Dialect) => `
CREATE TABLE webhook_endpoints (
  id         ${t.text} PRIMARY KEY,
  account_id ${t.text} NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  url        ${t.text} NOT NULL,
  secret     ${t.text} NOT NULL,
  events     ${t.text} NOT NULL, -- comma-separated event types, e.g. 'link.created,link.deleted'
  active     ${t.bool} NOT NULL,
  created_at ${t.bigint} NOT NULL,
  updated_at ${t.bigint} NOT NULL
);
CREATE INDEX webhook_endpoints_account ON webhook_endpoints(account_id, created_at);
-- The outbox and the delivery log in one: a row per (event, endpoint), pending until delivered or given up.
CREATE TABLE webhook_deliveries (
  id              ${t.text} PRIMARY KEY, -- {event id}_{endpoint id}: the webhook-id header
  endpoint_id     ${t.text} NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  account_id      ${t.text} NOT NULL,
  event_type      ${t.text} NOT NULL,
  payload         ${t.text} NOT NULL,
  created_at      ${t.bigint} NOT NULL,
  status          ${t.text} NOT NULL, -- pending | delivered | failed
  attempts        ${t.int} NOT NULL DEFAULT 0,
  next_attempt_at ${t.bigint},        -- pending: due time, or the end of a worker's claim
  give_up_at      ${t.bigint} NOT NULL,
  last_attempt_at ${t.bigint},
  last_error      ${t.text},
  delivered_at    ${t.bigint}
);
-- Due rows by account: claims take a few of each account's (SQLite scans the pending ones; Postgres seeks per account).
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(account_id, next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_log ON webhook_deliveries(endpoint_id, created_at DESC, id DESC);
-- Finished deliveries by age: pruning past the retention reads only what it deletes.
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries(created_at) WHERE status <> 'pending';
`;

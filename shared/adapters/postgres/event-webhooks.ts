/**
 * The event-webhooks role of the Postgres store: endpoints and the outbox of their deliveries (migration 17).
 * Several control processes claim due deliveries at once with FOR UPDATE SKIP LOCKED: none waits for another's
 * rows, and no row is claimed twice.
 */
import type {
  AttemptResult, ClaimedDelivery, DeliveryPage, EventWebhookStore, WebhookDelivery, WebhookEndpoint, WebhookEventRecord, WebhookEventType,
} from "../../ports/event-webhooks.ts";
import type postgres from "postgres";
import type { ExportRecord } from "../../ports/admin.ts";
import { EXPORT_PAGE } from "../export-support.ts";
import type { PostgresConnection } from "./connection.ts";
import { cursorOf, endpointOf, eventWebhooksDdl, pageCursor, type EndpointRow } from "../event-webhook-rows.ts";

/** Migration 17. */
export const EVENT_WEBHOOKS_POSTGRES = eventWebhooksDdl({ text: "text", int: "integer", bigint: "bigint", bool: "boolean" });

const ENDPOINT_COLUMNS = `id, account_id AS "accountId", url, secret, events, active, created_at AS "createdAt", updated_at AS "updatedAt"`;
const DELIVERY_COLUMNS = `d.id, d.endpoint_id AS "endpointId", d.account_id AS "accountId", d.event_type AS "eventType", d.payload,
  d.created_at AS "createdAt", d.status, d.attempts, d.next_attempt_at AS "nextAttemptAt", d.give_up_at AS "giveUpAt",
  d.last_attempt_at AS "lastAttemptAt", d.last_error AS "lastError", d.delivered_at AS "deliveredAt"`;

/** Accounts with pending deliveries a claim looks at, at most. */
const SCAN_ACCOUNTS = 1000;

/**
 * Writes the events' deliveries; answers how many. On `sql`, which may be a transaction's: the outbox write of a link
 * change shares the change's transaction (shared/ports/links.ts LinkEvents).
 */
export async function writeWebhookEvents(sql: postgres.Sql | postgres.TransactionSql, events: readonly WebhookEventRecord[]): Promise<number> {
  // One statement for the whole batch, over arrays: the same text (and prepared statement) at any size.
  const r = await sql`
    INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event_type, payload, created_at, status, next_attempt_at, give_up_at)
    SELECT ev.id || '_' || e.id, e.id, e.account_id, ev.type,
      -- A click's event: its link's slug and domain put in (the worker adds the shortUrl: events.ts deliveryBody).
      CASE WHEN ev.account_id IS NULL THEN jsonb_set(jsonb_set(ev.payload::jsonb, '{data,slug}', to_jsonb(l.slug)), '{data,domain}', to_jsonb(l.domain))::text
        ELSE ev.payload END,
      ev.at, 'pending', ev.at, ev.give_up_at
    FROM unnest(${events.map((e) => e.id)}::text[], ${events.map((e) => e.type)}::text[], ${events.map((e) => e.accountId)}::text[],
                ${events.map((e) => e.linkId)}::text[], ${events.map((e) => e.payload)}::text[],
                ${events.map((e) => String(e.at))}::bigint[], ${events.map((e) => String(e.giveUpAt))}::bigint[])
      AS ev(id, type, account_id, link_id, payload, at, give_up_at)
    LEFT JOIN links l ON ev.account_id IS NULL AND l.id = ev.link_id
    JOIN webhook_endpoints e ON e.account_id = COALESCE(ev.account_id, l.account_id)
    WHERE e.active AND position(',' || ev.type || ',' IN ',' || e.events || ',') > 0
    ON CONFLICT (id) DO NOTHING`;
  return r.count;
}

/** The endpoints (secrets included), then the deliveries, as export records, read on `tx` (the export's snapshot). */
export async function* webhookExportRecords(tx: postgres.ReservedSql): AsyncIterable<ExportRecord> {
  const endpoints = tx<EndpointRow[]>`SELECT ${tx.unsafe(ENDPOINT_COLUMNS)} FROM webhook_endpoints ORDER BY created_at, id`;
  for await (const rows of endpoints.cursor(EXPORT_PAGE)) for (const r of rows) yield { type: "webhookEndpoint", data: endpointOf(r) };
  const deliveries = tx<WebhookDelivery[]>`SELECT ${tx.unsafe(DELIVERY_COLUMNS)} FROM webhook_deliveries d ORDER BY d.created_at, d.id`;
  for await (const rows of deliveries.cursor(EXPORT_PAGE)) for (const d of rows) yield { type: "webhookDelivery", data: { ...d } };
}

/**
 * Writes imported endpoints and deliveries on `tx` (the import's transaction): one already there (same id) is
 * skipped, and so is one whose owner is missing (an endpoint without its account, a delivery without its endpoint).
 */
export async function importWebhookRecords(tx: postgres.TransactionSql, endpoints: WebhookEndpoint[], deliveries: WebhookDelivery[]) {
  let webhookEndpoints = 0;
  let webhookDeliveries = 0;
  if (endpoints.length > 0) {
    const e = endpoints;
    webhookEndpoints = (await tx`
      INSERT INTO webhook_endpoints (id, account_id, url, secret, events, active, created_at, updated_at)
      SELECT t.id, t.account_id, t.url, t.secret, t.events, t.active <> 0, t.created_at, t.updated_at FROM unnest(
        ${e.map((x) => x.id)}::text[], ${e.map((x) => x.accountId)}::text[], ${e.map((x) => x.url)}::text[], ${e.map((x) => x.secret)}::text[],
        ${e.map((x) => x.events.join(","))}::text[], ${e.map((x) => (x.active ? 1 : 0))}::integer[], ${e.map((x) => x.createdAt)}::bigint[],
        ${e.map((x) => x.updatedAt)}::bigint[]
      ) AS t(id, account_id, url, secret, events, active, created_at, updated_at)
      WHERE EXISTS (SELECT 1 FROM workspaces a WHERE a.id = t.account_id)
      ON CONFLICT DO NOTHING`).count;
  }
  if (deliveries.length > 0) {
    const d = deliveries;
    webhookDeliveries = (await tx`
      INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event_type, payload, created_at, status, attempts, next_attempt_at,
        give_up_at, last_attempt_at, last_error, delivered_at)
      SELECT t.* FROM unnest(
        ${d.map((x) => x.id)}::text[], ${d.map((x) => x.endpointId)}::text[], ${d.map((x) => x.accountId)}::text[],
        ${d.map((x) => x.eventType)}::text[], ${d.map((x) => x.payload)}::text[], ${d.map((x) => x.createdAt)}::bigint[],
        ${d.map((x) => x.status)}::text[], ${d.map((x) => x.attempts)}::integer[], ${d.map((x) => x.nextAttemptAt)}::bigint[],
        ${d.map((x) => x.giveUpAt)}::bigint[], ${d.map((x) => x.lastAttemptAt)}::bigint[], ${d.map((x) => x.lastError)}::text[],
        ${d.map((x) => x.deliveredAt)}::bigint[]
      ) AS t(id, endpoint_id, account_id, event_type, payload, created_at, status, attempts, next_attempt_at, give_up_at,
             last_attempt_at, last_error, delivered_at)
      WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = t.endpoint_id AND e.account_id = t.account_id)
      ON CONFLICT DO NOTHING`).count;
  }
  return { webhookEndpoints, webhookDeliveries };
}

export function postgresEventWebhooks(c: PostgresConnection): EventWebhookStore {
  const { sql } = c;
  const cols = sql.unsafe(DELIVERY_COLUMNS);
  /** The last account a claim of this process served: the next claim starts after it. */
  let after = "";
  return {
    createWebhookEndpoint(e: WebhookEndpoint): Promise<void> {
      return c.run(async () => {
        await sql`INSERT INTO webhook_endpoints (id, account_id, url, secret, events, active, created_at, updated_at)
          VALUES (${e.id}, ${e.accountId}, ${e.url}, ${e.secret}, ${e.events.join(",")}, ${e.active}, ${e.createdAt}, ${e.updatedAt})`;
      });
    },

    subscribedAccounts(type: WebhookEventType): Promise<string[]> {
      return c.run(async () => {
        const rows = await sql<{ account_id: string }[]>`SELECT DISTINCT account_id FROM webhook_endpoints
          WHERE active AND position(',' || ${type} || ',' IN ',' || events || ',') > 0`;
        return rows.map((r) => r.account_id);
      });
    },

    listWebhookEndpoints(accountId: string): Promise<WebhookEndpoint[]> {
      return c.run(async () => {
        const rows = await sql<EndpointRow[]>`SELECT ${sql.unsafe(ENDPOINT_COLUMNS)} FROM webhook_endpoints
          WHERE account_id = ${accountId} ORDER BY created_at, id`;
        return rows.map(endpointOf);
      });
    },

    getWebhookEndpoint(accountId: string, id: string): Promise<WebhookEndpoint | null> {
      return c.run(async () => {
        const [row] = await sql<EndpointRow[]>`SELECT ${sql.unsafe(ENDPOINT_COLUMNS)} FROM webhook_endpoints
          WHERE id = ${id} AND account_id = ${accountId}`;
        return row ? endpointOf(row) : null;
      });
    },

    updateWebhookEndpoint(e: WebhookEndpoint): Promise<boolean> {
      return c.run(async () => {
        const r = await sql`UPDATE webhook_endpoints SET url = ${e.url}, events = ${e.events.join(",")}, active = ${e.active},
          updated_at = ${e.updatedAt} WHERE id = ${e.id} AND account_id = ${e.accountId}`;
        return r.count === 1;
      });
    },

    deleteWebhookEndpoint(accountId: string, id: string): Promise<boolean> {
      return c.run(async () => (await sql`DELETE FROM webhook_endpoints WHERE id = ${id} AND account_id = ${accountId}`).count === 1);
    },

    enqueueWebhookEvents(events: WebhookEventRecord[]): Promise<number> {
      if (events.length === 0) return Promise.resolve(0);
      return c.run(() => writeWebhookEvents(sql, events));
    },

    claimWebhookDeliveries(now: number, lease: number, perAccount: number, limit: number): Promise<ClaimedDelivery[]> {
      return c.run(async () => {
        // Accounts with pending rows take turns, starting after the last one this process served and wrapping once;
        // each is found by a seek on the due index (a recursive "next account" walk, not a scan of every pending
        // row); at most perAccount due rows of each, so one account's backlog cannot fill a claim. At most SCAN_ACCOUNTS
        // accounts are looked at per claim (each a seek): beyond, accounts wait for the turns to come round.
        const scan = SCAN_ACCOUNTS;
        const rows = await sql<(WebhookDelivery & { url: string; secret: string })[]>`
          WITH RECURSIVE later(account_id, turn) AS (
            SELECT (SELECT min(account_id) FROM webhook_deliveries WHERE status = 'pending' AND account_id > ${after}), 1
            UNION ALL
            SELECT (SELECT min(account_id) FROM webhook_deliveries WHERE status = 'pending' AND account_id > l.account_id), l.turn + 1
            FROM later l WHERE l.account_id IS NOT NULL AND l.turn < ${scan}
          ), earlier(account_id, turn) AS (
            SELECT (SELECT min(account_id) FROM webhook_deliveries WHERE status = 'pending'), ${scan} + 1
            UNION ALL
            SELECT (SELECT min(account_id) FROM webhook_deliveries WHERE status = 'pending' AND account_id > e.account_id), e.turn + 1
            FROM earlier e WHERE e.account_id < ${after} AND e.turn < 2 * ${scan}
          ), accounts AS (
            SELECT account_id, turn FROM later WHERE account_id IS NOT NULL
            UNION ALL
            SELECT account_id, turn FROM earlier WHERE account_id <= ${after}
          ), picked AS (
            SELECT p.id FROM accounts a CROSS JOIN LATERAL (
              SELECT d.id, d.next_attempt_at FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
              WHERE d.account_id = a.account_id AND d.status = 'pending' AND d.next_attempt_at <= ${now} AND e.active
              ORDER BY d.next_attempt_at LIMIT ${perAccount} FOR UPDATE OF d SKIP LOCKED) p
            ORDER BY a.turn, p.next_attempt_at LIMIT ${limit}
          )
          UPDATE webhook_deliveries d SET next_attempt_at = ${lease} FROM picked, webhook_endpoints e
          WHERE d.id = picked.id AND e.id = d.endpoint_id
          RETURNING ${cols}, e.url, e.secret`;
        const served = [...new Set(rows.map((r) => r.accountId))].sort((x, y) => Number(x <= after) - Number(y <= after) || (x < y ? -1 : 1));
        if (served.length) after = served[served.length - 1]!;
        return rows.map((r) => ({ ...r, lease }));
      });
    },

    finishWebhookAttempt(id: string, lease: number, r: AttemptResult): Promise<boolean> {
      const status = r.ok ? "delivered" : r.nextAttemptAt === null ? "failed" : "pending";
      return c.run(async () => {
        const res = await sql`UPDATE webhook_deliveries SET status = ${status}, attempts = attempts + 1, last_attempt_at = ${r.at},
            last_error = ${r.error}, next_attempt_at = ${r.ok ? null : r.nextAttemptAt}, delivered_at = ${r.ok ? r.at : null}
          WHERE id = ${id} AND status = 'pending' AND next_attempt_at = ${lease}`;
        return res.count === 1;
      });
    },

    postponeWebhookDelivery(id: string, lease: number, until: number): Promise<boolean> {
      return c.run(async () => (await sql`UPDATE webhook_deliveries SET next_attempt_at = ${until}
        WHERE id = ${id} AND status = 'pending' AND next_attempt_at = ${lease}`).count === 1);
    },

    listWebhookDeliveries(accountId: string, endpointId: string, limit: number, cursor?: string): Promise<DeliveryPage> {
      const after = pageCursor(cursor);
      return c.run(async () => {
        const rows = await sql<WebhookDelivery[]>`SELECT ${cols} FROM webhook_deliveries d
          WHERE d.endpoint_id = ${endpointId} AND d.account_id = ${accountId} AND (d.created_at, d.id) < (${after.createdAt}, ${after.id})
          ORDER BY d.created_at DESC, d.id DESC LIMIT ${limit + 1}`;
        return cursorOf([...rows], limit);
      });
    },

    retryWebhookDelivery(accountId: string, endpointId: string, id: string, now: number, giveUpAt: number): Promise<WebhookDelivery | null> {
      return c.run(async () => {
        const [row] = await sql<WebhookDelivery[]>`UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = ${now},
            give_up_at = ${giveUpAt}, delivered_at = NULL
          WHERE d.id = ${id} AND d.endpoint_id = ${endpointId} AND d.account_id = ${accountId} RETURNING ${cols}`;
        return row ?? null;
      });
    },

    pruneWebhookDeliveries(before: number, max: number): Promise<number> {
      return c.run(async () => (await sql`DELETE FROM webhook_deliveries WHERE id IN (
        SELECT id FROM webhook_deliveries WHERE status <> 'pending' AND created_at < ${before} ORDER BY created_at LIMIT ${max})`).count);
    },
  };
}

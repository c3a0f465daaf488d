/** The event-webhooks role of the SQLite store: endpoints and the outbox of their deliveries (migration 15). */
import type { Database } from "bun:sqlite";
import type { ExportRecord } from "../../ports/admin.ts";
import type {
  AttemptResult, ClaimedDelivery, DeliveryPage, EventWebhookStore, WebhookDelivery, WebhookEndpoint, WebhookEventRecord, WebhookEventType,
} from "../../ports/event-webhooks.ts";
import { BUSY_TIMEOUT_MS, type SqliteConnection } from "./connection.ts";
import { cursorOf, endpointOf, eventWebhooksDdl, pageCursor, type EndpointRow } from "../event-webhook-rows.ts";

/** Migration 15. */
export const EVENT_WEBHOOKS_SQLITE = eventWebhooksDdl({ text: "TEXT", int: "INTEGER", bigint: "INTEGER", bool: "INTEGER" });

const ENDPOINT_SELECT = `SELECT id, account_id AS accountId, url, secret, events, active, created_at AS createdAt,
  updated_at AS updatedAt FROM webhook_endpoints`;
const DELIVERY_COLUMNS = `d.id, d.endpoint_id AS endpointId, d.account_id AS accountId, d.event_type AS eventType, d.payload,
  d.created_at AS createdAt, d.status, d.attempts, d.next_attempt_at AS nextAttemptAt, d.give_up_at AS giveUpAt,
  d.last_attempt_at AS lastAttemptAt, d.last_error AS lastError, d.delivered_at AS deliveredAt`;

/**
 * One statement per event: the subscribed active endpoints of its account (or of the link's owner, its slug and
 * domain put in: the worker adds the shortUrl, control/webhooks/events.ts deliveryBody) get a row each.
 */
const ENQUEUE = `INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event_type, payload, created_at, status, next_attempt_at, give_up_at)
  SELECT ?1 || '_' || e.id, e.id, e.account_id, ?2,
    CASE WHEN ?6 IS NULL THEN json_set(?3, '$.data.slug', (SELECT slug FROM links WHERE id = ?7), '$.data.domain', (SELECT domain FROM links WHERE id = ?7))
      ELSE ?3 END, ?4, 'pending', ?4, ?5
  FROM webhook_endpoints e
  WHERE e.account_id = COALESCE(?6, (SELECT account_id FROM links WHERE id = ?7)) AND e.active = 1
    AND instr(',' || e.events || ',', ',' || ?2 || ',') > 0
  ON CONFLICT (id) DO NOTHING`;

const SUBSCRIBED = `SELECT 1 FROM webhook_endpoints WHERE active = 1 AND instr(',' || events || ',', ',' || ? || ',') > 0 LIMIT 1`;

/**
 * The next account with pending deliveries after the given one: a seek on the due index, so a claim costs a few
 * seeks per account however long one account's backlog is (a window over every pending row took 180 ms at 200,000,
 * on the embedded server's event loop).
 */
const NEXT_ACCOUNT = `SELECT min(account_id) AS id FROM webhook_deliveries WHERE status = 'pending' AND account_id > ?`;
/** One account's due deliveries of active endpoints, oldest due first. */
const DUE_OF_ACCOUNT = `SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
  WHERE d.account_id = ? AND d.status = 'pending' AND d.next_attempt_at <= ? AND e.active = 1 ORDER BY d.next_attempt_at LIMIT ?`;

/** Accounts with pending deliveries a claim looks at, at most (each a seek or two); the next claim goes on after. */
const SCAN_ACCOUNTS = 1000;
/** Between tries of a worker's write while another connection holds the write lock (the click writer thread's). */
const LOCKED_RETRY_MS = 2;

/**
 * Writes the events' deliveries; answers how many. No transaction of its own: the caller's (the outbox write of a
 * link change shares the change's transaction, shared/ports/links.ts LinkEvents).
 */
export function writeWebhookEvents(c: SqliteConnection, events: readonly WebhookEventRecord[]): number {
  let n = 0;
  const st = c.st(ENQUEUE);
  // A click batch holds thousands of events: one look first, so a type nobody subscribes to costs no insert per event.
  const subscribed = new Map<string, boolean>();
  const anyFor = (type: string) => {
    let yes = subscribed.get(type);
    if (yes === undefined) subscribed.set(type, (yes = c.st(SUBSCRIBED).get(type) !== null));
    return yes;
  };
  for (const e of events) if (anyFor(e.type)) n += st.run(e.id, e.type, e.payload, e.at, e.giveUpAt, e.accountId, e.linkId).changes;
  return n;
}

/** The endpoints (secrets included), then the deliveries, as export records, read from `db` (the export's snapshot). */
export function* webhookExportRecords(db: Database): Iterable<ExportRecord> {
  for (const row of db.query<EndpointRow, []>(`${ENDPOINT_SELECT} ORDER BY created_at, id`).iterate()) {
    yield { type: "webhookEndpoint", data: endpointOf(row) };
  }
  for (const d of db.query<WebhookDelivery, []>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d ORDER BY d.created_at, d.id`).iterate()) {
    yield { type: "webhookDelivery", data: d };
  }
}

/**
 * Writes imported endpoints and deliveries, in the caller's transaction: one already there (same id) is skipped, and
 * so is one whose owner is missing (an endpoint without its account, a delivery without its account's endpoint).
 */
export function importWebhookRecords(c: SqliteConnection, endpoints: WebhookEndpoint[], deliveries: WebhookDelivery[]) {
  const endpoint = c.st(
    `INSERT INTO webhook_endpoints (id, account_id, url, secret, events, active, created_at, updated_at)
     SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM workspaces WHERE id = ?) ON CONFLICT DO NOTHING`,
  );
  let webhookEndpoints = 0;
  for (const e of endpoints) {
    webhookEndpoints += endpoint.run(e.id, e.accountId, e.url, e.secret, e.events.join(","), e.active ? 1 : 0, e.createdAt, e.updatedAt, e.accountId).changes;
  }
  const delivery = c.st(
    `INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event_type, payload, created_at, status, attempts, next_attempt_at,
       give_up_at, last_attempt_at, last_error, delivered_at)
     SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = ? AND account_id = ?)
     ON CONFLICT DO NOTHING`,
  );
  let webhookDeliveries = 0;
  for (const d of deliveries) {
    webhookDeliveries += delivery.run(
      d.id, d.endpointId, d.accountId, d.eventType, d.payload, d.createdAt, d.status, d.attempts, d.nextAttemptAt,
      d.giveUpAt, d.lastAttemptAt, d.lastError, d.deliveredAt, d.endpointId, d.accountId,
    ).changes;
  }
  return { webhookEndpoints, webhookDeliveries };
}

export function sqliteEventWebhooks(c: SqliteConnection): EventWebhookStore {
  /**
   * Runs a write of the delivery worker without waiting on the event loop for the write lock (busy_timeout would
   * block the embedded server's redirects while the writer thread settles a day): a try that finds the lock taken
   * is made again a moment later, asynchronously, until BUSY_TIMEOUT_MS, as reserveHits does.
   */
  async function unblocked<T>(write: () => T): Promise<T> {
    const giveUpAt = Date.now() + BUSY_TIMEOUT_MS;
    for (;;) {
      c.db.run("PRAGMA busy_timeout = 0");
      try {
        return write();
      } catch (err) {
        if ((err as { code?: unknown }).code !== "SQLITE_BUSY" || Date.now() > giveUpAt) throw err;
      } finally {
        c.db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      }
      await Bun.sleep(LOCKED_RETRY_MS);
    }
  }

  /** Where the next claim starts looking: accounts take turns across claims, not only within one. */
  let after = "";
  /** Up to `perAccount` due ids of each account in turn from `after`, wrapping once, until `limit`. */
  const dueIds = (now: number, perAccount: number, limit: number): string[] => {
    const ids: string[] = [];
    const start = after;
    let account = start;
    let wrapped = false;
    for (let looked = 0; ids.length < limit && looked < SCAN_ACCOUNTS; looked++) {
      const next = c.st<{ id: string | null }>(NEXT_ACCOUNT).get(account)?.id ?? null;
      if (next === null || (wrapped && next > start)) {
        if (wrapped || start === "") break;
        wrapped = true;
        account = "";
        continue;
      }
      account = next;
      for (const r of c.st<{ id: string }>(DUE_OF_ACCOUNT).all(next, now, Math.min(perAccount, limit - ids.length))) ids.push(r.id);
      after = next;
    }
    return ids;
  };
  const claim = c.db.transaction((now: number, lease: number, perAccount: number, limit: number): ClaimedDelivery[] => {
    const ids = dueIds(now, perAccount, limit);
    const out: ClaimedDelivery[] = [];
    for (const id of ids) {
      c.st(`UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ?`).run(lease, id);
      const row = c.st<ClaimedDelivery>(
        `SELECT ${DELIVERY_COLUMNS}, e.url, e.secret FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE d.id = ?`,
      ).get(id)!;
      out.push({ ...row, lease });
    }
    return out;
  });
  const enqueue = c.db.transaction((events: readonly WebhookEventRecord[]): number => writeWebhookEvents(c, events));
  return {
    async createWebhookEndpoint(e: WebhookEndpoint): Promise<void> {
      c.st(
        `INSERT INTO webhook_endpoints (id, account_id, url, secret, events, active, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(e.id, e.accountId, e.url, e.secret, e.events.join(","), e.active ? 1 : 0, e.createdAt, e.updatedAt);
    },

    async subscribedAccounts(type: WebhookEventType): Promise<string[]> {
      return c.st<{ account_id: string }>(
        `SELECT DISTINCT account_id FROM webhook_endpoints WHERE active AND instr(',' || events || ',', ',' || ? || ',') > 0`,
      ).all(type).map((r) => r.account_id);
    },

    async listWebhookEndpoints(accountId: string): Promise<WebhookEndpoint[]> {
      return c.st<EndpointRow>(`${ENDPOINT_SELECT} WHERE account_id = ? ORDER BY created_at, id`).all(accountId).map(endpointOf);
    },

    async getWebhookEndpoint(accountId: string, id: string): Promise<WebhookEndpoint | null> {
      const row = c.st<EndpointRow>(`${ENDPOINT_SELECT} WHERE id = ? AND account_id = ?`).get(id, accountId);
      return row ? endpointOf(row) : null;
    },

    async updateWebhookEndpoint(e: WebhookEndpoint): Promise<boolean> {
      return c.st(`UPDATE webhook_endpoints SET url = ?, events = ?, active = ?, updated_at = ? WHERE id = ? AND account_id = ?`)
        .run(e.url, e.events.join(","), e.active ? 1 : 0, e.updatedAt, e.id, e.accountId).changes === 1;
    },

    async deleteWebhookEndpoint(accountId: string, id: string): Promise<boolean> {
      return c.st(`DELETE FROM webhook_endpoints WHERE id = ? AND account_id = ?`).run(id, accountId).changes === 1;
    },

    async enqueueWebhookEvents(events: WebhookEventRecord[]): Promise<number> {
      return events.length ? unblocked(() => enqueue.immediate(events)) : 0;
    },

    async claimWebhookDeliveries(now: number, lease: number, perAccount: number, limit: number): Promise<ClaimedDelivery[]> {
      return unblocked(() => claim.immediate(now, lease, perAccount, limit));
    },

    async finishWebhookAttempt(id: string, lease: number, r: AttemptResult): Promise<boolean> {
      const status = r.ok ? "delivered" : r.nextAttemptAt === null ? "failed" : "pending";
      return unblocked(() => c.st(
        `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, last_attempt_at = ?, last_error = ?, next_attempt_at = ?,
           delivered_at = ? WHERE id = ? AND status = 'pending' AND next_attempt_at = ?`,
      ).run(status, r.at, r.error, r.ok ? null : r.nextAttemptAt, r.ok ? r.at : null, id, lease).changes === 1);
    },

    async postponeWebhookDelivery(id: string, lease: number, until: number): Promise<boolean> {
      return unblocked(() => c.st(`UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ? AND status = 'pending' AND next_attempt_at = ?`)
        .run(until, id, lease).changes === 1);
    },

    async listWebhookDeliveries(accountId: string, endpointId: string, limit: number, cursor?: string): Promise<DeliveryPage> {
      const after = pageCursor(cursor);
      const rows = c.st<WebhookDelivery>(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d WHERE d.endpoint_id = ? AND d.account_id = ?
           AND (d.created_at < ? OR (d.created_at = ? AND d.id < ?)) ORDER BY d.created_at DESC, d.id DESC LIMIT ?`,
      ).all(endpointId, accountId, after.createdAt, after.createdAt, after.id, limit + 1);
      return cursorOf(rows, limit);
    },

    async retryWebhookDelivery(accountId: string, endpointId: string, id: string, now: number, giveUpAt: number): Promise<WebhookDelivery | null> {
      const changed = c.st(
        `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, give_up_at = ?, delivered_at = NULL
         WHERE id = ? AND endpoint_id = ? AND account_id = ?`,
      ).run(now, giveUpAt, id, endpointId, accountId).changes;
      if (changed !== 1) return null;
      return c.st<WebhookDelivery>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d WHERE d.id = ?`).get(id) ?? null;
    },

    async pruneWebhookDeliveries(before: number, max: number): Promise<number> {
      return unblocked(() => c.st(`DELETE FROM webhook_deliveries WHERE id IN (
        SELECT id FROM webhook_deliveries WHERE status <> 'pending' AND created_at < ? ORDER BY created_at LIMIT ?)`).run(before, max).changes);
    },
  };
}

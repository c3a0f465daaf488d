/**
 * The event-webhooks role of the store (issue #25): account endpoints subscribed to link events, and the outbox
 * of their deliveries, which is also each endpoint's delivery log. A delivery is written when its event happens
 * (one row per subscribed endpoint) and stays until pruned; the control processes' workers claim due rows, send
 * them, and record each attempt. Nothing lives only in a process's memory, so a restart loses nothing.
 */

/** Every event an endpoint can subscribe to. */
export const WEBHOOK_EVENT_TYPES = ["link.created", "link.updated", "link.deleted", "link.clicked"] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** pending: waiting for (another) attempt; delivered: a 2xx came back; failed: given up (retry window over). */
export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface WebhookEndpoint {
  id: string;
  accountId: string;
  url: string;
  /** `whsec_…`: shown to the owner once, on creation; kept to sign every delivery. */
  secret: string;
  events: WebhookEventType[];
  /** An inactive endpoint gets no new deliveries, and its pending ones wait until it is active again. */
  active: boolean;
  createdAt: number;
  updatedAt: number;
}

/** One event, fanned out by the store to every active endpoint of its account subscribed to its type. */
export interface WebhookEventRecord {
  /** Unique per event; a delivery's id is `{id}_{endpointId}`, so writing the same event twice adds nothing. */
  id: string;
  type: WebhookEventType;
  /**
   * The link's owner; null: the account owning `linkId` now (clicks, whose batch names only the link), and the
   * store sets the payload's `data.slug` to the link's slug.
   */
  accountId: string | null;
  linkId: string;
  /** The JSON body sent, exactly. */
  payload: string;
  at: number;
  /** Attempts stop after this time (the event's time plus the retry window). */
  giveUpAt: number;
}

export interface WebhookDelivery {
  /** Also the `webhook-id` header: the same on every attempt, so receivers can de-duplicate. */
  id: string;
  endpointId: string;
  accountId: string;
  eventType: WebhookEventType;
  payload: string;
  createdAt: number;
  status: DeliveryStatus;
  attempts: number;
  /** When a pending delivery is due (or its current claim ends); null once delivered or failed. */
  nextAttemptAt: number | null;
  giveUpAt: number;
  lastAttemptAt: number | null;
  /** The last failure in words (`answered HTTP 500`, `no answer within 5 s`); null after a success. */
  lastError: string | null;
  deliveredAt: number | null;
}

/** A delivery claimed by a worker: its endpoint's address and secret, and the claim (`lease`) to finish it with. */
export interface ClaimedDelivery extends WebhookDelivery {
  url: string;
  secret: string;
  /** The claim's end: the delivery is due again then, unless finished with this same value. */
  lease: number;
}

/** How an attempt ended. `nextAttemptAt`: when to try again after a failure; null: give up (status failed). */
export interface AttemptResult {
  ok: boolean;
  at: number;
  error: string | null;
  nextAttemptAt: number | null;
}

export interface DeliveryPage {
  deliveries: WebhookDelivery[];
  nextCursor: string | null;
}

export interface EventWebhookStore {
  createWebhookEndpoint(endpoint: WebhookEndpoint): Promise<void>;
  /** The account's endpoints, oldest first. */
  listWebhookEndpoints(accountId: string): Promise<WebhookEndpoint[]>;
  /** The endpoint, or null when unknown or another account's. */
  getWebhookEndpoint(accountId: string, id: string): Promise<WebhookEndpoint | null>;
  /** Writes url, events, active and updatedAt of the account's endpoint; false when unknown or another account's. */
  updateWebhookEndpoint(endpoint: WebhookEndpoint): Promise<boolean>;
  /** Deletes the endpoint and its deliveries; false when unknown or another account's. */
  deleteWebhookEndpoint(accountId: string, id: string): Promise<boolean>;
  /**
   * The accounts with an active endpoint subscribed to `type`. Asked before events are made, so that with no
   * subscriber (the usual case) a click or a bulk of links costs no payload at all; callers keep the answer a
   * few seconds.
   */
  subscribedAccounts(type: WebhookEventType): Promise<string[]>;
  /** Writes one pending delivery per subscribed active endpoint, due at the event's time; answers how many. */
  enqueueWebhookEvents(events: WebhookEventRecord[]): Promise<number>;
  /**
   * Claims up to `limit` due deliveries of active endpoints, at most `perAccount` of one account, until `lease`:
   * several processes may claim at once and never get the same row.
   */
  claimWebhookDeliveries(now: number, lease: number, perAccount: number, limit: number): Promise<ClaimedDelivery[]>;
  /** Records an attempt of a claimed delivery; false when the claim was lost (its lease ended and another took it). */
  finishWebhookAttempt(id: string, lease: number, result: AttemptResult): Promise<boolean>;
  /** Gives a claimed delivery back unattempted, due at `until` (its endpoint is backing off); false when the claim was lost. */
  postponeWebhookDelivery(id: string, lease: number, until: number): Promise<boolean>;
  /** The endpoint's deliveries, newest first (the delivery log); `cursor` from the previous page. */
  listWebhookDeliveries(accountId: string, endpointId: string, limit: number, cursor?: string): Promise<DeliveryPage>;
  /** Makes a delivery of the account's endpoint pending and due at `now`, retried until `giveUpAt`; null when unknown. */
  retryWebhookDelivery(accountId: string, endpointId: string, id: string, now: number, giveUpAt: number): Promise<WebhookDelivery | null>;
  /** Deletes up to `max` delivered and failed deliveries created before `before`; answers how many. */
  pruneWebhookDeliveries(before: number, max: number): Promise<number>;
}

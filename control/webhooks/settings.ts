/**
 * How event webhooks are delivered, from the environment (docs/webhooks.md). The defaults are for production; the
 * tests shorten the backoff, the lease and the poll so a receiver that recovers is served again within a second.
 */

export interface EventWebhookSettings {
  /** How often a worker looks for due deliveries when nothing woke it. */
  pollMs: number;
  /** The first retry's delay after a failure, doubling with each failure... */
  retryBaseMs: number;
  /** ...up to this. */
  retryMaxMs: number;
  /** No attempt after this long from the event (Standard Webhooks: about a day). */
  retryWindowMs: number;
  /** One attempt's budget (DNS, connect, answer headers). */
  timeoutMs: number;
  /** How long a claim holds a delivery: a process that dies mid-attempt leaves it due again after this. */
  leaseMs: number;
  /** Attempts in flight in one process, shared fairly between accounts... */
  concurrency: number;
  /** ...and at most this many of one account's claimed at a time. */
  perAccount: number;
  /** Delivered and failed deliveries are kept in the log this long. */
  retentionMs: number;
  /**
   * After a failed attempt an endpoint's other deliveries wait (unattempted) this long, doubling with each
   * further failure in a row...
   */
  endpointBackoffMs: number;
  /** ...up to this: a dead endpoint costs an attempt a minute, not one per event. */
  endpointBackoffMaxMs: number;
}

export const DEFAULT_EVENT_WEBHOOK_SETTINGS: EventWebhookSettings = {
  pollMs: 1_000,
  retryBaseMs: 5_000,
  retryMaxMs: 60 * 60_000,
  retryWindowMs: 24 * 60 * 60_000,
  timeoutMs: 5_000,
  leaseMs: 2 * 60_000,
  concurrency: 8,
  perAccount: 2,
  retentionMs: 30 * 24 * 60 * 60_000,
  endpointBackoffMs: 1_000,
  endpointBackoffMaxMs: 60_000,
};

/** The variable of each setting (docs/configuration.md lists them; test/e2e/ops-config.test.ts checks it does). */
export const EVENT_WEBHOOK_ENV: Record<keyof EventWebhookSettings, string> = {
  pollMs: "EVENT_WEBHOOK_POLL_MS",
  retryBaseMs: "EVENT_WEBHOOK_RETRY_BASE_MS",
  retryMaxMs: "EVENT_WEBHOOK_RETRY_MAX_MS",
  retryWindowMs: "EVENT_WEBHOOK_RETRY_WINDOW_MS",
  timeoutMs: "EVENT_WEBHOOK_TIMEOUT_MS",
  leaseMs: "EVENT_WEBHOOK_LEASE_MS",
  concurrency: "EVENT_WEBHOOK_CONCURRENCY",
  perAccount: "EVENT_WEBHOOK_PER_ACCOUNT",
  retentionMs: "EVENT_WEBHOOK_RETENTION_MS",
  endpointBackoffMs: "EVENT_WEBHOOK_ENDPOINT_BACKOFF_MS",
  endpointBackoffMaxMs: "EVENT_WEBHOOK_ENDPOINT_BACKOFF_MAX_MS",
};

/** The settings, each from its variable when that is a positive integer (anything else keeps the default). */
export function eventWebhookSettings(env: Record<string, string | undefined> = process.env): EventWebhookSettings {
  const out = { ...DEFAULT_EVENT_WEBHOOK_SETTINGS };
  for (const key of Object.keys(EVENT_WEBHOOK_ENV) as (keyof EventWebhookSettings)[]) {
    const raw = env[EVENT_WEBHOOK_ENV[key]];
    if (raw !== undefined && /^\d{1,12}$/.test(raw) && Number(raw) > 0) out[key] = Number(raw);
  }
  // A claim must outlast an attempt, or a slow answer would be sent twice.
  out.leaseMs = Math.max(out.leaseMs, out.timeoutMs * 2);
  return out;
}

/** When to try again after the `attempts`-th failed attempt, or null to give up (past the retry window). */
export function nextAttemptAt(attempts: number, now: number, giveUpAt: number, s: EventWebhookSettings): number | null {
  const at = now + Math.min(s.retryMaxMs, s.retryBaseMs * 2 ** Math.min(attempts - 1, 30));
  return at > giveUpAt ? null : at;
}

/** The event webhooks' retry schedule and settings (control/webhooks/settings.ts): pure functions. */
import { expect, test } from "bun:test";
import { DEFAULT_EVENT_WEBHOOK_SETTINGS as D, eventWebhookSettings, nextAttemptAt } from "../../control/webhooks/settings.ts";

const HOUR = 3_600_000;

test("retries come 5 s after the first failure, doubling to at most an hour, and stop 24 hours after the event", () => {
  const giveUpAt = 24 * HOUR;
  const delays = [1, 2, 3, 4, 10, 11, 12, 40].map((n) => nextAttemptAt(n, 0, giveUpAt, D));
  expect(delays).toEqual([5_000, 10_000, 20_000, 40_000, 2_560_000, HOUR, HOUR, HOUR]);
  // Every attempt of a receiver that never answers, failing at once each time, until the window is over.
  let at = 0;
  let attempts = 0;
  for (let next: number | null = 0; next !== null; next = nextAttemptAt(++attempts, at, giveUpAt, D)) at = next;
  expect(attempts).toBe(33); // the first, 10 more in the next 85 minutes, then 22 an hour apart
  expect(at).toBeLessThanOrEqual(giveUpAt);
  expect(nextAttemptAt(1, giveUpAt - 1_000, giveUpAt, D)).toBeNull();
});

test("settings come from EVENT_WEBHOOK_* when they are positive whole numbers; a claim always outlasts two attempts", () => {
  expect(eventWebhookSettings({})).toEqual(D);
  const s = eventWebhookSettings({ EVENT_WEBHOOK_POLL_MS: "50", EVENT_WEBHOOK_RETRY_BASE_MS: "200", EVENT_WEBHOOK_TIMEOUT_MS: "4000", EVENT_WEBHOOK_LEASE_MS: "1000" });
  expect(s).toMatchObject({ pollMs: 50, retryBaseMs: 200, timeoutMs: 4000, leaseMs: 8000 });
  for (const bad of ["0", "-5", "1.5", "abc", ""]) expect(eventWebhookSettings({ EVENT_WEBHOOK_POLL_MS: bad }).pollMs).toBe(D.pollMs);
});

/**
 * Per-link health of a webhook endpoint: consecutive failures back the link off exponentially (its deliveries
 * are dropped meanwhile, so a dead endpoint costs a slot once per backoff, not once per click), and an endpoint
 * that keeps failing long enough is paused, which the sender reports so the pause is stored on the link and
 * shown to its owner.
 *
 * The defaults, and why: backoff 1 s doubling to at most 60 s, so a receiver that restarts or deploys for a
 * minute loses a few clicks' webhooks and is tried again within a minute of coming back. A pause needs both 20
 * consecutive failures and 10 minutes since the first of them: the count alone would pause a busy link on a
 * few seconds' outage; the time alone would pause a quiet link on two unlucky clicks. At the backoff's pace a
 * link clicked steadily reaches 20 failures after about 15 minutes of an endpoint that never answers.
 *
 * Health is kept per link *version* (the link's updatedAt): a newer version (the owner set webhookUrl again,
 * or changed the link otherwise) starts afresh. Pure decisions on a clock given to them; no I/O.
 */

export interface HealthPolicy {
  backoffBaseMs: number;
  backoffMaxMs: number;
  pauseAfterFailures: number;
  pauseAfterMs: number;
}

export const DEFAULT_HEALTH_POLICY: HealthPolicy = {
  backoffBaseMs: 1_000,
  backoffMaxMs: 60_000,
  pauseAfterFailures: 20,
  pauseAfterMs: 10 * 60_000,
};

export interface LinkHealth {
  version: number;
  failures: number;
  firstFailureAt: number;
  /** Deliveries before this time are dropped. */
  retryAt: number;
  paused: boolean;
}

/** How long to hold back after the `failures`-th consecutive failure: base, doubling, at most the maximum. */
export function backoffMs(failures: number, p: HealthPolicy): number {
  return Math.min(p.backoffMaxMs, p.backoffBaseMs * 2 ** Math.min(failures - 1, 30));
}

/** Whether a link with this health is to be paused now. */
export function pauseDue(h: LinkHealth, now: number, p: HealthPolicy): boolean {
  return !h.paused && h.failures >= p.pauseAfterFailures && now - h.firstFailureAt >= p.pauseAfterMs;
}

/** The words an owner reads: how many failed, over how long, and the last failure. */
export function pauseReason(h: LinkHealth, now: number, lastFailure: string): string {
  const minutes = Math.floor((now - h.firstFailureAt) / 60_000);
  return `${h.failures} deliveries in a row failed over ${minutes} minutes; the last: ${lastFailure}. Set the webhook URL again to resume.`;
}

/** Links tracked at most; beyond, the longest-tracked is forgotten (it starts afresh if it fails again). */
const MAX_TRACKED = 100_000;

export class EndpointHealth {
  private readonly links = new Map<string, LinkHealth>();

  constructor(private readonly policy: HealthPolicy = DEFAULT_HEALTH_POLICY) {}

  /** Whether a delivery for this link version may go at `now` (not while backing off or paused). */
  allows(linkId: string, version: number, now: number): boolean {
    const h = this.links.get(linkId);
    if (h === undefined) return true;
    if (version > h.version) {
      this.links.delete(linkId);
      return true;
    }
    return !h.paused && now >= h.retryAt;
  }

  succeeded(linkId: string): void {
    this.links.delete(linkId);
  }

  /** Counts a failure and backs the link off; returns the pause's reason when this failure pauses the link. */
  failed(linkId: string, version: number, now: number, failure: string): string | null {
    let h = this.links.get(linkId);
    if (h === undefined || version > h.version) {
      h = { version, failures: 0, firstFailureAt: now, retryAt: 0, paused: false };
      this.links.delete(linkId);
      if (this.links.size >= MAX_TRACKED) this.links.delete(this.links.keys().next().value!);
      this.links.set(linkId, h);
    }
    h.failures++;
    h.retryAt = Math.max(h.retryAt, now + backoffMs(h.failures, this.policy));
    if (!pauseDue(h, now, this.policy)) return null;
    h.paused = true;
    return pauseReason(h, now, failure);
  }

  /** Links currently tracked (failing, backing off or paused). */
  get size(): number {
    return this.links.size;
  }
}

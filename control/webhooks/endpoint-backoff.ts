/**
 * Per endpoint, in one worker: after a failed attempt, the endpoint's other due deliveries are given back
 * unattempted until a backoff ends (doubling with each failure in a row, as a link's click webhook backs off:
 * shared/webhooks/endpoint-health.ts's backoffMs), so a dead receiver with a thousand events waiting costs one
 * attempt per backoff, not a thousand timeouts, and its account's other endpoints keep their turns. A success
 * clears it. Pure decisions on a clock given to them; kept in memory (a restarted process starts afresh).
 */
import { backoffMs, type HealthPolicy } from "../../shared/webhooks/endpoint-health.ts";

/** Endpoints tracked at most; beyond, the longest-tracked is forgotten (it starts afresh if it fails again). */
const MAX_TRACKED = 10_000;

export class EndpointBackoff {
  private readonly endpoints = new Map<string, { failures: number; until: number }>();
  private readonly policy: HealthPolicy;

  constructor(baseMs: number, maxMs: number) {
    this.policy = { backoffBaseMs: baseMs, backoffMaxMs: maxMs, pauseAfterFailures: Infinity, pauseAfterMs: Infinity };
  }

  /** Until when the endpoint's deliveries wait; 0 when they may be attempted now. */
  waitUntil(endpointId: string, now: number): number {
    const e = this.endpoints.get(endpointId);
    return e !== undefined && e.until > now ? e.until : 0;
  }

  succeeded(endpointId: string): void {
    this.endpoints.delete(endpointId);
  }

  failed(endpointId: string, now: number): void {
    let e = this.endpoints.get(endpointId);
    if (e === undefined) {
      if (this.endpoints.size >= MAX_TRACKED) this.endpoints.delete(this.endpoints.keys().next().value!);
      this.endpoints.set(endpointId, (e = { failures: 0, until: 0 }));
    }
    e.failures++;
    e.until = Math.max(e.until, now + backoffMs(e.failures, this.policy));
  }
}

/**
 * For tests that only need a maxHits counter in a given state (e.g. at its limit, as after another redirector
 * served the last click): a ledger with nothing durable behind it, whose counters start at `start` and may count
 * up to any limit. The store's reservations themselves are tested through the real ledger (redirector/hit-policy.ts).
 */
import type { HitLedger } from "../../shared/ports.ts";

export function ledgerFrom(start: number): HitLedger {
  return {
    start: async () => ({ count: start, reserved: Number.MAX_SAFE_INTEGER }),
    reserve: async () => ({ reserved: Number.MAX_SAFE_INTEGER, final: false }),
    release: async () => {},
  };
}

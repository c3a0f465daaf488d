/**
 * The event-webhook delivery worker, one per control process: it claims due deliveries from the store's outbox
 * (several processes share the work: a claim is exclusive until its lease ends), sends each signed in the Standard
 * Webhooks format through the click webhooks' own delivery (shared/webhooks/sender.ts: the SSRF check at every
 * attempt, the request pinned to the checked address, no redirects, a timeout), and records the attempt: delivered,
 * due again after an exponential backoff, or failed once the retry window is over. After a failure, the
 * endpoint's other deliveries are given back unattempted while it backs off (endpoint-backoff.ts).
 *
 * Fair between accounts twice over: a claim takes at most `perAccount` of one account's due rows, and the attempts
 * wait in the click webhooks' fair queue (shared/webhooks/fair-queue.ts: accounts in turn, at most `perAccount` in
 * flight for one account and 4 for one host), so an account whose receiver hangs holds few slots. A process that
 * dies mid-attempt loses nothing: its claimed rows come due again when their lease ends.
 */
import type { ShortBase } from "../../shared/domain.ts";
import type { ClaimedDelivery, EventWebhookStore } from "../../shared/ports.ts";
import { FairQueue } from "../../shared/webhooks/fair-queue.ts";
import { deliver, hostOf } from "../../shared/webhooks/sender.ts";
import type { ResolveHost } from "../../shared/webhooks/ssrf.ts";
import { EndpointBackoff } from "./endpoint-backoff.ts";
import { deliveryBody, onEventWritten, onSendAgain } from "./events.ts";
import { nextAttemptAt, type EventWebhookSettings } from "./settings.ts";

export interface EventWebhookWorkerOptions {
  store: EventWebhookStore;
  settings: EventWebhookSettings;
  /** WEBHOOK_ALLOW_PRIVATE, as for click webhooks. */
  allowPrivate: boolean;
  /** BASE_URL and the base domain: a link.clicked delivery's shortUrl is made with them when it is sent (deliveryBody). */
  base: ShortBase;
  resolve?: ResolveHost;
  now?: () => number;
  /** A failed claim or record (the store down): the loop carries on after the next poll. */
  onError?: (err: unknown) => void;
}

export interface EventWebhookWorker {
  /** Looks for due deliveries now instead of at the next poll. */
  wake(): void;
  /** Stops claiming and waits for the attempts under way. */
  stop(): Promise<void>;
}

/** How often finished deliveries past the retention are pruned... */
const PRUNE_EVERY_MS = 60 * 60_000;
/** ...and how many at most in one statement (more: the next round goes on), so SQLite's lock is held briefly. */
const PRUNE_AT_ONCE = 5_000;

export function startEventWebhookWorker(o: EventWebhookWorkerOptions): EventWebhookWorker {
  const s = o.settings;
  const now = o.now ?? Date.now;
  // Claims hold at most twice the slots (see round()), so the queue's own bounds never drop a claimed delivery.
  const room = s.concurrency * 2;
  const queue = new FairQueue<ClaimedDelivery>(
    { concurrency: s.concurrency, perAccount: s.perAccount, perHost: 4, accountQueue: room, totalQueue: room },
    (d) => hostOf(d.url),
  );
  const inFlight = new Set<Promise<void>>();
  const backoff = new EndpointBackoff(s.endpointBackoffMs, s.endpointBackoffMaxMs);
  let running = true;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let wakeSleep: (() => void) | null = null;
  /** A wake that came during a round: the next round starts without sleeping. */
  let woken = false;
  let lastPrune = 0;

  async function attempt(d: ClaimedDelivery): Promise<void> {
    const wait = backoff.waitUntil(d.endpointId, now());
    if (wait > 0) {
      await o.store.postponeWebhookDelivery(d.id, d.lease, wait);
      return;
    }
    const job = { url: d.url, secret: d.secret, payload: {}, id: d.id, accountId: d.accountId, linkId: d.endpointId, linkVersion: 0 };
    const outcome = await deliver(job, deliveryBody(o.base, d.eventType, d.payload), { allowPrivate: o.allowPrivate, resolve: o.resolve }, s.timeoutMs);
    const at = now();
    const ok = outcome.result === "delivered";
    const error = ok ? null : (outcome as { failure: string }).failure;
    if (ok) backoff.succeeded(d.endpointId);
    else backoff.failed(d.endpointId, at);
    await o.store.finishWebhookAttempt(d.id, d.lease, { ok, at, error, nextAttemptAt: ok ? null : nextAttemptAt(d.attempts + 1, at, d.giveUpAt, s) });
  }

  /** Starts what the fair queue lets start now. */
  function pump(): void {
    if (!running) return; // claimed but not started: due again after their lease
    for (let d = queue.take(); d !== undefined; d = queue.take()) {
      const started = d;
      const p = attempt(started).catch(o.onError ?? (() => {})).finally(() => {
        queue.finish(started);
        inFlight.delete(p);
        pump();
        wake(); // a slot is free: more may be due
      });
      inFlight.add(p);
    }
  }

  async function round(): Promise<void> {
    const t = now();
    if (t - lastPrune >= PRUNE_EVERY_MS) {
      lastPrune = t;
      if ((await o.store.pruneWebhookDeliveries(t - s.retentionMs, PRUNE_AT_ONCE)) === PRUNE_AT_ONCE) lastPrune = 0;
    }
    // Claim only what can start soon: twice the slots, less what is held (the rest stays for other processes).
    const free = room - queue.queued - queue.inFlight;
    if (free <= 0) return;
    for (const d of await o.store.claimWebhookDeliveries(t, t + s.leaseMs, s.perAccount, free)) queue.push(d);
    pump();
  }

  function wake(): void {
    woken = true;
    wakeSleep?.();
  }

  const loop = (async () => {
    while (running) {
      woken = false;
      try {
        await round();
      } catch (err) {
        o.onError?.(err);
      }
      if (!running) break;
      if (woken) continue;
      await new Promise<void>((resolve) => {
        wakeSleep = resolve;
        timer = setTimeout(resolve, s.pollMs);
      });
      wakeSleep = null;
      if (timer) clearTimeout(timer);
    }
  })();
  const unsubscribe = [onEventWritten(wake), onSendAgain((endpointId) => backoff.succeeded(endpointId))];

  return {
    wake,
    async stop() {
      running = false;
      for (const stopListening of unsubscribe) stopListening();
      wake();
      await loop;
      while (inFlight.size) await Promise.all([...inFlight]);
    },
  };
}

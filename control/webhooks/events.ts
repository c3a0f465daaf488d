/**
 * Events into the outbox. A link change's events are made here (linkEventsFor) and written by the link store in the
 * change's own transaction (shared/ports/links.ts LinkEvents), so the change and its events commit together: a
 * store that refuses the events refuses the change. With no endpoint subscribed (the usual case) no event is made
 * and the change writes nothing more. Clicks' events are written after their batch commits (clickEvents).
 */
import { shortUrlOf, type ShortBase } from "../../shared/domain.ts";
import { newId } from "../../shared/ids.ts";
import { toLinkObject, type LinkRecord } from "../../shared/link.ts";
import type { EventWebhookStore, StoredClick, WebhookEventRecord, WebhookEventType } from "../../shared/ports.ts";
import type { Deps } from "../deps.ts";
import { eventWebhookSettings } from "./settings.ts";

/** Workers of this process, woken when an event is written here so it goes out at once instead of at the next poll. */
const wakers = new Set<() => void>();

export function onEventWritten(wake: () => void): () => void {
  wakers.add(wake);
  return () => wakers.delete(wake);
}

/** Wakes this process's workers: deliveries are due now. */
export function wakeWorkers(): void {
  for (const wake of wakers) wake();
}

/** Workers of this process, told when their owner sends a delivery again, so its endpoint's backoff does not hold it. */
const sendAgainListeners = new Set<(endpointId: string) => void>();

export function onSendAgain(listener: (endpointId: string) => void): () => void {
  sendAgainListeners.add(listener);
  return () => sendAgainListeners.delete(listener);
}

/** A delivery of this endpoint is due now by its owner's wish: tried at once here (other processes back off as before). */
export function sendingAgain(endpointId: string): void {
  for (const listener of sendAgainListeners) listener(endpointId);
  wakeWorkers();
}

/** The Standard Webhooks payload shape: type, timestamp, data. */
export function eventBody(type: WebhookEventType, at: number, data: object): string {
  return JSON.stringify({ type, timestamp: new Date(at).toISOString(), data });
}

/**
 * A delivery's body as it is sent and shown in the log. A link.clicked event is made from the click alone (its link
 * unread), and the store puts in the link's slug and domain (plain column values) when it writes the delivery; its
 * shortUrl is added here, by shortUrlOf, the one rule for a short address, rather than copied into either store's
 * SQL. Other events carry the link object, shortUrl included, as made.
 */
export function deliveryBody(base: ShortBase, type: WebhookEventType, payload: string): string {
  if (type !== "link.clicked") return payload;
  const body = JSON.parse(payload) as { data?: Record<string, unknown> };
  const data = body.data;
  if (!data || typeof data.slug !== "string" || typeof data.domain !== "string" || "shortUrl" in data) return payload;
  data.shortUrl = shortUrlOf(base, data.domain, data.slug);
  return JSON.stringify(body);
}

const retryWindowMs = () => eventWebhookSettings().retryWindowMs;

/**
 * How long an answer of subscribedAccounts is kept: an endpoint created in another process gets events from at
 * most this long after its creation (this process's own endpoint changes clear it at once: forgetSubscribers).
 */
const SUBSCRIBERS_TTL_MS = 2_000;
/** Per store and event type, the subscribed accounts, or null when the store could not say (then: everyone). */
const subscribers = new Map<EventWebhookStore, Map<WebhookEventType, { at: number; accounts: Promise<Set<string> | null> }>>();

/**
 * The accounts with an endpoint subscribed to `type`, kept a couple of seconds (null: unknown, make every event).
 * Without it every click and every created link built an event payload and sent it to the store, which then found
 * no endpoint: the full bench measured bulk create at 3.5x one INSERT (2.6x before), and the drain paid a JSON
 * payload per click.
 */
function subscribedAccounts(store: EventWebhookStore, type: WebhookEventType): Promise<Set<string> | null> {
  let byType = subscribers.get(store);
  if (!byType) subscribers.set(store, (byType = new Map()));
  const now = Date.now();
  const kept = byType.get(type);
  if (kept && now - kept.at < SUBSCRIBERS_TTL_MS) return kept.accounts;
  const accounts = store.subscribedAccounts(type).then(
    (ids) => new Set(ids),
    () => (byType!.delete(type), null), // the store was away: ask again next time
  );
  byType.set(type, { at: now, accounts });
  return accounts;
}

/** Forgets the kept subscribers, after an endpoint of this process changed (its owner expects events at once). */
export function forgetSubscribers(): void {
  subscribers.clear();
}

async function write(store: EventWebhookStore, events: WebhookEventRecord[]): Promise<void> {
  if (events.length === 0) return;
  try {
    if ((await store.enqueueWebhookEvents(events)) > 0) wakeWorkers();
  } catch (err) {
    console.warn(`event webhooks: ${events.length} event(s) not written: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * The link.created, link.updated or link.deleted events of these links (their state after the change; before it,
 * for deletes), for the link store to write with the change; none when no endpoint of their owners is subscribed.
 * After the change, eventsWritten wakes the workers.
 */
export async function linkEventsFor(
  deps: Deps, type: Exclude<WebhookEventType, "link.clicked">, links: readonly LinkRecord[],
): Promise<WebhookEventRecord[]> {
  const accounts = links.length === 0 ? null : await subscribedAccounts(deps.store, type);
  const subscribed = accounts ? links.filter((l) => accounts.has(l.accountId)) : links;
  const at = deps.now();
  return subscribed.map((link) => ({
    id: `evt_${newId()}`, type, accountId: link.accountId, linkId: link.id, at, giveUpAt: at + retryWindowMs(),
    payload: eventBody(type, at, toLinkObject(link, deps.config, at)),
  }));
}

/** After a link change committed with events: they go out at once here rather than at the next poll. */
export function eventsWritten(events: readonly WebhookEventRecord[]): void {
  if (events.length > 0) wakeWorkers();
}

/**
 * The click drain's hook: one link.clicked event per stored click, for the endpoints of the link's owner. Call it
 * after the batch is committed. Event ids come from the click's batch and place in it, so a batch delivered again
 * (the drain's redelivery after a failure) writes nothing twice. Never throws.
 */
export async function clickEvents(store: EventWebhookStore, clicks: StoredClick[], now: number = Date.now()): Promise<void> {
  if (clicks.length === 0) return;
  // A click does not carry its account: with any subscriber, every click's event is made and the store keeps those
  // of subscribed accounts; with none (the usual case), nothing is made at all.
  const accounts = await subscribedAccounts(store, "link.clicked");
  if (accounts !== null && accounts.size === 0) return;
  const giveUpAt = now + retryWindowMs();
  const seen = new Map<string, number>();
  const placeInBatch = (batch: string) => {
    const n = seen.get(batch) ?? 0;
    seen.set(batch, n + 1);
    return n;
  };
  return write(store, clicks.map((c) => ({
    id: `clk_${c.batch}_${placeInBatch(c.batch)}`, type: "link.clicked" as const, accountId: null, linkId: c.linkId, at: now, giveUpAt,
    payload: eventBody("link.clicked", now, { linkId: c.linkId, clickedAt: new Date(c.ts).toISOString(), ...c.dims, bot: c.bot, firstVisit: c.firstVisit }),
  })));
}

/** What a click drain writes to (control/clicks/drain.ts's ClickSink). */
interface ClickSink {
  recordClicks(clicks: StoredClick[]): Promise<void>;
}

/**
 * The click drain's sink, with link.clicked events written after each committed write: wire it where a drain is
 * made (`new ClickDrain(queue, withClickEvents(sink, store), …)`). A failed write is not acknowledged by the drain
 * and comes back; its events then are written once, as their ids repeat.
 */
export function withClickEvents(sink: ClickSink, store: EventWebhookStore): ClickSink {
  return {
    async recordClicks(clicks) {
      await sink.recordClicks(clicks);
      await clickEvents(store, clicks);
    },
  };
}

/**
 * The click queue (design §2 data flow 4-5): the redirector enqueues click batches, one drain loop
 * (control/clicks/drain.ts) reads them, writes them to the store and acknowledges them. Adapters: memory (the
 * embedded writer thread's queue, and the memory HotState's) and Redis (a stream, one entry per batch); one
 * contract suite (test/contract/click-queue.contract.ts) runs against each.
 */

/** A click as the redirector saw it, before the drain reduces it to a StoredClick. */
export interface ClickEvent {
  /** The redirector names only clicks of links with a webhook (their message id); "" otherwise. Queues do not keep it. */
  id: string;
  linkId: string;
  ts: number;
  /** Raw User-Agent (at most 512 characters); parsed off the hot path. */
  ua: string;
  /** Client address, used to look up the country (region, city) and to hash the visitor (VisitorLedger); never stored. */
  ip: string | null;
  /** Country when the hot path already knew it (trusted header or a country rule). */
  country: string | null;
  referrer: string | null;
  variant: number | null;
  /** Index of the redirect rule that matched, null when none did. */
  rule: number | null;
  /** Arrived through a QR code clink made (its address carried QR_MARKER, shared/clicks/dimensions.ts). */
  qr: boolean;
}

export interface QueuedClick {
  id: string;
  /** The batch it was queued in; a read never splits a batch, so its clicks always travel together. */
  batch: string;
  event: ClickEvent;
}

/**
 * A queued click whose id (`<batch>:<index>`) is built only when asked for: the drain never asks, and a string per
 * click is work a read of 40,000 clicks pays 40,000 times. For the adapters.
 */
export class LazyQueuedClick implements QueuedClick {
  constructor(readonly batch: string, private readonly index: number, readonly event: ClickEvent) {}

  get id(): string {
    return `${this.batch}:${this.index}`;
  }
}

export interface ClickQueue {
  /**
   * The events are one batch, stored, delivered and acknowledged as a unit. Every field of an event comes back
   * but its id, which an adapter may replace by `<batch>:<index>` (the Redis stream does).
   */
  enqueueClicks(events: ClickEvent[]): Promise<void>;
  /**
   * Clicks not yet acknowledged by any consumer (oldest first), about `max`: a batch written together is
   * delivered together, so one read may hold more when a batch does.
   */
  readClicks(consumer: string, max: number): Promise<QueuedClick[]>;
  /**
   * Acknowledges batches (QueuedClick.batch) once their clicks are written: all of a read's together, so a
   * batch read but not yet written is never acknowledged alongside written ones.
   */
  ackBatches(batches: string[]): Promise<void>;
  /**
   * Number of clicks waiting or read but unacknowledged (for readiness and metrics). Redis may overestimate
   * after its stream cap dropped clicks, until the queue is empty again.
   */
  queueDepth(): Promise<number>;
}

/**
 * The producer's side of a click queue: where the redirector hands its click batches (HotState's queue, or in
 * the embedded default the writer thread that queues them beside SQLite). `queueDepth` feeds metrics and readiness.
 */
export type ClickIntake = Pick<ClickQueue, "enqueueClicks" | "queueDepth">;

/** The consumer's side: what the drain loop needs. */
export type ClickSource = Pick<ClickQueue, "readClicks" | "ackBatches">;

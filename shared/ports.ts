/**
 * The storage ports (design §2). Each has two adapters and one contract test suite run against both:
 * Store (SQLite, Postgres; its roles in ports/) is the source of truth; HotState (memory, Redis) holds what the hot path reads.
 */
import type { CompiledLink } from "./link.ts";

export * from "./ports/accounts.ts";
export * from "./ports/keys.ts";
export * from "./ports/links.ts";
export * from "./ports/clicks.ts";
export * from "./ports/admin.ts";
export * from "./ports/store.ts";

/** A click as the redirector saw it, before the consumer reduces it to a StoredClick. */
export interface ClickEvent {
  id: string;
  linkId: string;
  ts: number;
  /** Raw User-Agent (at most 512 characters); parsed off the hot path. */
  ua: string;
  /** Client address, used only to look up the country; never stored. */
  ip: string | null;
  /** Country when the hot path already knew it (trusted header or a country rule). */
  country: string | null;
  referrer: string | null;
  variant: number | null;
}

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

/**
 * Where the redirector hands its click batches: HotState's queue (the Redis stream in scale mode), or in the
 * embedded default the writer thread that stores them in SQLite. `queueDepth` feeds metrics and readiness.
 */
export type ClickQueue = Pick<HotState, "enqueueClicks" | "queueDepth">;

export interface QueuedClick {
  id: string;
  /** The batch it was queued in; a read never splits a batch, so its clicks always travel together. */
  batch: string;
  event: ClickEvent;
}

export interface HotState {
  /** undefined: not cached; null: cached as unknown (negative cache). */
  getLink(key: string): Promise<CompiledLink | null | undefined>;
  setLink(key: string, link: CompiledLink | null, ttlMs?: number): Promise<void>;
  /** Drops the cached link and tells every process (redirectors) to drop its in-process copy. */
  invalidateLink(key: string): Promise<void>;
  onLinkInvalidated(listener: (key: string) => void): void;
  /**
   * Called once the subscriptions are in place again after they were interrupted (Redis restarted, the
   * connection dropped): notifications published meanwhile are lost, so whatever was cached on their account
   * must be re-read. In-process state never loses one and never calls it.
   */
  onResubscribed(listener: () => void): void;

  /**
   * One atomic step: if the link's counter is below `max`, increments it and returns the new count;
   * otherwise returns -1. A missing counter is first seeded with `seed()` (e.g. from the LinkStore).
   */
  takeHit(linkId: string, max: number, seed: () => Promise<number>): Promise<number>;
  /** Current counter, or null when not present. */
  peekHits(linkId: string): Promise<number | null>;
  /** Forget a link's counter (link deleted or its maxHits changed). */
  resetHits(linkId: string): Promise<void>;

  /**
   * Fixed window counter, exact under concurrency. A call takes `cost` units (default 1), refused ones too, and
   * is allowed while the window's total stays within `limit`.
   */
  rateLimit(bucket: string, limit: number, windowMs: number, cost?: number): Promise<RateLimitResult>;

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

  publish(channel: string, message: string): Promise<void>;
  subscribe(channel: string, listener: (message: string) => void): void;

  ping(): Promise<void>;
  close(): Promise<void>;
}

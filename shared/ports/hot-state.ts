/**
 * What the hot path shares between processes (design §2), one narrow port per role. Adapters: memory (the
 * embedded default) and Redis (scale mode); each role has its own contract suite run against both. Code that
 * needs one role takes that role; `HotState` is all of them on one connection.
 */
import type { CompiledLink } from "../link.ts";
import type { ClickQueue } from "./click-queue.ts";

/** Compiled links by `domain/slug`, shared by every redirector, with invalidation across processes. */
export interface LinkCache {
  /** undefined: not cached; null: cached as unknown (negative cache). */
  getLink(key: string): Promise<CompiledLink | null | undefined>;
  setLink(key: string, link: CompiledLink | null, ttlMs?: number): Promise<void>;
  /** Drops the cached link and tells every process (redirectors) to drop its in-process copy. */
  invalidateLink(key: string): Promise<void>;
  /**
   * New links, cached (setLink's TTL) and each announced as invalidateLink announces a drop, so a copy of the key
   * cached as unknown goes: what setLink and invalidateLink per link do, in one batch (a bulk's round trips).
   */
  publishLinks(links: readonly { key: string; link: CompiledLink }[]): Promise<void>;
  onLinkInvalidated(listener: (key: string) => void): void;
  /**
   * Called once the subscriptions are in place again after they were interrupted (Redis restarted, the
   * connection dropped): notifications published meanwhile are lost, so whatever was cached on their account
   * must be re-read. In-process state never loses one and never calls it.
   */
  onResubscribed(listener: () => void): void;
}

/** Where a missing counter starts, read from the store (LinkHitReservations.storedHits). */
export interface HitStart {
  /** At or above every hit served so far under the limit, by any counter before (max of recorded and reserved). */
  count: number;
  /** Hits the store has reserved: the counter serves none beyond before reserving more. */
  reserved: number;
}

/** What a counter may count to after one reservation in the store (LinkHitReservations.reserveHits). */
export interface HitGrant {
  /** Hits the store has reserved: no counter serves beyond. */
  reserved: number;
  /** Nothing more can be reserved: `reserved` is the stored limit. */
  final: boolean;
}

/** A link's hits in the store as its counter uses them (the redirector's hit policy builds one per link). */
export interface HitLedger {
  /** Where a counter started now starts; null when the link is gone. */
  start(): Promise<HitStart | null>;
  /** Reserves the link's next block of hits; null when the stored link has no limit (or is gone). */
  reserve(): Promise<HitGrant | null>;
  /** Gives back the hits reserved above `served`: an in-process counter (the only one its link has) stopping cleanly. */
  release(served: number): Promise<void>;
}

/**
 * Per-link click counters for maxHits, exact across processes. A counter counts only hits its store reserved
 * first (in blocks), so one lost in a crash (process memory, Redis) is started again above every hit it served.
 */
export interface HitCounters {
  /**
   * One hit: if the link's counter is below `max` and within its reservation, increments it and returns the new
   * count; at `max`, or when the store can reserve no more, returns -1. A missing counter is started from
   * `ledger.start()` (reserving nothing: concurrent starts agree), and one that used up its reservation reserves
   * the next block; one store call per link at a time in a process (concurrent takes wait for it).
   */
  takeHit(linkId: string, max: number, ledger: HitLedger): Promise<number>;
  /** Current counter, or null when not present. */
  peekHits(linkId: string): Promise<number | null>;
  /** Forget a link's counter (link deleted or its maxHits changed). */
  resetHits(linkId: string): Promise<void>;
}

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

export interface RateLimiter {
  /**
   * Fixed window counter, exact under concurrency. A call takes `cost` units (default 1), refused ones too, and
   * is allowed while the window's total stays within `limit`.
   */
  rateLimit(bucket: string, limit: number, windowMs: number, cost?: number): Promise<RateLimitResult>;
}

/** Messages between processes (e.g. API key revocations), at most once: a listener may miss one while disconnected. */
export interface Bus {
  publish(channel: string, message: string): Promise<void>;
  subscribe(channel: string, listener: (message: string) => void): void;
}

/**
 * MCP sessions (Streamable HTTP `Mcp-Session-Id`, 2025 protocol revisions), shared by every control process so that
 * any of them serves any session (no sticky routing). Per account: its live session ids, each with when it expires
 * if unused. A session holds no data: the MCP server of each request is built afresh (control/mcp/routes.ts).
 */
export interface McpSessionStore {
  /** Registers session `id` of `accountId`, live for `idleMs`; past `maxPerAccount` its least recently used ends. */
  openMcpSession(accountId: string, id: string, idleMs: number, maxPerAccount: number): Promise<void>;
  /** Whether `id` is a live session of `accountId` (never of another account); a live one is kept `idleMs` more. */
  touchMcpSession(accountId: string, id: string, idleMs: number): Promise<boolean>;
  /** Ends session `id` of `accountId` for every process; false when it was not live. */
  endMcpSession(accountId: string, id: string): Promise<boolean>;
}

export interface HotStateLifecycle {
  /** Resolves while the backend is reachable (and, in Redis, the subscriptions are in place): readiness. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Every role on one backend: what a process opens once and hands around as `deps.hot`. */
export type HotState = LinkCache & HitCounters & RateLimiter & ClickQueue & Bus & McpSessionStore & HotStateLifecycle;

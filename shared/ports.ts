/**
 * The storage ports (design §2). Each has two adapters and one contract test suite run against both:
 * LinkStore (SQLite, Postgres) is the source of truth; HotState (memory, Redis) holds what the hot path reads.
 */
import type { CompiledLink, LinkRecord, LinkStatus } from "./link.ts";

export interface Account {
  id: string;
  email: string;
  passwordHash: string;
  createdAt: number;
}

export interface Session {
  /** SHA-256 of the session token; the token itself is only in the visitor's cookie. */
  idHash: string;
  accountId: string;
  csrfToken: string;
  createdAt: number;
  expiresAt: number;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string;
  /** SHA-256 hex of the full key; the key itself is shown once and never stored. */
  keyHash: string;
  /** Display prefix, e.g. "ck_AbC1". */
  prefix: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

export interface LinkFilter {
  limit: number;
  /** Opaque to callers: the id of the last link on the previous page. */
  cursor?: string;
  tag?: string;
  folder?: string;
  status?: LinkStatus;
  q?: string;
}

/** A click as written to storage: the address is already reduced to a country, never stored raw. */
export interface StoredClick {
  /**
   * The delivery it came in (a stream entry, a writer-thread batch): delivered, redelivered and written whole,
   * so it is what makes a redelivery harmless. A store keeps each batch's clicks of a link once.
   */
  batch: string;
  linkId: string;
  ts: number;
  country: string | null;
  device: string;
  browser: string;
  os: string;
  referrer: string | null;
  /** Index of the A/B variant served, null when none. */
  variant: number | null;
}

export interface RollupStats {
  total: number;
  byDevice: Record<string, number>;
  byBrowser: Record<string, number>;
  byCountry: Record<string, number>;
  byVariant: Record<string, number>;
  /** Clicks per hour (hour start in epoch ms) since `fromHour`; hours without clicks are absent. */
  hourly: { hour: number; clicks: number }[];
}

export interface LinkStore {
  /** Applies pending migrations; safe when two processes start together. */
  migrate(): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;

  createAccount(account: Account): Promise<boolean>; // false: email already registered
  getAccountByEmail(email: string): Promise<Account | null>;
  getAccount(id: string): Promise<Account | null>;

  createSession(session: Session): Promise<void>;
  getSession(idHash: string): Promise<Session | null>;
  deleteSession(idHash: string): Promise<void>;
  /** Removes every session expired at `now`; returns how many. */
  deleteExpiredSessions(now: number): Promise<number>;

  createApiKey(key: ApiKeyRecord): Promise<void>;
  findApiKeyByHash(keyHash: string): Promise<ApiKeyRecord | null>;
  listApiKeys(accountId: string): Promise<ApiKeyRecord[]>;
  /** Returns the revoked key, or null when it is unknown or another account's. */
  revokeApiKey(accountId: string, id: string, at: number): Promise<ApiKeyRecord | null>;
  touchApiKey(id: string, at: number): Promise<void>;

  /** One multi-row write. Returns, per input row, whether it was inserted (false: domain+slug taken). */
  insertLinks(links: LinkRecord[]): Promise<boolean[]>;
  getLink(domain: string, slug: string): Promise<LinkRecord | null>;
  getLinkById(id: string): Promise<LinkRecord | null>;
  /** Writes every field of the link (by id) except hits and createdAt. */
  /**
   * Writes every field of the link but its hit count. With `expectedUpdatedAt`, only over that version (compare
   * and set on updatedAt, which every update raises). Returns whether a row was written.
   */
  updateLink(link: LinkRecord, expectedUpdatedAt?: number): Promise<boolean>;
  deleteLink(id: string): Promise<void>;
  /** Newest first. */
  listLinks(accountId: string, filter: LinkFilter): Promise<{ links: LinkRecord[]; nextCursor: string | null }>;

  /**
   * Raw clicks, hourly rollups and link hit counts in one transaction. Idempotent per (batch, link): a batch written before is
   * skipped whole, so every click of a batch must come in the same call. Clicks of unknown links are dropped.
   */
  recordClicks(clicks: StoredClick[]): Promise<void>;
  /** A link's raw clicks, batch by batch, oldest first (streamed: a link may have millions). */
  rawClicks(linkId: string): AsyncIterable<StoredClick>;
  getStats(linkId: string, fromHour: number): Promise<RollupStats>;

  /** Migrations this code knows that the database has not applied yet (0: schema current). Readiness. */
  pendingMigrations(): Promise<number>;
  /**
   * Every account, API key (hashes only), link and click rollup, in that order (owners before what they own),
   * from one consistent snapshot. Sessions and raw clicks are not exported. For `npm run export`.
   */
  exportAll(): AsyncIterable<ExportRecord>;
  /**
   * Writes records from exportAll (of either adapter) in one transaction. Idempotent: a record whose id or
   * unique value (email, key hash, domain + slug, rollup cell) exists already is skipped, and so is one whose
   * owner is missing (e.g. its account was skipped). Owners must come before, or in the same batch as, what
   * they own. For `npm run import`.
   */
  importRecords(batch: ExportRecord[]): Promise<ImportResult>;
}

/** One hourly rollup cell as exported: `country` null = unknown, `variant` null = no A/B variant. */
export interface ClickRollupRecord {
  linkId: string;
  /** Start of the hour, epoch ms. */
  hour: number;
  device: string;
  browser: string;
  country: string | null;
  variant: number | null;
  clicks: number;
}

/** One record of a full export (JSON lines: one `{ type, data }` per line). */
export type ExportRecord =
  | { type: "account"; data: Account }
  | { type: "apiKey"; data: ApiKeyRecord }
  | { type: "link"; data: LinkRecord }
  | { type: "rollup"; data: ClickRollupRecord };

export type ExportRecordType = ExportRecord["type"];

/** Per record type, how many were written and how many skipped (already present or owner missing). */
export type ImportResult = Record<ExportRecordType, { inserted: number; skipped: number }>;

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

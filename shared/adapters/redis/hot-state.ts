/**
 * HotState in Redis (scale mode, design §2): one code path for a single node and a Redis Cluster.
 * Every key carries a hash tag, so a multi-key step (the click stream's scripts) stays in one slot.
 *
 * Click queue: one stream entry per enqueueClicks call holds the whole batch (`n` clicks, body `b` = the
 * batch's columns as JSON, shared/clicks/columns.ts), because one command per click cost the redirector
 * nearly half its throughput. A click's id is `<entry id>:<index>`; an entry is read, claimed and acknowledged as a unit. A counter next to the stream,
 * kept in step by the enqueue and ack scripts, makes queueDepth a click count without scanning the stream.
 *
 * Failure policy: a down Redis must not stall the hot path. Commands issued while disconnected are
 * rejected at once (no offline queue), commands on a hung connection time out after `commandTimeoutMs`,
 * and the client keeps reconnecting in the background, so the adapter recovers by itself. Such failures
 * surface as AppError("unavailable") so callers can fall back (LRU, Postgres) or answer 503.
 */
import { Cluster, Redis, ReplyError } from "ioredis";
import { AppError } from "../../errors.ts";
import type { CompiledLink } from "../../link.ts";
import { clicksFromJson, clicksToJson } from "../../clicks/columns.ts";
import type { ClickEvent, HotState, QueuedClick, RateLimitResult } from "../../ports.ts";

export interface RedisHotStateOptions {
  /** Single node, e.g. redis://127.0.0.1:6379. Ignored when `clusterNodes` is given. */
  url?: string;
  clusterNodes?: { host: string; port: number }[];
  /** Namespace of every key and channel (default "clink"); tests use a random one to isolate themselves. */
  prefix?: string;
  /** Per-command deadline (default 1000 ms). */
  commandTimeoutMs?: number;
  /** Pending clicks idle this long are taken over from a consumer presumed dead (default 30 s). */
  claimIdleMs?: number;
  /**
   * Approximate cap on the click stream, in entries (MAXLEN ~), so an absent consumer cannot exhaust Redis
   * memory. An entry is one enqueueClicks batch (the redirector sends up to 1,024 clicks, fewer when quiet),
   * so the default 20,000 entries keeps between 20 thousand and 20 million clicks.
   */
  streamMaxLen?: number;
  /** Connection errors, e.g. each failed reconnect attempt (default: ignored; ping() reports health). */
  onError?: (err: Error) => void;
}

type Client = Redis | Cluster;

/** The Lua commands registered on the client (ioredis `defineCommand`). */
interface Scripts {
  clinkTakeHit(key: string, max: number): Promise<number>;
  clinkRateLimit(key: string, windowMs: number, cost: number): Promise<[number, number]>;
  clinkEnqueue(stream: string, counter: string, maxLen: number, n: number, body: string): Promise<string>;
  clinkAck(stream: string, counter: string, group: string, ...entryIds: string[]): Promise<number>;
  clinkDepth(stream: string, counter: string): Promise<number>;
}

const GROUP = "clink-consumers";
const NOT_SEEDED = -2;

/** -2: no counter yet (caller seeds); -1: limit reached; otherwise the new count. */
const TAKE_HIT_LUA = `
local v = redis.call('GET', KEYS[1])
if not v then return ${NOT_SEEDED} end
if tonumber(v) >= tonumber(ARGV[1]) then return -1 end
return redis.call('INCR', KEYS[1])`;

/** Fixed window: the first hit of a window starts its expiry. Returns { count, ms left }. */
const RATE_LIMIT_LUA = `
local n = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}`;

/**
 * One entry per batch and the click counter, in one command. The counter goes first: before Redis 7 a script
 * may not write after a non-deterministic command (XADD *).
 */
const ENQUEUE_LUA = `
redis.call('INCRBY', KEYS[2], ARGV[2])
return redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'n', ARGV[2], 'b', ARGV[3])`;

/**
 * Acknowledges and deletes entries, taking their clicks off the counter. Only an entry that still exists is
 * subtracted, so a second ack (two consumers after a takeover) does not count twice. Entries of the older
 * one-click format (field \`e\`) were never counted.
 */
const ACK_LUA = `
local gone = 0
for i = 2, #ARGV do
  redis.call('XACK', KEYS[1], ARGV[1], ARGV[i])
  local entry = redis.call('XRANGE', KEYS[1], ARGV[i], ARGV[i])[1]
  if entry then
    local f = entry[2]
    for j = 1, #f, 2 do
      if f[j] == 'n' then gone = gone + (tonumber(f[j + 1]) or 0) end
    end
    redis.call('XDEL', KEYS[1], ARGV[i])
  end
end
if gone > 0 then redis.call('DECRBY', KEYS[2], gone) end
return gone`;

/**
 * Clicks waiting or pending. MAXLEN trimming drops entries without touching the counter, so the counter is
 * reset whenever the stream is empty; each entry holds at least one click (also one of the older format).
 */
const DEPTH_LUA = `
local len = redis.call('XLEN', KEYS[1])
if len == 0 then
  redis.call('DEL', KEYS[2])
  return 0
end
local n = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
return math.max(n, len)`;

/** Lower bound of the clicks-per-entry estimate that sizes a read (see readFromGroup). */
const MIN_CLICKS_PER_ENTRY = 64;
const CLUSTER_SUBSCRIBER_CHECK_MS = 500;

export class RedisHotState implements HotState {
  private readonly client: Client;
  private readonly scripts: Scripts;
  private readonly makeSubscriber: () => Client;
  private subscriber: Client | null = null;
  /** Channels (full names) and their listeners; one subscriber connection serves them all. */
  private readonly listeners = new Map<string, ((message: string) => void)[]>();
  private subscribed: Promise<unknown> = Promise.resolve();
  private readonly resubscribedListeners: (() => void)[] = [];
  private clusterWatch: ReturnType<typeof setInterval> | null = null;
  private clusterFirstSubscribed: (() => void) | null = null;
  /** Until the first connection attempt settles, commands wait for it instead of failing. */
  private boot: Promise<void> | null;
  /** One seed read per link per process, however many clicks arrive together. */
  private readonly seeding = new Map<string, Promise<void>>();
  private groupReady = false;
  private lastClaimAt = 0;
  /** Mean clicks per entry in the last read, never below MIN_CLICKS_PER_ENTRY: sizes the next read's COUNT. */
  private clicksPerEntry = MIN_CLICKS_PER_ENTRY;

  private readonly prefix: string;
  private readonly streamKey: string;
  private readonly counterKey: string;
  private readonly invalidateChannel: string;
  private readonly claimIdleMs: number;
  private readonly streamMaxLen: number;
  private readonly commandTimeoutMs: number;
  private readonly onError: (err: Error) => void;

  constructor(client: Client, makeSubscriber: () => Client, opts: RedisHotStateOptions = {}) {
    this.client = client;
    this.makeSubscriber = makeSubscriber;
    this.prefix = opts.prefix ?? "clink";
    this.streamKey = `${this.prefix}:{clicks}:stream`;
    this.counterKey = `${this.prefix}:{clicks}:count`;
    this.invalidateChannel = `${this.prefix}:invalidate`;
    this.claimIdleMs = opts.claimIdleMs ?? 30_000;
    this.streamMaxLen = opts.streamMaxLen ?? 20_000;
    this.commandTimeoutMs = opts.commandTimeoutMs ?? 1_000;
    client.defineCommand("clinkTakeHit", { numberOfKeys: 1, lua: TAKE_HIT_LUA });
    client.defineCommand("clinkRateLimit", { numberOfKeys: 1, lua: RATE_LIMIT_LUA });
    client.defineCommand("clinkEnqueue", { numberOfKeys: 2, lua: ENQUEUE_LUA });
    client.defineCommand("clinkAck", { numberOfKeys: 2, lua: ACK_LUA });
    client.defineCommand("clinkDepth", { numberOfKeys: 2, lua: DEPTH_LUA });
    this.scripts = client as unknown as Scripts;
    // Without a listener ioredis prints every failed reconnect attempt; the owner decides what to log.
    this.onError = opts.onError ?? (() => {});
    client.on("error", this.onError);
    if (client instanceof Cluster) client.on("node error", this.onError);
    this.boot = firstAttempt(client).then(() => {
      this.boot = null;
    });
  }

  private linkKey = (key: string) => `${this.prefix}:{link:${key}}`;
  private hitsKey = (linkId: string) => `${this.prefix}:{hits:${linkId}}`;
  private rateKey = (bucket: string) => `${this.prefix}:{rl:${bucket}}`;

  /** Runs one operation once the client has tried to connect, mapping connection failures to 503. */
  private async run<T>(op: (c: Client) => Promise<T>): Promise<T> {
    if (this.boot) await this.boot;
    try {
      return await op(this.client);
    } catch (err) {
      throw asAppError(err);
    }
  }

  async getLink(key: string): Promise<CompiledLink | null | undefined> {
    const raw = await this.run((c) => c.get(this.linkKey(key)));
    if (raw === null) return undefined;
    // The negative-cache entry is JSON null. A record of another version (rolling upgrade) is a miss.
    const link = parseJson<CompiledLink | null>(raw);
    if (link === undefined || (link !== null && link.v !== 1)) return undefined;
    return link;
  }

  async setLink(key: string, link: CompiledLink | null, ttlMs = link ? 3_600_000 : 5_000): Promise<void> {
    await this.run((c) => c.set(this.linkKey(key), JSON.stringify(link), "PX", Math.max(1, Math.round(ttlMs))));
  }

  async invalidateLink(key: string): Promise<void> {
    // Delete before publishing, so a listener that re-reads Redis sees the miss.
    await this.run((c) => c.del(this.linkKey(key)));
    await this.run((c) => c.publish(this.invalidateChannel, key));
  }

  onLinkInvalidated(listener: (key: string) => void): void {
    this.listen(this.invalidateChannel, listener);
  }

  onResubscribed(listener: () => void): void {
    this.resubscribedListeners.push(listener);
    this.subscriberConnection();
  }

  async takeHit(linkId: string, max: number, seed: () => Promise<number>): Promise<number> {
    const key = this.hitsKey(linkId);
    // Normally one round, two after seeding; resetHits racing with the seeding may empty the counter again.
    for (let round = 0; round < 3; round++) {
      const n = await this.run(() => this.scripts.clinkTakeHit(key, max));
      if (n !== NOT_SEEDED) return n;
      let p = this.seeding.get(linkId);
      if (!p) {
        // SET NX: when another process seeded first, its counter (maybe already incremented) wins.
        p = seed()
          .then((seeded) => this.run((c) => c.set(key, String(seeded), "NX")))
          .then(() => undefined)
          .finally(() => this.seeding.delete(linkId));
        this.seeding.set(linkId, p);
      }
      await p;
    }
    throw new AppError("unavailable", "Hit counter could not be seeded", { retryAfter: 1 });
  }

  async peekHits(linkId: string): Promise<number | null> {
    const raw = await this.run((c) => c.get(this.hitsKey(linkId)));
    return raw === null ? null : Number(raw);
  }

  async resetHits(linkId: string): Promise<void> {
    await this.run((c) => c.del(this.hitsKey(linkId)));
  }

  async rateLimit(bucket: string, limit: number, windowMs: number, cost = 1): Promise<RateLimitResult> {
    const [count, msLeft] = await this.run(() => this.scripts.clinkRateLimit(this.rateKey(bucket), windowMs, cost));
    return {
      allowed: count <= limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetSeconds: Math.max(1, Math.ceil(msLeft / 1000)),
    };
  }

  async enqueueClicks(events: ClickEvent[]): Promise<void> {
    if (events.length === 0) return;
    // One command per batch, not per click: each ioredis command has its own timer, reply and promise.
    const body = clicksToJson(events);
    await this.run(() => this.scripts.clinkEnqueue(this.streamKey, this.counterKey, this.streamMaxLen, events.length, body));
  }

  async readClicks(consumer: string, max: number): Promise<QueuedClick[]> {
    if (max <= 0) return [];
    return this.run(async (c) => {
      await this.ensureGroup(c);
      try {
        return await this.readFromGroup(c, consumer, max);
      } catch (err) {
        // The stream (and its group) vanished, e.g. Redis restarted without persistence.
        if (!(err instanceof Error) || !err.message.startsWith("NOGROUP")) throw err;
        this.groupReady = false;
        await this.ensureGroup(c);
        return this.readFromGroup(c, consumer, max);
      }
    });
  }

  /**
   * COUNT is in entries, so each step asks for as many entries as should hold the clicks still wanted, after
   * the mean batch size seen last time (at least MIN_CLICKS_PER_ENTRY). Entries vary in size (a busy redirector
   * writes 1,024 clicks to one, a quiet one a handful), so a step can fetch more than `max`: only whole entries
   * up to `max` (at least one) are returned, from the oldest, and the rest stay pending for this consumer, first
   * in line at its next read. Without that cut, a backlog after a quiet spell made one read, and so one Postgres
   * transaction, of up to 160,000 clicks. The cut reads each entry's click count (`n`), not its body.
   */
  private async readFromGroup(c: Client, consumer: string, max: number): Promise<QueuedClick[]> {
    const entriesRead: { entry: RawEntry; clicks: number }[] = [];
    const seen = new Set<string>();
    let clicks = 0;
    const take = (raw: RawEntry[]) => {
      for (const entry of raw) {
        // A batch must appear once per read: the store keeps it once per (batch, link), so a duplicate in one
        // write would count twice. Today read("0") resets the idle time of what it returns before XAUTOCLAIM
        // looks, so this never fires; it keeps that ordering from being load-bearing.
        if (seen.has(entry[0])) continue;
        seen.add(entry[0]);
        const n = entryClickCount(entry[1]);
        entriesRead.push({ entry, clicks: n });
        clicks += n;
      }
    };
    const count = () => Math.max(1, Math.ceil((max - clicks) / this.clicksPerEntry));
    const read = async (from: "0" | ">") => {
      const reply = await c.xreadgroup("GROUP", GROUP, consumer, "COUNT", count(), "STREAMS", this.streamKey, from);
      take(streamEntries(reply));
    };
    // 1. What this consumer was given before and has not acknowledged (it crashed, failed to write, or the
    //    previous read cut it off).
    await read("0");
    // 2. Now and then, what a dead consumer left behind.
    const now = Date.now();
    if (clicks < max && now - this.lastClaimAt >= Math.min(5_000, this.claimIdleMs / 4)) {
      this.lastClaimAt = now;
      const claimed = await c.xautoclaim(this.streamKey, GROUP, consumer, this.claimIdleMs, "0-0", "COUNT", count());
      take((claimed as [next: string, entries: RawEntry[]])[1]);
    }
    // 3. New clicks, without blocking: the consumer loop paces itself.
    if (clicks < max) await read(">");
    if (entriesRead.length > 0) this.clicksPerEntry = Math.max(MIN_CLICKS_PER_ENTRY, clicks / entriesRead.length);
    // Stream order across the three reads; an entry's clicks are in batch order already.
    entriesRead.sort((a, b) => compareStreamIds(a.entry[0], b.entry[0]));
    let kept = 0;
    for (let total = 0; kept < entriesRead.length; kept++) {
      total += entriesRead[kept]!.clicks;
      if (total > max && kept > 0) break;
    }
    return this.unpackEntries(c, entriesRead.slice(0, kept).map((e) => e.entry)).flatMap((e) => e.clicks);
  }

  /**
   * One QueuedClick per event of each entry (a batch, or a single event in the older `e` format). Entries
   * whose body is gone (trimmed while pending) or unreadable are acknowledged and skipped.
   */
  private unpackEntries(c: Client, raw: RawEntry[]): EntryClicks[] {
    const out: EntryClicks[] = [];
    const gone: string[] = [];
    for (const [id, fields] of raw) {
      const events = fields ? entryEvents(id, fields) : undefined;
      if (!events) {
        gone.push(id); // a poison entry must not block the queue forever
        continue;
      }
      out.push({ id, clicks: events.map((event, i) => ({ id: `${id}:${i}`, batch: id, event })) });
    }
    if (gone.length) this.scripts.clinkAck(this.streamKey, this.counterKey, GROUP, ...gone).catch(() => {});
    return out;
  }

  private async ensureGroup(c: Client): Promise<void> {
    if (this.groupReady) return;
    try {
      await c.xgroup("CREATE", this.streamKey, GROUP, "0", "MKSTREAM");
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith("BUSYGROUP")) throw err;
    }
    this.groupReady = true;
  }

  /** Acknowledges the entries the ids belong to: callers acknowledge every click of a read together. */
  async ackBatches(batches: string[]): Promise<void> {
    if (batches.length === 0) return;
    // A batch is a stream entry. Deleting acknowledged entries keeps the stream to "waiting + pending" (queueDepth).
    await this.run(() => this.scripts.clinkAck(this.streamKey, this.counterKey, GROUP, ...batches));
  }

  /** Clicks waiting or pending; an overestimate after MAXLEN trimming, until the queue is empty again. */
  async queueDepth(): Promise<number> {
    return this.run(() => this.scripts.clinkDepth(this.streamKey, this.counterKey));
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.run((c) => c.publish(this.channelName(channel), message));
  }

  subscribe(channel: string, listener: (message: string) => void): void {
    this.listen(this.channelName(channel), listener);
  }

  private channelName = (channel: string) => `${this.prefix}:ch:${channel}`;

  private listen(channel: string, listener: (message: string) => void): void {
    const known = this.listeners.get(channel);
    if (known) {
      known.push(listener);
      return;
    }
    this.listeners.set(channel, [listener]);
    // The subscriber keeps an offline queue: SUBSCRIBE waits for its connection; nothing hot waits on it.
    this.subscribed = this.subscriberConnection().subscribe(channel);
    this.subscribed.then(() => this.clusterFirstSubscribed?.(), () => {});
  }

  private subscriberConnection(): Client {
    if (this.subscriber) return this.subscriber;
    const sub = this.makeSubscriber();
    sub.on("message", (channel: string, message: string) => {
      for (const l of this.listeners.get(channel) ?? []) {
        // A throwing listener must neither starve the others nor reach ioredis' reply parser.
        try {
          l(message);
        } catch (err) {
          this.onError(err instanceof Error ? err : new Error(String(err)));
        }
      }
    });
    // On every (re)connect, subscribe everything again: ioredis resubscribes what it knew, but a SUBSCRIBE
    // that failed while the connection was down would otherwise be lost. Duplicates are harmless.
    // After a reconnect, the listeners hear that messages may have been lost, once the subscriptions are back
    // (so nothing published from then on is missed either).
    let connectedBefore = false;
    sub.on("ready", () => {
      const channels = [...this.listeners.keys()];
      const subscribed = channels.length > 0 ? sub.subscribe(...channels) : Promise.resolve();
      this.subscribed = subscribed;
      subscribed.catch(() => {});
      if (connectedBefore) subscribed.then(() => this.notifyResubscribed(), () => {});
      connectedBefore = true;
    });
    sub.on("error", () => {});
    if (sub instanceof Cluster) this.watchClusterSubscriber(sub);
    this.subscriber = sub;
    return sub;
  }

  /**
   * A Cluster client never emits "ready" again when its pub/sub connection drops: ioredis' ClusterSubscriber
   * opens a new connection to some node and subscribes the channels again, silently. That replacement is a new
   * connection object, so it is looked for twice a second, and reported once its channels are subscribed
   * (ClusterSubscriber marks that by making it `lastActiveSubscriber`). ioredis is pinned to 6.0.0 for this;
   * the Cluster contract test drops the connection and fails should these internals change.
   */
  private watchClusterSubscriber(sub: Cluster): void {
    const internals = () => (sub as unknown as { subscriber?: { subscriber?: unknown; lastActiveSubscriber?: unknown } }).subscriber;
    let seen: unknown = undefined;
    const check = (report: boolean) => {
      if (!report && seen !== undefined) return;
      const cs = internals();
      const active = cs?.subscriber;
      if (!active || cs.lastActiveSubscriber !== active || active === seen) return;
      const reconnect = seen !== undefined;
      seen = active;
      if (reconnect && report) this.notifyResubscribed();
    };
    // The first connection is taken as it is once a SUBSCRIBE on it is answered (listen), so that a drop soon
    // after is not mistaken for the first connection.
    this.clusterFirstSubscribed = () => check(false);
    this.clusterWatch = setInterval(() => check(true), CLUSTER_SUBSCRIBER_CHECK_MS);
    this.clusterWatch.unref?.();
  }

  private notifyResubscribed(): void {
    for (const l of this.resubscribedListeners) {
      try {
        l();
      } catch (err) {
        this.onError(err instanceof Error ? err : new Error(String(err)));
      }
    }
  }

  /** Checks the command connection and, when listeners exist, that their subscriptions are in place. */
  async ping(): Promise<void> {
    await this.run((c) => c.ping());
    if (!this.subscriber) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("subscribe timed out")), this.commandTimeoutMs);
    });
    try {
      await Promise.race([this.subscribed, deadline]);
      if (this.subscriber.status !== "ready") throw new Error("subscriber disconnected");
    } catch {
      throw new AppError("unavailable", "Redis subscriber is not connected", { retryAfter: 1 });
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.clusterWatch) clearInterval(this.clusterWatch);
    this.subscriber?.disconnect();
    // QUIT lets replies in flight arrive; a Redis that does not answer must not hold up shutdown.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const giveUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.commandTimeoutMs)));
    await Promise.race([this.client.quit().catch(() => {}), giveUp]);
    clearTimeout(timer);
    this.client.disconnect();
  }
}

type RawEntry = [id: string, fields: string[] | null];

function streamEntries(reply: unknown): RawEntry[] {
  const streams = reply as [string, RawEntry[]][] | null;
  return streams?.[0]?.[1] ?? [];
}

/**
 * How many clicks an entry holds, from its `n` field (written with every batch), without parsing its body:
 * 1 for the older one-click format, 0 for an entry whose body is gone (trimmed while pending).
 */
function entryClickCount(fields: string[] | null): number {
  if (!fields) return 0;
  const n = fields.indexOf("n");
  if (n < 0 || n % 2 !== 0) return 1;
  const value = Number(fields[n + 1]);
  return Number.isInteger(value) && value > 0 ? value : 1;
}

/** The events of an entry, or undefined when it has none that can be read. */
function entryEvents(id: string, fields: string[]): ClickEvent[] | undefined {
  const b = fields.indexOf("b");
  if (b >= 0 && b % 2 === 0) {
    const batch = parseJson<unknown>(fields[b + 1]);
    // An array: the events as objects, written by a version before the column form (a deploy loses nothing).
    if (Array.isArray(batch)) return batch.length > 0 ? (batch as ClickEvent[]) : undefined;
    const events = clicksFromJson(batch, id);
    return events && events.length > 0 ? events : undefined;
  }
  // Written by a version with one entry per click: accepted, so a deploy loses nothing already queued.
  const e = fields.indexOf("e");
  const event = e >= 0 && e % 2 === 0 ? parseJson<ClickEvent>(fields[e + 1]) : undefined;
  return event ? [event] : undefined;
}

/** The clicks of one stream entry, each with its queue id `<entry id>:<index>`. */
interface EntryClicks {
  id: string;
  clicks: QueuedClick[];
}

/** Stream order of two entry ids `<ms>-<seq>` (compared per entry, not per click). */
function compareStreamIds(a: string, b: string): number {
  const ad = a.indexOf("-"), bd = b.indexOf("-");
  return Number(a.slice(0, ad)) - Number(b.slice(0, bd)) || Number(a.slice(ad + 1)) - Number(b.slice(bd + 1));
}

/** Redis answered with an error that means "not now" rather than "your command is wrong". */
const TRANSIENT_REPLY = /^(CLUSTERDOWN|LOADING|TRYAGAIN|MASTERDOWN|READONLY|BUSY )/;

/** Connection trouble (closed, timed out, cluster not ready...) becomes a 503; a bug stays itself (a 500). */
function asAppError(err: unknown): unknown {
  if (err instanceof AppError || err instanceof TypeError || err instanceof RangeError) return err;
  if (err instanceof ReplyError && !TRANSIENT_REPLY.test((err as Error).message)) return err;
  return new AppError("unavailable", "Hot state (Redis) is unavailable", { retryAfter: 1 });
}

/** Resolves when the client is ready or its first attempt failed (after which commands fail fast). */
function firstAttempt(client: Client): Promise<void> {
  if (client.status === "ready") return Promise.resolve();
  return new Promise((resolve) => {
    const events = ["ready", "reconnecting", "end", "close"] as const;
    const done = () => {
      for (const e of events) client.off(e, done);
      resolve();
    };
    for (const e of events) client.once(e, done);
  });
}

function parseJson<T>(raw: string): T | undefined {
  try {
    return JSON.parse(raw) as T;
  } catch {
    return undefined;
  }
}

/** Single node (`url`) or Cluster (`clusterNodes`), with the fail-fast, self-healing connection policy. */
export function createRedisHotState(opts: RedisHotStateOptions): RedisHotState {
  const commandTimeout = opts.commandTimeoutMs ?? 1_000;
  const common = { commandTimeout, maxRetriesPerRequest: 1, connectTimeout: 2_000 };
  if (opts.clusterNodes?.length) {
    const cluster = new Cluster(opts.clusterNodes, {
      enableOfflineQueue: false,
      clusterRetryStrategy: (times: number) => Math.min(100 * times, 1_000),
      slotsRefreshTimeout: 1_000,
      redisOptions: common,
    });
    // The subscriber may queue SUBSCRIBE until it connects: nothing on the hot path waits on it.
    return new RedisHotState(cluster, () => cluster.duplicate([], { enableOfflineQueue: true }), opts);
  }
  const redis = new Redis(opts.url ?? "redis://127.0.0.1:6379", {
    ...common,
    enableOfflineQueue: false,
    retryStrategy: (times: number) => Math.min(100 * times, 1_000),
  });
  return new RedisHotState(redis, () => redis.duplicate({ enableOfflineQueue: true, commandTimeout: undefined }), opts);
}

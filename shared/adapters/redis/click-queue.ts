/**
 * ClickQueue in Redis (scale mode): a stream read by a consumer group, so every control process drains it and
 * what a dead one left unacknowledged is taken over by another.
 *
 * One stream entry per enqueueClicks call holds the whole batch (`n` clicks, body `b`: click-stream-entries.ts),
 * because one command per click cost the redirector nearly half its throughput. A click's id is
 * `<entry id>:<index>`; an entry is read, claimed and acknowledged as a unit. A counter next to the stream, kept in
 * step by the enqueue and ack scripts, makes queueDepth a click count without scanning the stream.
 */
import { clicksToJson } from "../../clicks/columns.ts";
import { LazyQueuedClick, type ClickEvent, type ClickQueue, type QueuedClick } from "../../ports.ts";
import type { RedisClient, RedisConnection } from "./connection.ts";
import { compareStreamIds, entryClickCount, entryEvents, streamEntries, type RawEntry } from "./click-stream-entries.ts";

export interface RedisClickQueueOptions {
  /** Pending clicks idle this long are taken over from a consumer presumed dead (default 30 s). */
  claimIdleMs?: number;
  /**
   * Approximate cap on the click stream, in entries (MAXLEN ~), so an absent consumer cannot exhaust Redis
   * memory. An entry is one enqueueClicks batch (the redirector sends up to 1,024 clicks, fewer when quiet),
   * so the default 20,000 entries keeps between 20 thousand and 20 million clicks.
   */
  streamMaxLen?: number;
}

interface Scripts {
  clinkEnqueue(stream: string, counter: string, maxLen: number, n: number, body: string): Promise<string>;
  clinkAck(stream: string, counter: string, group: string, ...entryIds: string[]): Promise<number>;
  clinkDepth(stream: string, counter: string): Promise<number>;
}

const GROUP = "clink-consumers";

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

export class RedisClickQueue implements ClickQueue {
  private readonly scripts: Scripts;
  private readonly streamKey: string;
  private readonly counterKey: string;
  private readonly claimIdleMs: number;
  private readonly streamMaxLen: number;
  private groupReady = false;
  private lastClaimAt = 0;
  /** Mean clicks per entry in the last read, never below MIN_CLICKS_PER_ENTRY: sizes the next read's COUNT. */
  private clicksPerEntry = MIN_CLICKS_PER_ENTRY;

  constructor(private readonly conn: RedisConnection, opts: RedisClickQueueOptions = {}) {
    this.streamKey = `${conn.prefix}:{clicks}:stream`;
    this.counterKey = `${conn.prefix}:{clicks}:count`;
    this.claimIdleMs = opts.claimIdleMs ?? 30_000;
    this.streamMaxLen = opts.streamMaxLen ?? 20_000;
    conn.script("clinkEnqueue", 2, ENQUEUE_LUA);
    conn.script("clinkAck", 2, ACK_LUA);
    this.scripts = conn.script<Scripts>("clinkDepth", 2, DEPTH_LUA);
  }

  async enqueueClicks(events: ClickEvent[]): Promise<void> {
    if (events.length === 0) return;
    // One command per batch, not per click: each ioredis command has its own timer, reply and promise.
    const body = clicksToJson(events);
    await this.conn.run(() => this.scripts.clinkEnqueue(this.streamKey, this.counterKey, this.streamMaxLen, events.length, body));
  }

  async readClicks(consumer: string, max: number): Promise<QueuedClick[]> {
    if (max <= 0) return [];
    return this.conn.run(async (c) => {
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
  private async readFromGroup(c: RedisClient, consumer: string, max: number): Promise<QueuedClick[]> {
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
    // 3. New clicks, without blocking: the drain loop paces itself.
    if (clicks < max) await read(">");
    if (entriesRead.length > 0) this.clicksPerEntry = Math.max(MIN_CLICKS_PER_ENTRY, clicks / entriesRead.length);
    // Stream order across the three reads; an entry's clicks are in batch order already.
    entriesRead.sort((a, b) => compareStreamIds(a.entry[0], b.entry[0]));
    let kept = 0;
    for (let total = 0; kept < entriesRead.length; kept++) {
      total += entriesRead[kept]!.clicks;
      if (total > max && kept > 0) break;
    }
    return this.unpackEntries(entriesRead.slice(0, kept).map((e) => e.entry));
  }

  /**
   * One QueuedClick per event of each entry (a batch, or a single event in the older `e` format). Entries
   * whose body is gone (trimmed while pending) or unreadable are acknowledged and skipped.
   */
  private unpackEntries(raw: RawEntry[]): QueuedClick[] {
    const out: QueuedClick[] = [];
    const gone: string[] = [];
    for (const [id, fields] of raw) {
      const events = fields ? entryEvents(id, fields) : undefined;
      if (!events) {
        gone.push(id); // a poison entry must not block the queue forever
        continue;
      }
      for (let i = 0; i < events.length; i++) out.push(new LazyQueuedClick(id, i, events[i]!));
    }
    if (gone.length) this.scripts.clinkAck(this.streamKey, this.counterKey, GROUP, ...gone).catch(() => {});
    return out;
  }

  private async ensureGroup(c: RedisClient): Promise<void> {
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
    await this.conn.run(() => this.scripts.clinkAck(this.streamKey, this.counterKey, GROUP, ...batches));
  }

  /** Clicks waiting or pending; an overestimate after MAXLEN trimming, until the queue is empty again. */
  async queueDepth(): Promise<number> {
    return this.conn.run(() => this.scripts.clinkDepth(this.streamKey, this.counterKey));
  }
}

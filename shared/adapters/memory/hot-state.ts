/**
 * HotState in process memory: the embedded default. Every operation completes synchronously inside
 * one JavaScript turn, which is what makes takeHit and rateLimit atomic here.
 */
import type { CompiledLink } from "../../link.ts";
import type { ClickEvent, HotState, QueuedClick, RateLimitResult } from "../../ports.ts";

interface Entry { link: CompiledLink | null; expiresAt: number }

export class MemoryHotState implements HotState {
  private links = new Map<string, Entry>();
  private hits = new Map<string, number>();
  private seeding = new Map<string, Promise<number>>();
  private windows = new Map<string, { end: number; count: number }>();
  /** Batches as enqueued; read and acknowledged whole. */
  private queue: QueuedClick[][] = [];
  private inFlight = new Map<string, QueuedClick[]>();
  private seq = 0;
  private invalidationListeners: ((key: string) => void)[] = [];
  private channels = new Map<string, ((m: string) => void)[]>();
  private sweepTimer: ReturnType<typeof setInterval>;

  constructor(private now: () => number = Date.now) {
    // Expired rate-limit windows would otherwise accumulate one entry per key forever.
    this.sweepTimer = setInterval(() => this.sweep(), 60_000);
    (this.sweepTimer as { unref?: () => void }).unref?.();
  }

  async getLink(key: string) {
    return this.getLinkSync(key);
  }

  /** Synchronous read for the embedded redirector's hot path. */
  getLinkSync(key: string): CompiledLink | null | undefined {
    const e = this.links.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= this.now()) {
      this.links.delete(key);
      return undefined;
    }
    return e.link;
  }

  async setLink(key: string, link: CompiledLink | null, ttlMs = link ? 3_600_000 : 5_000) {
    this.links.set(key, { link, expiresAt: this.now() + ttlMs });
  }

  async invalidateLink(key: string) {
    this.links.delete(key);
    for (const l of this.invalidationListeners) l(key);
  }

  onLinkInvalidated(listener: (key: string) => void) {
    this.invalidationListeners.push(listener);
  }

  /** In-process notifications cannot be missed. */
  onResubscribed(_listener: () => void) {}

  async takeHit(linkId: string, max: number, seed: () => Promise<number>): Promise<number> {
    if (!this.hits.has(linkId)) {
      // Concurrent first clicks share one seed read, then all increment the same counter.
      let p = this.seeding.get(linkId);
      if (!p) {
        p = seed();
        this.seeding.set(linkId, p);
      }
      try {
        const seeded = await p;
        if (!this.hits.has(linkId)) this.hits.set(linkId, seeded);
      } finally {
        this.seeding.delete(linkId);
      }
    }
    return this.takeHitSync(linkId, max)!;
  }

  /** Synchronous variant once the counter is seeded; undefined when it is not. */
  takeHitSync(linkId: string, max: number): number | undefined {
    const n = this.hits.get(linkId);
    if (n === undefined) return undefined;
    if (n >= max) return -1;
    this.hits.set(linkId, n + 1);
    return n + 1;
  }

  async peekHits(linkId: string) {
    return this.hits.get(linkId) ?? null;
  }

  async resetHits(linkId: string) {
    this.hits.delete(linkId);
  }

  async rateLimit(bucket: string, limit: number, windowMs: number, cost = 1): Promise<RateLimitResult> {
    const now = this.now();
    // As in Redis, a bucket's first hit starts its window. Windows aligned to the clock instead reset every bucket
    // at each multiple of windowMs, so a burst that straddled one got twice the limit (and a test, a flaky 429).
    let w = this.windows.get(bucket);
    if (!w || w.end <= now) {
      w = { end: now + windowMs, count: 0 };
      this.windows.set(bucket, w);
    }
    const resetSeconds = Math.max(1, Math.ceil((w.end - now) / 1000));
    w.count += cost;
    if (w.count > limit) return { allowed: false, limit, remaining: 0, resetSeconds };
    return { allowed: true, limit, remaining: limit - w.count, resetSeconds };
  }

  async enqueueClicks(events: ClickEvent[]) {
    this.enqueueClicksSync(events);
  }

  enqueueClicksSync(events: ClickEvent[]) {
    if (events.length === 0) return;
    const batch = `m${++this.seq}`;
    this.queue.push(events.map((event, i) => ({ id: `${batch}:${i}`, batch, event })));
  }

  /** Whole batches, as a stream reads whole entries: unacknowledged ones again first, like its pending list. */
  async readClicks(_consumer: string, max: number): Promise<QueuedClick[]> {
    const out: QueuedClick[] = [];
    for (const batch of this.inFlight.values()) {
      if (out.length > 0 && out.length + batch.length > max) return out;
      out.push(...batch);
    }
    while (this.queue.length > 0 && (out.length === 0 || out.length + this.queue[0]!.length <= max)) {
      const batch = this.queue.shift()!;
      this.inFlight.set(batch[0]!.batch, batch);
      out.push(...batch);
    }
    return out;
  }

  async ackBatches(batches: string[]) {
    for (const batch of batches) this.inFlight.delete(batch);
  }

  async queueDepth() {
    let depth = 0;
    for (const batch of this.queue) depth += batch.length;
    for (const batch of this.inFlight.values()) depth += batch.length;
    return depth;
  }

  async publish(channel: string, message: string) {
    for (const l of this.channels.get(channel) ?? []) l(message);
  }

  subscribe(channel: string, listener: (message: string) => void) {
    const ls = this.channels.get(channel) ?? [];
    ls.push(listener);
    this.channels.set(channel, ls);
  }

  async ping() {}

  async close() {
    clearInterval(this.sweepTimer);
  }

  private sweep() {
    const now = this.now();
    // By the window's own end: a fixed one-hour horizon would reset windows longer than an hour.
    for (const [k, w] of this.windows) if (w.end <= now) this.windows.delete(k);
    for (const [k, e] of this.links) if (e.expiresAt <= now) this.links.delete(k);
  }
}

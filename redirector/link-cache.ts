/**
 * Where the redirector finds a link (design §2 data flow 2): an in-process LRU first (synchronous,
 * no await on the hot path), then HotState, then a read-only LinkStore lookup that back-fills HotState.
 * Unknown slugs are cached briefly as null so slug scanning cannot hammer storage.
 *
 * Freshness: a change published by the control plane (HotState invalidation) drops the entry here, and
 * also voids a load that was in flight when it arrived, so a value read before the change is neither
 * kept nor written back. An entry nobody told us about expires after `ttlMs` (e.g. a change made while
 * the pub/sub connection was down). Availability: when both HotState and the store fail, an expired
 * entry is still served (stale-if-error), so links already seen keep redirecting.
 */
import { compileLink, type CompiledLink } from "../shared/link.ts";
import type { HotState, LinkStore } from "../shared/ports.ts";
import { withTimeout } from "../shared/time.ts";

interface Entry { link: CompiledLink | null; expiresAt: number }

/** A load in flight; `void` is set when an invalidation arrives before it completes. */
interface Load { promise: Promise<CompiledLink | null>; void: boolean }

export interface LinkCacheOptions {
  maxEntries?: number;
  /** How long a found link is trusted without hearing of a change (pub/sub is the fast path). */
  ttlMs?: number;
  negativeTtlMs?: number;
  /** Budget for a HotState read before falling back to the store. */
  hotTimeoutMs?: number;
  /**
   * Lifetime of a link written back to HotState after a store read. Short on purpose: the control plane
   * writes HotState on every change; a back-fill that raced with such a change heals within this time.
   */
  backfillTtlMs?: number;
}

/**
 * Bounded by two generations rather than one Map evicted from its front: deleting a Map's oldest key one at a
 * time leaves deleted slots that `keys().next()` walks again on every eviction, so under a slug scan (every
 * request a new key) eviction became the main cost of a 404 and grew as the scan went on (bench case 4:
 * 28 → 80 µs per request). New entries go to `young`; when it holds half the budget it becomes `old` and the
 * previous old generation is dropped whole. A hit in `old` moves the entry back to `young`, so links in use
 * survive the swap, which the insertion-ordered eviction did not do.
 */
export class LinkCache {
  private young = new Map<string, Entry>();
  private old = new Map<string, Entry>();
  private loading = new Map<string, Load>();
  private readonly generationSize: number;
  private readonly ttl: number;
  private readonly negativeTtl: number;
  private readonly hotTimeout: number;
  private readonly backfillTtl: number;
  /** Lookups answered from the LRU and lookups that missed it (for the cache hit ratio metric). */
  hits = 0;
  misses = 0;

  constructor(private hot: HotState, private store: LinkStore, o: LinkCacheOptions = {}) {
    this.generationSize = Math.max(1, Math.floor((o.maxEntries ?? 100_000) / 2));
    this.ttl = o.ttlMs ?? 60_000;
    this.negativeTtl = o.negativeTtlMs ?? 2_000;
    this.hotTimeout = o.hotTimeoutMs ?? 150;
    this.backfillTtl = o.backfillTtlMs ?? 10_000;
    hot.onLinkInvalidated((key) => this.invalidate(key));
    // Change notifications published while Redis was unreachable never arrive: re-read every cached link.
    hot.onResubscribed(() => this.expireAll());
  }

  /** The cached link (or null for a known-unknown slug) when fresh, else undefined. Never awaits. */
  peek(key: string, now: number): CompiledLink | null | undefined {
    let e = this.young.get(key);
    if (e === undefined) {
      e = this.old.get(key);
      if (e !== undefined && e.expiresAt > now) {
        this.old.delete(key);
        this.put(key, e);
      }
    }
    if (e === undefined || e.expiresAt <= now) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    return e.link;
  }

  /** Forgets a link here (a change was published); a load in flight for it is not kept either. */
  invalidate(key: string): void {
    this.young.delete(key);
    this.old.delete(key);
    const load = this.loading.get(key);
    if (load) {
      load.void = true;
      this.loading.delete(key);
    }
  }

  /** Loads a link (`key` is linkKey(domain, slug)) that is not in the LRU; concurrent misses for one key share one load. */
  load(key: string, domain: string, slug: string, now: number): Promise<CompiledLink | null> {
    const known = this.loading.get(key);
    if (known) return known.promise;
    const load: Load = { promise: undefined as unknown as Promise<CompiledLink | null>, void: false };
    load.promise = this.fetch(key, domain, slug, load).then(
      (link) => {
        if (this.loading.get(key) === load) this.loading.delete(key);
        if (!load.void) this.remember(key, link, now);
        return link;
      },
      (err) => {
        if (this.loading.get(key) === load) this.loading.delete(key);
        // Both HotState and the store failed: an expired copy beats a 503 (stale-if-error).
        const stale = this.young.get(key) ?? this.old.get(key);
        if (stale !== undefined && stale.link !== null) return stale.link;
        throw err;
      },
    );
    this.loading.set(key, load);
    return load.promise;
  }

  private async fetch(key: string, domain: string, slug: string, load: Load): Promise<CompiledLink | null> {
    let hot: CompiledLink | null | undefined;
    try {
      hot = await withTimeout(this.hot.getLink(key), this.hotTimeout);
    } catch {
      hot = undefined; // HotState down or slow: the store answers instead.
    }
    if (hot !== undefined) return hot;
    const record = await this.store.getLink(domain, slug);
    const link = record ? compileLink(record) : null;
    // A change published while we read the store may be newer than what we read: do not write it back.
    if (!load.void) this.hot.setLink(key, link, link ? this.backfillTtl : undefined).catch(() => {});
    return link;
  }

  private remember(key: string, link: CompiledLink | null, now: number) {
    this.old.delete(key);
    this.put(key, { link, expiresAt: now + (link ? this.ttl : this.negativeTtl) });
  }

  /** Stores in the young generation, first retiring it (and dropping the old one) when it is full. */
  private put(key: string, e: Entry) {
    if (this.young.size >= this.generationSize && !this.young.has(key)) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, e);
  }

  /**
   * Marks every entry as expired without dropping it: each link is re-read on its next request, and the old
   * copy still serves if that read fails. Used when change notifications may have been missed (Redis outage).
   */
  expireAll(): void {
    for (const e of this.young.values()) e.expiresAt = 0;
    for (const e of this.old.values()) e.expiresAt = 0;
  }

  get size(): number {
    return this.young.size + this.old.size;
  }

  clear() {
    this.young.clear();
    this.old.clear();
  }
}

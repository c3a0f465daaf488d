/**
 * Where the redirector finds a link (design §2 data flow 2): an in-process LRU first (synchronous,
 * no await on the hot path), then HotState, then a read-only LinkStore lookup that back-fills both.
 * Unknown slugs are cached briefly as null so slug scanning cannot hammer storage.
 */
import { compileLink, type CompiledLink } from "../shared/link.ts";
import type { HotState, LinkStore } from "../shared/ports.ts";

interface Entry { link: CompiledLink | null; expiresAt: number }

export interface LinkCacheOptions {
  maxEntries?: number;
  /** How long a found link is trusted without hearing of a change (pub/sub is the fast path). */
  ttlMs?: number;
  negativeTtlMs?: number;
  /** Budget for a HotState read before falling back to the store. */
  hotTimeoutMs?: number;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("timeout")), ms);
    p.then((v) => (clearTimeout(t), resolve(v)), (e) => (clearTimeout(t), reject(e)));
  });
}

export class LinkCache {
  private entries = new Map<string, Entry>();
  private loading = new Map<string, Promise<CompiledLink | null>>();
  private readonly max: number;
  private readonly ttl: number;
  private readonly negativeTtl: number;
  private readonly hotTimeout: number;

  constructor(private hot: HotState, private store: LinkStore, private domain: string, o: LinkCacheOptions = {}) {
    this.max = o.maxEntries ?? 100_000;
    this.ttl = o.ttlMs ?? 60_000;
    this.negativeTtl = o.negativeTtlMs ?? 2_000;
    this.hotTimeout = o.hotTimeoutMs ?? 150;
    hot.onLinkInvalidated((key) => this.entries.delete(key));
  }

  /** The cached link (or null for a known-unknown slug) when fresh, else undefined. Never awaits. */
  peek(key: string, now: number): CompiledLink | null | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (e.expiresAt <= now) return undefined;
    return e.link;
  }

  /** Loads a link that is not in the LRU; concurrent misses for one key share one load. */
  load(key: string, slug: string, now: number): Promise<CompiledLink | null> {
    let p = this.loading.get(key);
    if (!p) {
      p = this.fetch(key, slug).then(
        (link) => {
          this.loading.delete(key);
          this.remember(key, link, now);
          return link;
        },
        (err) => {
          this.loading.delete(key);
          throw err;
        },
      );
      this.loading.set(key, p);
    }
    return p;
  }

  private async fetch(key: string, slug: string): Promise<CompiledLink | null> {
    let hot: CompiledLink | null | undefined;
    try {
      hot = await withTimeout(this.hot.getLink(key), this.hotTimeout);
    } catch {
      hot = undefined; // HotState down or slow: the store answers instead.
    }
    if (hot !== undefined) return hot;
    const record = await this.store.getLink(this.domain, slug);
    const link = record ? compileLink(record) : null;
    this.hot.setLink(key, link).catch(() => {});
    return link;
  }

  private remember(key: string, link: CompiledLink | null, now: number) {
    if (this.entries.size >= this.max) {
      // Map iteration order is insertion order: the first key is the least recently stored.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, { link, expiresAt: now + (link ? this.ttl : this.negativeTtl) });
  }

  clear() {
    this.entries.clear();
  }
}

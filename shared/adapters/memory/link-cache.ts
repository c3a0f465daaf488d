/** LinkCache in process memory (embedded default): one Map, invalidations called in the same turn. */
import type { CompiledLink } from "../../link.ts";
import type { LinkCache } from "../../ports.ts";

interface Entry { link: CompiledLink | null; expiresAt: number }

export class MemoryLinkCache implements LinkCache {
  private links = new Map<string, Entry>();
  private invalidationListeners: ((key: string) => void)[] = [];

  constructor(private now: () => number = Date.now) {}

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

  async publishLinks(links: readonly { key: string; link: CompiledLink }[]) {
    const expiresAt = this.now() + 3_600_000;
    for (const { key, link } of links) {
      this.links.set(key, { link, expiresAt });
      for (const l of this.invalidationListeners) l(key);
    }
  }

  onLinkInvalidated(listener: (key: string) => void) {
    this.invalidationListeners.push(listener);
  }

  /** In-process notifications cannot be missed. */
  onResubscribed(_listener: () => void) {}

  /** Drops expired entries that nobody read again (they would otherwise stay forever). */
  sweep() {
    const now = this.now();
    for (const [k, e] of this.links) if (e.expiresAt <= now) this.links.delete(k);
  }
}

/**
 * LinkCache in Redis: one key per `domain/slug` holding the compiled link as JSON (JSON null: known unknown),
 * and invalidations on a channel every redirector listens on.
 */
import type { CompiledLink } from "../../link.ts";
import type { LinkCache } from "../../ports.ts";
import type { RedisBus } from "./bus.ts";
import { parseJson, type RedisConnection } from "./connection.ts";

export class RedisLinkCache implements LinkCache {
  private readonly invalidateChannel: string;

  constructor(private readonly conn: RedisConnection, private readonly bus: RedisBus) {
    this.invalidateChannel = `${conn.prefix}:invalidate`;
  }

  private linkKey = (key: string) => `${this.conn.prefix}:{link:${key}}`;

  async getLink(key: string): Promise<CompiledLink | null | undefined> {
    const raw = await this.conn.run((c) => c.get(this.linkKey(key)));
    if (raw === null) return undefined;
    // The negative-cache entry is JSON null. A record of another version (rolling upgrade) is a miss.
    const link = parseJson<CompiledLink | null>(raw);
    if (link === undefined || (link !== null && link.v !== 1)) return undefined;
    return link;
  }

  async setLink(key: string, link: CompiledLink | null, ttlMs = link ? 3_600_000 : 5_000): Promise<void> {
    await this.conn.run((c) => c.set(this.linkKey(key), JSON.stringify(link), "PX", Math.max(1, Math.round(ttlMs))));
  }

  async invalidateLink(key: string): Promise<void> {
    // Delete before publishing, so a listener that re-reads Redis sees the miss.
    await this.conn.run((c) => c.del(this.linkKey(key)));
    await this.bus.publishTo(this.invalidateChannel, key);
  }

  onLinkInvalidated(listener: (key: string) => void): void {
    this.bus.listen(this.invalidateChannel, listener);
  }

  onResubscribed(listener: () => void): void {
    this.bus.onResubscribed(listener);
  }
}

/**
 * LinkCache in Redis: one key per `domain/slug` holding the compiled link as JSON (JSON null: known unknown),
 * and invalidations on a channel every redirector listens on.
 */
import { Cluster } from "ioredis";
import type { CompiledLink } from "../../link.ts";
import type { LinkCache } from "../../ports.ts";
import type { RedisBus } from "./bus.ts";
import { parseJson, type RedisConnection } from "./connection.ts";

/** How long a cached link lives (setLink's default for a link). */
const LINK_TTL_MS = 3_600_000;

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

  async setLink(key: string, link: CompiledLink | null, ttlMs = link ? LINK_TTL_MS : 5_000): Promise<void> {
    await this.conn.run((c) => c.set(this.linkKey(key), JSON.stringify(link), "PX", Math.max(1, Math.round(ttlMs))));
  }

  async invalidateLink(key: string): Promise<void> {
    // Delete before publishing, so a listener that re-reads Redis sees the miss.
    await this.conn.run((c) => c.del(this.linkKey(key)));
    await this.bus.publishTo(this.invalidateChannel, key);
  }

  /**
   * SET and PUBLISH per link, sent as one pipeline (one round trip, not two per link). A PUBLISH follows its SET,
   * so a redirector that drops its copy on the message and re-reads finds the link. No DEL: the SET replaces a
   * negative entry. A Cluster spreads the keys over nodes, which one pipeline cannot address: there the commands
   * go out together, each on its own.
   */
  async publishLinks(links: readonly { key: string; link: CompiledLink }[]): Promise<void> {
    if (links.length === 0) return;
    await this.conn.run(async (c) => {
      if (c instanceof Cluster) {
        await Promise.all(links.map(({ key, link }) => c.set(this.linkKey(key), JSON.stringify(link), "PX", LINK_TTL_MS).then(() => c.publish(this.invalidateChannel, key))));
        return;
      }
      const p = c.pipeline();
      for (const { key, link } of links) p.set(this.linkKey(key), JSON.stringify(link), "PX", LINK_TTL_MS).publish(this.invalidateChannel, key);
      // exec() resolves with each command's error rather than rejecting: the first one fails the batch.
      for (const [err] of (await p.exec()) ?? []) if (err) throw err;
    });
  }

  onLinkInvalidated(listener: (key: string) => void): void {
    this.bus.listen(this.invalidateChannel, listener);
  }

  onResubscribed(listener: () => void): void {
    this.bus.onResubscribed(listener);
  }
}

/**
 * HotState in Redis (scale mode, design §2): every role in its own file (link cache, hit counters, rate
 * limiter, click queue, bus, MCP sessions), all on one connection (connection.ts: single node or Cluster, key prefix,
 * fail-fast policy) and one pub/sub subscriber.
 */
import type { CompiledLink } from "../../link.ts";
import type { ClickEvent, HitLedger, HotState, QueuedClick, RateLimitResult } from "../../ports.ts";
import { RedisBus } from "./bus.ts";
import { RedisClickQueue, type RedisClickQueueOptions } from "./click-queue.ts";
import { connectRedis, type RedisConnection, type RedisConnectionOptions } from "./connection.ts";
import { RedisHitCounters } from "./hit-counters.ts";
import { RedisLinkCache } from "./link-cache.ts";
import { RedisMcpSessions } from "./mcp-sessions.ts";
import { RedisRateLimiter } from "./rate-limiter.ts";

export type RedisHotStateOptions = RedisConnectionOptions & RedisClickQueueOptions;

export class RedisHotState implements HotState {
  readonly bus: RedisBus;
  readonly links: RedisLinkCache;
  readonly hits: RedisHitCounters;
  readonly limits: RedisRateLimiter;
  readonly clicks: RedisClickQueue;
  readonly mcpSessions: RedisMcpSessions;

  constructor(private readonly conn: RedisConnection, opts: RedisClickQueueOptions = {}) {
    this.bus = new RedisBus(conn);
    this.links = new RedisLinkCache(conn, this.bus);
    this.hits = new RedisHitCounters(conn);
    this.limits = new RedisRateLimiter(conn);
    this.clicks = new RedisClickQueue(conn, opts);
    this.mcpSessions = new RedisMcpSessions(conn);
  }

  getLink(key: string): Promise<CompiledLink | null | undefined> {
    return this.links.getLink(key);
  }

  setLink(key: string, link: CompiledLink | null, ttlMs?: number): Promise<void> {
    return this.links.setLink(key, link, ttlMs);
  }

  invalidateLink(key: string): Promise<void> {
    return this.links.invalidateLink(key);
  }

  publishLinks(links: readonly { key: string; link: CompiledLink }[]): Promise<void> {
    return this.links.publishLinks(links);
  }

  onLinkInvalidated(listener: (key: string) => void): void {
    this.links.onLinkInvalidated(listener);
  }

  onResubscribed(listener: () => void): void {
    this.links.onResubscribed(listener);
  }

  takeHit(linkId: string, max: number, ledger: HitLedger): Promise<number> {
    return this.hits.takeHit(linkId, max, ledger);
  }

  peekHits(linkId: string): Promise<number | null> {
    return this.hits.peekHits(linkId);
  }

  resetHits(linkId: string): Promise<void> {
    return this.hits.resetHits(linkId);
  }

  rateLimit(bucket: string, limit: number, windowMs: number, cost?: number): Promise<RateLimitResult> {
    return this.limits.rateLimit(bucket, limit, windowMs, cost);
  }

  enqueueClicks(events: ClickEvent[]): Promise<void> {
    return this.clicks.enqueueClicks(events);
  }

  readClicks(consumer: string, max: number): Promise<QueuedClick[]> {
    return this.clicks.readClicks(consumer, max);
  }

  ackBatches(batches: string[]): Promise<void> {
    return this.clicks.ackBatches(batches);
  }

  queueDepth(): Promise<number> {
    return this.clicks.queueDepth();
  }

  publish(channel: string, message: string): Promise<void> {
    return this.bus.publish(channel, message);
  }

  subscribe(channel: string, listener: (message: string) => void): void {
    this.bus.subscribe(channel, listener);
  }

  openMcpSession(accountId: string, id: string, idleMs: number, maxPerAccount: number): Promise<void> {
    return this.mcpSessions.openMcpSession(accountId, id, idleMs, maxPerAccount);
  }

  touchMcpSession(accountId: string, id: string, idleMs: number): Promise<boolean> {
    return this.mcpSessions.touchMcpSession(accountId, id, idleMs);
  }

  endMcpSession(accountId: string, id: string): Promise<boolean> {
    return this.mcpSessions.endMcpSession(accountId, id);
  }

  /** Checks the command connection and, when listeners exist, that their subscriptions are in place. */
  async ping(): Promise<void> {
    await this.conn.ping();
    await this.bus.ping();
  }

  async close(): Promise<void> {
    this.bus.close();
    await this.conn.close();
  }
}

/** Single node (`url`) or Cluster (`clusterNodes`), with the fail-fast, self-healing connection policy. */
export function createRedisHotState(opts: RedisHotStateOptions): RedisHotState {
  return new RedisHotState(connectRedis(opts), opts);
}

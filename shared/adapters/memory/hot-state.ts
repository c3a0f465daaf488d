/**
 * HotState in process memory: the embedded default, every role (link cache, hit counters, rate limiter, click
 * queue, bus, MCP sessions) in its own file, on one clock. Every operation completes synchronously inside one JavaScript turn,
 * which is what makes takeHit and rateLimit atomic here.
 */
import type { CompiledLink } from "../../link.ts";
import type { ClickEvent, HitLedger, HotState, QueuedClick, RateLimitResult } from "../../ports.ts";
import { MemoryBus } from "./bus.ts";
import { MemoryClickQueue } from "./click-queue.ts";
import { MemoryHitCounters } from "./hit-counters.ts";
import { MemoryLinkCache } from "./link-cache.ts";
import { MemoryMcpSessions } from "./mcp-sessions.ts";
import { MemoryRateLimiter } from "./rate-limiter.ts";

export class MemoryHotState implements HotState {
  readonly links: MemoryLinkCache;
  readonly hits = new MemoryHitCounters();
  readonly limits: MemoryRateLimiter;
  readonly clicks = new MemoryClickQueue();
  readonly bus = new MemoryBus();
  readonly mcpSessions: MemoryMcpSessions;
  private sweepTimer: ReturnType<typeof setInterval>;

  constructor(now: () => number = Date.now) {
    this.links = new MemoryLinkCache(now);
    this.limits = new MemoryRateLimiter(now);
    this.mcpSessions = new MemoryMcpSessions(now);
    // Expired links and rate-limit windows would otherwise accumulate one entry per key forever.
    this.sweepTimer = setInterval(() => {
      this.links.sweep();
      this.limits.sweep();
      this.mcpSessions.sweep();
    }, 60_000);
    (this.sweepTimer as { unref?: () => void }).unref?.();
  }

  getLink(key: string) {
    return this.links.getLink(key);
  }

  /** Synchronous read for the embedded redirector's hot path. */
  getLinkSync(key: string): CompiledLink | null | undefined {
    return this.links.getLinkSync(key);
  }

  setLink(key: string, link: CompiledLink | null, ttlMs?: number) {
    return this.links.setLink(key, link, ttlMs);
  }

  invalidateLink(key: string) {
    return this.links.invalidateLink(key);
  }

  publishLinks(links: readonly { key: string; link: CompiledLink }[]) {
    return this.links.publishLinks(links);
  }

  onLinkInvalidated(listener: (key: string) => void) {
    this.links.onLinkInvalidated(listener);
  }

  onResubscribed(listener: () => void) {
    this.links.onResubscribed(listener);
  }

  takeHit(linkId: string, max: number, ledger: HitLedger): Promise<number> {
    return this.hits.takeHit(linkId, max, ledger);
  }

  /** Synchronous variant once the counter is seeded (the embedded redirector's hot path); undefined when it is not. */
  takeHitSync(linkId: string, max: number): number | undefined {
    return this.hits.takeHitSync(linkId, max);
  }

  peekHits(linkId: string) {
    return this.hits.peekHits(linkId);
  }

  resetHits(linkId: string) {
    return this.hits.resetHits(linkId);
  }

  rateLimit(bucket: string, limit: number, windowMs: number, cost?: number): Promise<RateLimitResult> {
    return this.limits.rateLimit(bucket, limit, windowMs, cost);
  }

  enqueueClicks(events: ClickEvent[]) {
    return this.clicks.enqueueClicks(events);
  }

  readClicks(consumer: string, max: number): Promise<QueuedClick[]> {
    return this.clicks.readClicks(consumer, max);
  }

  ackBatches(batches: string[]) {
    return this.clicks.ackBatches(batches);
  }

  queueDepth() {
    return this.clicks.queueDepth();
  }

  publish(channel: string, message: string) {
    return this.bus.publish(channel, message);
  }

  subscribe(channel: string, listener: (message: string) => void) {
    this.bus.subscribe(channel, listener);
  }

  openMcpSession(accountId: string, id: string, idleMs: number, maxPerAccount: number) {
    return this.mcpSessions.openMcpSession(accountId, id, idleMs, maxPerAccount);
  }

  touchMcpSession(accountId: string, id: string, idleMs: number) {
    return this.mcpSessions.touchMcpSession(accountId, id, idleMs);
  }

  endMcpSession(accountId: string, id: string) {
    return this.mcpSessions.endMcpSession(accountId, id);
  }

  async ping() {}

  async close() {
    clearInterval(this.sweepTimer);
    await this.hits.close();
  }
}

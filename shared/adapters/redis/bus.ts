/**
 * Redis pub/sub for the Redis HotState: the Bus role (publish, subscribe) and the channel the link cache's
 * invalidations travel on. One subscriber connection serves every channel; after it was interrupted, listeners
 * of onResubscribed hear that messages may have been lost, once the subscriptions are back.
 */
import { Cluster } from "ioredis";
import { AppError } from "../../errors.ts";
import type { Bus } from "../../ports.ts";
import type { RedisClient, RedisConnection } from "./connection.ts";

const CLUSTER_SUBSCRIBER_CHECK_MS = 500;

export class RedisBus implements Bus {
  private subscriber: RedisClient | null = null;
  /** Channels (full names) and their listeners. */
  private readonly listeners = new Map<string, ((message: string) => void)[]>();
  private subscribed: Promise<unknown> = Promise.resolve();
  private readonly resubscribedListeners: (() => void)[] = [];
  private clusterWatch: ReturnType<typeof setInterval> | null = null;
  private clusterFirstSubscribed: (() => void) | null = null;

  constructor(private readonly conn: RedisConnection) {}

  async publish(channel: string, message: string): Promise<void> {
    await this.publishTo(this.channelName(channel), message);
  }

  subscribe(channel: string, listener: (message: string) => void): void {
    this.listen(this.channelName(channel), listener);
  }

  private channelName = (channel: string) => `${this.conn.prefix}:ch:${channel}`;

  /** Publishes on a channel by its full name (the link cache's invalidations have their own). */
  async publishTo(channel: string, message: string): Promise<void> {
    await this.conn.run((c) => c.publish(channel, message));
  }

  /** Listens on a channel by its full name. */
  listen(channel: string, listener: (message: string) => void): void {
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

  onResubscribed(listener: () => void): void {
    this.resubscribedListeners.push(listener);
    this.subscriberConnection();
  }

  private subscriberConnection(): RedisClient {
    if (this.subscriber) return this.subscriber;
    const sub = this.conn.makeSubscriber();
    sub.on("message", (channel: string, message: string) => {
      for (const l of this.listeners.get(channel) ?? []) {
        // A throwing listener must neither starve the others nor reach ioredis' reply parser.
        try {
          l(message);
        } catch (err) {
          this.conn.onError(err instanceof Error ? err : new Error(String(err)));
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
        this.conn.onError(err instanceof Error ? err : new Error(String(err)));
      }
    }
  }

  /** When listeners exist, checks that their subscriptions are in place (part of HotState.ping). */
  async ping(): Promise<void> {
    if (!this.subscriber) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("subscribe timed out")), this.conn.commandTimeoutMs);
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

  close(): void {
    if (this.clusterWatch) clearInterval(this.clusterWatch);
    this.subscriber?.disconnect();
  }
}

/**
 * The Redis connection every role of the Redis HotState shares (link cache, hit counters, rate limiter, click
 * queue, bus): one code path for a single node and a Redis Cluster. Every key carries a hash tag, so a multi-key
 * step (the click stream's scripts) stays in one slot.
 *
 * Failure policy: a down Redis must not stall the hot path. Commands issued while disconnected are
 * rejected at once (no offline queue), commands on a hung connection time out after `commandTimeoutMs`,
 * and the client keeps reconnecting in the background, so the adapter recovers by itself. Such failures
 * surface as AppError("unavailable") so callers can fall back (LRU, Postgres) or answer 503.
 */
import { Cluster, Redis, ReplyError } from "ioredis";
import { AppError } from "../../errors.ts";

export interface RedisConnectionOptions {
  /** Single node, e.g. redis://127.0.0.1:6379. Ignored when `clusterNodes` is given. */
  url?: string;
  clusterNodes?: { host: string; port: number }[];
  /** Namespace of every key and channel (default "clink"); tests use a random one to isolate themselves. */
  prefix?: string;
  /** Per-command deadline (default 1000 ms). */
  commandTimeoutMs?: number;
  /** Connection errors, e.g. each failed reconnect attempt (default: ignored; ping() reports health). */
  onError?: (err: Error) => void;
}

export type RedisClient = Redis | Cluster;

export class RedisConnection {
  readonly prefix: string;
  readonly commandTimeoutMs: number;
  readonly onError: (err: Error) => void;
  /** Until the first connection attempt settles, commands wait for it instead of failing. */
  private boot: Promise<void> | null;

  /** `makeSubscriber`: a second connection for pub/sub (a subscribed connection takes no other command). */
  constructor(readonly client: RedisClient, readonly makeSubscriber: () => RedisClient, opts: RedisConnectionOptions = {}) {
    this.prefix = opts.prefix ?? "clink";
    this.commandTimeoutMs = opts.commandTimeoutMs ?? 1_000;
    // Without a listener ioredis prints every failed reconnect attempt; the owner decides what to log.
    this.onError = opts.onError ?? (() => {});
    client.on("error", this.onError);
    if (client instanceof Cluster) client.on("node error", this.onError);
    this.boot = firstAttempt(client).then(() => {
      this.boot = null;
    });
  }

  /** Registers a Lua script as a client command (ioredis `defineCommand`); returns the client typed with it. */
  script<S>(name: string, numberOfKeys: number, lua: string): S {
    this.client.defineCommand(name, { numberOfKeys, lua });
    return this.client as unknown as S;
  }

  /** Runs one operation once the client has tried to connect, mapping connection failures to 503. */
  async run<T>(op: (c: RedisClient) => Promise<T>): Promise<T> {
    if (this.boot) await this.boot;
    try {
      return await op(this.client);
    } catch (err) {
      throw asAppError(err);
    }
  }

  async ping(): Promise<void> {
    await this.run((c) => c.ping());
  }

  async close(): Promise<void> {
    // QUIT lets replies in flight arrive; a Redis that does not answer must not hold up shutdown.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const giveUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.commandTimeoutMs)));
    await Promise.race([this.client.quit().catch(() => {}), giveUp]);
    clearTimeout(timer);
    this.client.disconnect();
  }
}

/** Single node (`url`) or Cluster (`clusterNodes`), with the fail-fast, self-healing connection policy. */
export function connectRedis(opts: RedisConnectionOptions): RedisConnection {
  const commandTimeout = opts.commandTimeoutMs ?? 1_000;
  const common = { commandTimeout, maxRetriesPerRequest: 1, connectTimeout: 2_000 };
  if (opts.clusterNodes?.length) {
    const cluster = new Cluster(opts.clusterNodes, {
      enableOfflineQueue: false,
      clusterRetryStrategy: (times: number) => Math.min(100 * times, 1_000),
      slotsRefreshTimeout: 1_000,
      redisOptions: common,
    });
    // The subscriber may queue SUBSCRIBE until it connects: nothing on the hot path waits on it.
    return new RedisConnection(cluster, () => cluster.duplicate([], { enableOfflineQueue: true }), opts);
  }
  const redis = new Redis(opts.url ?? "redis://127.0.0.1:6379", {
    ...common,
    enableOfflineQueue: false,
    retryStrategy: (times: number) => Math.min(100 * times, 1_000),
  });
  return new RedisConnection(redis, () => redis.duplicate({ enableOfflineQueue: true, commandTimeout: undefined }), opts);
}

/** Redis answered with an error that means "not now" rather than "your command is wrong". */
const TRANSIENT_REPLY = /^(CLUSTERDOWN|LOADING|TRYAGAIN|MASTERDOWN|READONLY|BUSY )/;

/** Connection trouble (closed, timed out, cluster not ready...) becomes a 503; a bug stays itself (a 500). */
function asAppError(err: unknown): unknown {
  if (err instanceof AppError || err instanceof TypeError || err instanceof RangeError) return err;
  if (err instanceof ReplyError && !TRANSIENT_REPLY.test((err as Error).message)) return err;
  return new AppError("unavailable", "Hot state (Redis) is unavailable", { retryAfter: 1 });
}

/** Resolves when the client is ready or its first attempt failed (after which commands fail fast). */
function firstAttempt(client: RedisClient): Promise<void> {
  if (client.status === "ready") return Promise.resolve();
  return new Promise((resolve) => {
    const events = ["ready", "reconnecting", "end", "close"] as const;
    const done = () => {
      for (const e of events) client.off(e, done);
      resolve();
    };
    for (const e of events) client.once(e, done);
  });
}

/** Parsed JSON, or undefined when `raw` is not JSON. */
export function parseJson<T>(raw: string): T | undefined {
  try {
    return JSON.parse(raw) as T;
  } catch {
    return undefined;
  }
}

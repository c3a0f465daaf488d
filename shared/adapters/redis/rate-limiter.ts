/** RateLimiter in Redis: a fixed window per bucket, counted and started by one script (exact across processes). */
import type { RateLimiter, RateLimitResult } from "../../ports.ts";
import type { RedisConnection } from "./connection.ts";

/** Fixed window: the first hit of a window starts its expiry. Returns { count, ms left }. */
const RATE_LIMIT_LUA = `
local n = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}`;

interface Scripts {
  clinkRateLimit(key: string, windowMs: number, cost: number): Promise<[number, number]>;
}

export class RedisRateLimiter implements RateLimiter {
  private readonly scripts: Scripts;

  constructor(private readonly conn: RedisConnection) {
    this.scripts = conn.script<Scripts>("clinkRateLimit", 1, RATE_LIMIT_LUA);
  }

  private rateKey = (bucket: string) => `${this.conn.prefix}:{rl:${bucket}}`;

  async rateLimit(bucket: string, limit: number, windowMs: number, cost = 1): Promise<RateLimitResult> {
    const [count, msLeft] = await this.conn.run(() => this.scripts.clinkRateLimit(this.rateKey(bucket), windowMs, cost));
    return {
      allowed: count <= limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetSeconds: Math.max(1, Math.ceil(msLeft / 1000)),
    };
  }
}

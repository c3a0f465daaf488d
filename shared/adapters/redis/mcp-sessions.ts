/**
 * McpSessionStore in Redis (scale mode): one sorted set per account, each member a session id scored with when it
 * expires unused, on Redis's own clock so every control process agrees. The lowest score is the least recently
 * used session, ended first when the account opens one too many. One key per account keeps each script in one
 * slot (Cluster); the key itself expires with its last session.
 */
import type { McpSessionStore } from "../../ports.ts";
import type { RedisConnection } from "./connection.ts";

/** Redis's clock in milliseconds, and the account's expired sessions dropped. */
const NOW_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)`;

/** ARGV: id, idleMs, maxPerAccount. */
const OPEN_LUA = `${NOW_LUA}
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3]) + 1
if over > 0 then redis.call('ZPOPMIN', KEYS[1], over) end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/** ARGV: id, idleMs. 1 when the session was live (and now is for idleMs more), else 0. */
const TOUCH_LUA = `${NOW_LUA}
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/** ARGV: id. 1 when a live session was ended, else 0. */
const END_LUA = `${NOW_LUA}
return redis.call('ZREM', KEYS[1], ARGV[1])`;

interface Scripts {
  clinkMcpOpen(key: string, id: string, idleMs: number, maxPerAccount: number): Promise<number>;
  clinkMcpTouch(key: string, id: string, idleMs: number): Promise<number>;
  clinkMcpEnd(key: string, id: string): Promise<number>;
}

export class RedisMcpSessions implements McpSessionStore {
  private readonly scripts: Scripts;

  constructor(private readonly conn: RedisConnection) {
    conn.script("clinkMcpOpen", 1, OPEN_LUA);
    conn.script("clinkMcpTouch", 1, TOUCH_LUA);
    this.scripts = conn.script<Scripts>("clinkMcpEnd", 1, END_LUA);
  }

  private accountKey = (accountId: string) => `${this.conn.prefix}:{mcp:${accountId}}`;

  async openMcpSession(accountId: string, id: string, idleMs: number, maxPerAccount: number): Promise<void> {
    await this.conn.run(() => this.scripts.clinkMcpOpen(this.accountKey(accountId), id, idleMs, maxPerAccount));
  }

  async touchMcpSession(accountId: string, id: string, idleMs: number): Promise<boolean> {
    return (await this.conn.run(() => this.scripts.clinkMcpTouch(this.accountKey(accountId), id, idleMs))) === 1;
  }

  async endMcpSession(accountId: string, id: string): Promise<boolean> {
    return (await this.conn.run(() => this.scripts.clinkMcpEnd(this.accountKey(accountId), id))) === 1;
  }
}

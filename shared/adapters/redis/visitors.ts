/**
 * The VisitorLedger in Redis (scale mode; single node or Cluster). A day's key is one string; its pairs are
 * spread over SHARDS sets by a hash of the pair, each set in its own hash slot (`{visitors:<day>:<shard>}`), so
 * a Cluster shares the work and every script touches one key. A batch costs one script call per shard it
 * touches (per 4,000 distinct pairs of it), sent together, not one after the other, however many clicks it holds.
 * Everything expires two days after its day began (at least an hour after it was written, for a late click).
 */
import type { VisitorLedger } from "../../ports.ts";
import type { RedisConnection } from "./connection.ts";

const DAY_MS = 86_400_000;
const KEEP_MS = 2 * DAY_MS;
const LATE_KEEP_MS = 3_600_000;
export const VISITOR_SHARDS = 16;

/** KEYS: the day's key; ARGV: a new random key, its expiry (epoch ms). The key, made by the first caller. */
const KEY_LUA = `
local k = redis.call('GET', KEYS[1])
if k then return k end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return ARGV[1]`;

/**
 * KEYS: one shard's set; ARGV: its expiry (epoch ms), then distinct pairs. '1' per pair new to the set, '0' per
 * known one. One SMISMEMBER and one SADD for all pairs instead of a SADD per pair: Redis CPU per pair about
 * 1.0 -> 0.7 µs (40,000 pairs in 16 shards, interleaved rounds). The pairs must be distinct (firstVisits sees to
 * it), and at most SEE_CHUNK of them (Lua's unpack limit is about 8,000 values).
 */
const SEE_LUA = `
local known = redis.call('SMISMEMBER', KEYS[1], unpack(ARGV, 2))
redis.call('SADD', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIREAT', KEYS[1], ARGV[1])
local out = {}
for i = 1, #known do out[i] = known[i] == 1 and '0' or '1' end
return table.concat(out)`;
const SEE_CHUNK = 4_000;

interface Scripts {
  clinkVisitorKey(key: string, fresh: string, expireAt: number): Promise<string>;
  clinkSeeVisitors(set: string, expireAt: number, ...pairs: string[]): Promise<string>;
}

/** FNV-1a of the pair, to pick its shard (the same pair always lands in the same set). */
export function shardOf(pair: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < pair.length; i++) h = Math.imul(h ^ pair.charCodeAt(i), 0x01000193);
  return (h >>> 0) % VISITOR_SHARDS;
}

export class RedisVisitorLedger implements VisitorLedger {
  private readonly scripts: Scripts;

  constructor(private readonly conn: RedisConnection) {
    this.scripts = conn.script<Scripts>("clinkVisitorKey", 1, KEY_LUA);
    conn.script<Scripts>("clinkSeeVisitors", 1, SEE_LUA);
  }

  private keyKey = (day: number) => `${this.conn.prefix}:{vkey:${day}}`;
  private setKey = (day: number, shard: number) => `${this.conn.prefix}:{visitors:${day}:${shard}}`;
  private expiry = (day: number) => Math.max(day + KEEP_MS, Date.now() + LATE_KEEP_MS);

  visitorKey(day: number): Promise<string> {
    const fresh = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
    return this.conn.run(() => this.scripts.clinkVisitorKey(this.keyKey(day), fresh, this.expiry(day)));
  }

  /** A pair repeated in `pairs` is new at most at its first place. */
  async firstVisits(day: number, pairs: readonly string[]): Promise<boolean[]> {
    const out = new Array<boolean>(pairs.length).fill(false);
    const expireAt = this.expiry(day);
    const calls: Promise<void>[] = [];
    for (const [shard, at] of byShard(pairs)) {
      const firsts = firstPlaces(pairs, at);
      for (let from = 0; from < firsts.length; from += SEE_CHUNK) {
        const chunk = firsts.slice(from, from + SEE_CHUNK);
        calls.push(
          this.conn.run(() => this.scripts.clinkSeeVisitors(this.setKey(day, shard), expireAt, ...chunk.map((i) => pairs[i]!))).then((seen) => {
            for (let j = 0; j < chunk.length; j++) out[chunk[j]!] = seen.charCodeAt(j) === 49; /* '1' */
          }),
        );
      }
    }
    await Promise.all(calls);
    return out;
  }

  async forgetVisits(day: number, pairs: readonly string[]): Promise<void> {
    await Promise.all(
      [...byShard(pairs)].map(([shard, at]) => this.conn.run((c) => c.srem(this.setKey(day, shard), ...at.map((i) => pairs[i]!)))),
    );
  }
}

/** The places in `at` where a pair occurs for the first time. */
function firstPlaces(pairs: readonly string[], at: number[]): number[] {
  const seen = new Set<string>();
  const out: number[] = [];
  for (const i of at) {
    if (seen.has(pairs[i]!)) continue;
    seen.add(pairs[i]!);
    out.push(i);
  }
  return out;
}

/** The indexes of `pairs`, by shard. */
function byShard(pairs: readonly string[]): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (let i = 0; i < pairs.length; i++) {
    const shard = shardOf(pairs[i]!);
    const at = out.get(shard);
    if (at === undefined) out.set(shard, [i]);
    else at.push(i);
  }
  return out;
}

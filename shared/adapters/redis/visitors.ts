/**
 * The VisitorLedger in Redis (scale mode; single node or Cluster). A day's key is one string; its pairs are
 * spread over SHARDS sets by a hash of the pair, each set in its own hash slot (`{visitors:<day>:<shard>}`), so
 * a Cluster shares the work and every script touches one key. A batch costs one script call per shard it
 * touches (per 4,000 distinct pairs of it), sent together, not one after the other, however many clicks it holds.
 * Everything expires two days after its day began (at least an hour after it was written, for a late click).
 */
import { AppError } from "../../errors.ts";
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
 * KEYS: one shard's set; ARGV: its expiry (epoch ms), then the pairs joined by line breaks, repeats allowed. Per
 * pair given, '1' when it is new to the set at its first place in the list, else '0'. One SMISMEMBER and one SADD
 * for the distinct pairs instead of a SADD per pair (Redis CPU per pair about 1.0 -> 0.7 µs: 40,000 pairs in 16
 * shards, interleaved rounds). The pairs go as one argument, split here, and repeats are told apart in a Lua table:
 * an argument per pair (each encoded by ioredis) and a Set of the distinct ones cost the consumer more (its ledger
 * calls, spread traffic, 411,648 clicks, 2 runs each at load 4: 1.07-1.14 -> 0.57-0.67 µs per click). At most
 * SEE_CHUNK distinct pairs a call (Lua's unpack limit is about 8,000 values).
 */
const SEE_LUA = `
local list, uniq, index, pos, n, i, start = ARGV[2], {}, {}, {}, 0, 0, 1
while true do
  local stop = string.find(list, '\\n', start, true)
  local p = string.sub(list, start, (stop or 0) - 1)
  i = i + 1
  if index[p] == nil then
    n = n + 1
    uniq[n] = p
    index[p] = n
    pos[i] = n
  else
    pos[i] = 0
  end
  if stop == nil then break end
  start = stop + 1
end
local known = redis.call('SMISMEMBER', KEYS[1], unpack(uniq))
redis.call('SADD', KEYS[1], unpack(uniq))
redis.call('PEXPIREAT', KEYS[1], ARGV[1])
local out = {}
for j = 1, i do out[j] = (pos[j] > 0 and known[pos[j]] == 0) and '1' or '0' end
return table.concat(out)`;
const SEE_CHUNK = 4_000;

interface Scripts {
  clinkVisitorKey(key: string, fresh: string, expireAt: number): Promise<string>;
  clinkSeeVisitors(set: string, expireAt: number, pairs: string): Promise<string>;
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

  /** A pair repeated in `pairs` is new at most at its first place. A pair holds no line break (the script splits on them). */
  async firstVisits(day: number, pairs: readonly string[]): Promise<boolean[]> {
    const out = new Array<boolean>(pairs.length).fill(false);
    const expireAt = this.expiry(day);
    const calls: Promise<void>[] = [];
    for (const [shard, at] of byShard(pairs)) {
      for (let from = 0; from < at.length; from += SEE_CHUNK) {
        const chunk = from === 0 && at.length <= SEE_CHUNK ? at : at.slice(from, from + SEE_CHUNK);
        const list = joinedPairs(pairs, chunk);
        calls.push(
          this.conn.run(() => this.scripts.clinkSeeVisitors(this.setKey(day, shard), expireAt, list)).then((seen) => {
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

/** The pairs at `at`, one a line (byShard refused any holding a line break). */
function joinedPairs(pairs: readonly string[], at: number[]): string {
  const list = new Array<string>(at.length);
  for (let k = 0; k < at.length; k++) list[k] = pairs[at[k]!]!;
  return list.join("\n");
}

/**
 * The indexes of `pairs`, by shard. A pair holding a line break is refused before any is sent: the script would read
 * it as two.
 */
function byShard(pairs: readonly string[]): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (let i = 0; i < pairs.length; i++) {
    if (pairs[i]!.includes("\n")) throw new AppError("invalid_input", "a visitor pair holds a line break");
    const shard = shardOf(pairs[i]!);
    const at = out.get(shard);
    if (at === undefined) out.set(shard, [i]);
    else at.push(i);
  }
  return out;
}

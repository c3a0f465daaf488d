/** HitCounters in Redis: one counter key per link, checked and incremented by one script (atomic). */
import { AppError } from "../../errors.ts";
import type { HitCounters } from "../../ports.ts";
import type { RedisConnection } from "./connection.ts";

const NOT_SEEDED = -2;

/** -2: no counter yet (caller seeds); -1: limit reached; otherwise the new count. */
const TAKE_HIT_LUA = `
local v = redis.call('GET', KEYS[1])
if not v then return ${NOT_SEEDED} end
if tonumber(v) >= tonumber(ARGV[1]) then return -1 end
return redis.call('INCR', KEYS[1])`;

interface Scripts {
  clinkTakeHit(key: string, max: number): Promise<number>;
}

export class RedisHitCounters implements HitCounters {
  private readonly scripts: Scripts;
  /** One seed read per link per process, however many clicks arrive together. */
  private readonly seeding = new Map<string, Promise<void>>();

  constructor(private readonly conn: RedisConnection) {
    this.scripts = conn.script<Scripts>("clinkTakeHit", 1, TAKE_HIT_LUA);
  }

  private hitsKey = (linkId: string) => `${this.conn.prefix}:{hits:${linkId}}`;

  async takeHit(linkId: string, max: number, seed: () => Promise<number>): Promise<number> {
    const key = this.hitsKey(linkId);
    // Normally one round, two after seeding; resetHits racing with the seeding may empty the counter again.
    for (let round = 0; round < 3; round++) {
      const n = await this.conn.run(() => this.scripts.clinkTakeHit(key, max));
      if (n !== NOT_SEEDED) return n;
      let p = this.seeding.get(linkId);
      if (!p) {
        // SET NX: when another process seeded first, its counter (maybe already incremented) wins.
        p = seed()
          .then((seeded) => this.conn.run((c) => c.set(key, String(seeded), "NX")))
          .then(() => undefined)
          .finally(() => this.seeding.delete(linkId));
        this.seeding.set(linkId, p);
      }
      await p;
    }
    throw new AppError("unavailable", "Hit counter could not be seeded", { retryAfter: 1 });
  }

  async peekHits(linkId: string): Promise<number | null> {
    const raw = await this.conn.run((c) => c.get(this.hitsKey(linkId)));
    return raw === null ? null : Number(raw);
  }

  async resetHits(linkId: string): Promise<void> {
    await this.conn.run((c) => c.del(this.hitsKey(linkId)));
  }
}

/**
 * HitCounters in Redis: per link a counter key and, in the same slot, the hits the store reserved for it. One
 * script checks both and increments (atomic across every redirector). A counter survives a redirector's crash;
 * one lost with Redis is started again from the store, above every hit served: its reservation covers them.
 */
import type { HitCounters, HitLedger } from "../../ports.ts";
import { HIT_LIMIT, NO_COUNTER, NO_ROOM, StoreCallsInFlight } from "../hit-taking.ts";
import type { RedisConnection } from "./connection.ts";

/** KEYS: counter, reservation; ARGV: max. The new count, or HIT_LIMIT, NO_COUNTER, NO_ROOM. */
const TAKE_HIT_LUA = `
local n = tonumber(redis.call('GET', KEYS[1]))
if not n then return ${NO_COUNTER} end
if n >= tonumber(ARGV[1]) then return ${HIT_LIMIT} end
if n >= tonumber(redis.call('GET', KEYS[2]) or '0') then return ${NO_ROOM} end
return redis.call('INCR', KEYS[1])`;

/**
 * KEYS: counter, reservation; ARGV: count, reserved (read from the store). Starts a missing counter; one started
 * meanwhile by another process (from the same or a later read, maybe already counting) is left as it is.
 */
const START_LUA = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then redis.call('SET', KEYS[2], ARGV[2]) end
return 0`;

/**
 * KEYS: counter, reservation; ARGV: reserved. Raises an existing counter's reservation (never lowers it). A counter
 * lost meanwhile is left missing: the next take starts it from the store, whose reservation includes this one.
 */
const RAISE_LUA = `
if redis.call('EXISTS', KEYS[1]) == 1 and tonumber(ARGV[1]) > tonumber(redis.call('GET', KEYS[2]) or '0') then
  redis.call('SET', KEYS[2], ARGV[1])
end
return 0`;

interface Scripts {
  clinkTakeHit(counter: string, reservation: string, max: number): Promise<number>;
  clinkStartHits(counter: string, reservation: string, count: number, reserved: number): Promise<number>;
  clinkRaiseHitReservation(counter: string, reservation: string, reserved: number): Promise<number>;
}

export class RedisHitCounters implements HitCounters {
  private readonly scripts: Scripts;
  /** One store call per link per process, however many clicks need it together. */
  private readonly store = new StoreCallsInFlight();

  constructor(private readonly conn: RedisConnection) {
    this.scripts = conn.script<Scripts>("clinkTakeHit", 2, TAKE_HIT_LUA);
    conn.script<Scripts>("clinkStartHits", 2, START_LUA);
    conn.script<Scripts>("clinkRaiseHitReservation", 2, RAISE_LUA);
  }

  private hitsKey = (linkId: string) => `${this.conn.prefix}:{hits:${linkId}}`;
  private reservedKey = (linkId: string) => `${this.conn.prefix}:{hits:${linkId}}:reserved`;

  takeHit(linkId: string, max: number, ledger: HitLedger): Promise<number> {
    const counter = this.hitsKey(linkId);
    const reserved = this.reservedKey(linkId);
    return this.store.take(linkId, () => this.conn.run(() => this.scripts.clinkTakeHit(counter, reserved, max)), ledger, {
      start: (s) => this.conn.run(() => this.scripts.clinkStartHits(counter, reserved, s.count, s.reserved)),
      raise: (g) => this.conn.run(() => this.scripts.clinkRaiseHitReservation(counter, reserved, g.reserved)),
    });
  }

  async peekHits(linkId: string): Promise<number | null> {
    const raw = await this.conn.run((c) => c.get(this.hitsKey(linkId)));
    return raw === null ? null : Number(raw);
  }

  async resetHits(linkId: string): Promise<void> {
    this.store.forget(linkId);
    await this.conn.run((c) => c.del(this.hitsKey(linkId), this.reservedKey(linkId)));
  }
}

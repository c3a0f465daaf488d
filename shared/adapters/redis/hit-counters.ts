/**
 * HitCounters in Redis: per link a counter key and, in the same slot, the hits the store reserved for it. One
 * script checks both and increments (atomic across every redirector); starting a counter and raising its
 * reservation is another. A counter survives a redirector's crash; one lost with Redis is started again from
 * the store's reservation, above every hit served.
 */
import type { HitCounters, HitLedger } from "../../ports.ts";
import { HIT_LIMIT, NO_COUNTER, NO_ROOM, ReservationsInFlight, takeWithinReservation } from "../hit-taking.ts";
import type { RedisConnection } from "./connection.ts";

/** KEYS: counter, reservation; ARGV: max. The new count, or HIT_LIMIT, NO_COUNTER, NO_ROOM. */
const TAKE_HIT_LUA = `
local n = tonumber(redis.call('GET', KEYS[1]))
if not n then return ${NO_COUNTER} end
if n >= tonumber(ARGV[1]) then return ${HIT_LIMIT} end
if n >= tonumber(redis.call('GET', KEYS[2]) or '0') then return ${NO_ROOM} end
return redis.call('INCR', KEYS[1])`;

/**
 * KEYS: counter, reservation; ARGV: the grant's start and reservation. A missing counter starts at `start`;
 * an existing one (started meanwhile by another process, maybe already counting) only has its reservation raised.
 */
const APPLY_GRANT_LUA = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then
  redis.call('SET', KEYS[2], ARGV[2])
elseif tonumber(ARGV[2]) > tonumber(redis.call('GET', KEYS[2]) or '0') then
  redis.call('SET', KEYS[2], ARGV[2])
end
return 0`;

interface Scripts {
  clinkTakeHit(counter: string, reservation: string, max: number): Promise<number>;
  clinkApplyHitGrant(counter: string, reservation: string, start: number, reserved: number): Promise<number>;
}

export class RedisHitCounters implements HitCounters {
  private readonly scripts: Scripts;
  /** One reservation per link per process, however many clicks need it together. */
  private readonly reservations = new ReservationsInFlight();

  constructor(private readonly conn: RedisConnection) {
    this.scripts = conn.script<Scripts>("clinkTakeHit", 2, TAKE_HIT_LUA);
    conn.script<Scripts>("clinkApplyHitGrant", 2, APPLY_GRANT_LUA);
  }

  private hitsKey = (linkId: string) => `${this.conn.prefix}:{hits:${linkId}}`;
  private reservedKey = (linkId: string) => `${this.conn.prefix}:{hits:${linkId}}:reserved`;

  takeHit(linkId: string, max: number, ledger: HitLedger): Promise<number> {
    const counter = this.hitsKey(linkId);
    const reserved = this.reservedKey(linkId);
    return takeWithinReservation(
      () => this.conn.run(() => this.scripts.clinkTakeHit(counter, reserved, max)),
      () => this.reservations.reserve(linkId, ledger, (g) => this.conn.run(() => this.scripts.clinkApplyHitGrant(counter, reserved, g.start, g.reserved))),
    );
  }

  async peekHits(linkId: string): Promise<number | null> {
    const raw = await this.conn.run((c) => c.get(this.hitsKey(linkId)));
    return raw === null ? null : Number(raw);
  }

  async resetHits(linkId: string): Promise<void> {
    this.reservations.forget(linkId);
    await this.conn.run((c) => c.del(this.hitsKey(linkId), this.reservedKey(linkId)));
  }
}

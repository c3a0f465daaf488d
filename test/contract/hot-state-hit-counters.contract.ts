/**
 * The HitCounters contract (HotState role, maxHits): run against every adapter by hot-state.contract.ts. Counters
 * take their hits through the real ledger (redirector/hit-policy.ts) over a SQLite store, so what is checked is
 * what a redirector relies on: exact limits, and never a hit served that the store had not reserved first.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hitBlock, hitLedger } from "../../redirector/hit-policy.ts";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { newLinkRecord } from "../../shared/link.ts";
import type { HitCounters, HitLedger } from "../../shared/ports.ts";
import { instances, uid } from "./hot-state-harness.ts";

export function runHitCountersContract(make: () => Promise<HitCounters>) {
  describe("hit counters (maxHits)", () => {
    const instance = instances(make);
    let store: SqliteStore;
    let accountId: string;
    beforeAll(async () => {
      store = new SqliteStore(":memory:");
      await store.migrate();
      accountId = uid();
      await store.createAccount({ id: accountId, email: `${accountId}@example.com`, passwordHash: "h", createdAt: 0 });
    });
    afterAll(() => store.close());

    /**
     * A stored link with this limit and recorded hits. Its ledger counts the reservations made through it and
     * answers after `slowMs` (a database round trip). `slowLedger(askAfterMs, answerAfterMs)` asks the store that
     * much later, and hands the answer over that much after it was given (a process whose answers are slow).
     */
    async function storedLink(maxHits: number | null, hits = 0, o: { slowMs?: number } = {}) {
      const id = uid();
      await store.insertLinks([{ ...newLinkRecord({ id, accountId, domain: "d.test", slug: id, target: "https://example.com/", createdAt: 0 }), maxHits, hits }]);
      const real = hitLedger(store, id, maxHits ?? 1_000_000);
      const link = { id, reservations: 0, reserved: async () => (await store.storedHits(id))!.reserved };
      const ledgerOf = (askAfterMs: number, answerAfterMs: number): HitLedger => {
        const slowly = async <T>(ask: () => Promise<T>) => {
          await Bun.sleep(askAfterMs);
          const answer = await ask();
          await Bun.sleep(answerAfterMs);
          return answer;
        };
        return {
          start: () => slowly(real.start),
          reserve: () => (link.reservations++, slowly(real.reserve)),
          release: real.release,
        };
      };
      return Object.assign(link, { ledger: ledgerOf(o.slowMs ?? 0, 0), slowLedger: ledgerOf });
    }

    test("a missing counter starts above the recorded hits, once the store has reserved a block", async () => {
      const h = await instance();
      const link = await storedLink(100, 7);
      expect(await h.peekHits(link.id)).toBeNull();
      expect(await h.takeHit(link.id, 100, link.ledger)).toBe(8);
      expect(await h.peekHits(link.id)).toBe(8);
      expect(await link.reserved()).toBe(7 + hitBlock(100));
    });

    test("a counter serves its block, then reserves the next: one store write per block, from any instance", async () => {
      const [a, b] = [await instance(), await instance()];
      const link = await storedLink(1_000);
      const block = hitBlock(1_000);
      const taken = [];
      for (let i = 0; i < 2 * block + 1; i++) taken.push(await (i % 2 ? a : b).takeHit(link.id, 1_000, link.ledger));
      expect(taken).toEqual(Array.from({ length: 2 * block + 1 }, (_, i) => i + 1));
      expect([link.reservations, await link.reserved()]).toEqual([3, 3 * block]);
    });

    test("a lost counter (Redis flushed, a process killed) starts again above every hit reserved: never over, at most a block under", async () => {
      const h = await instance();
      const link = await storedLink(40);
      for (let i = 0; i < 5; i++) await h.takeHit(link.id, 40, link.ledger);
      await h.resetHits(link.id); // lost with nothing recorded: the 5 clicks died with it
      let served = 5;
      while ((await h.takeHit(link.id, 40, link.ledger)) > 0) served++;
      expect(served).toBeLessThanOrEqual(40);
      expect(served).toBeGreaterThanOrEqual(40 - hitBlock(40));
      expect(await h.peekHits(link.id)).toBe(40);
    });

    test("the click that reaches max is served (returns max), the next is refused (-1) without asking the store", async () => {
      const h = await instance();
      const link = await storedLink(3, 1);
      expect(await h.takeHit(link.id, 3, link.ledger)).toBe(2);
      expect(await h.takeHit(link.id, 3, link.ledger)).toBe(3);
      expect(await h.takeHit(link.id, 3, link.ledger)).toBe(-1);
      expect([await h.peekHits(link.id), link.reservations]).toEqual([3, 1]);
    });

    test("a counter started at or above max refuses at once", async () => {
      const h = await instance();
      const link = await storedLink(5, 5);
      expect(await h.takeHit(link.id, 5, link.ledger)).toBe(-1);
      expect(await h.peekHits(link.id)).toBe(5);
    });

    test("the stored limit wins over a higher one the caller still has (a lowered limit not yet seen)", async () => {
      const h = await instance();
      const link = await storedLink(20);
      let served = 0;
      while ((await h.takeHit(link.id, 100, link.ledger)) > 0) served++;
      expect(served).toBe(20);
    });

    test("a link whose stored limit was removed (or that is gone) is refused: nothing was reserved for it", async () => {
      const h = await instance();
      const link = await storedLink(null);
      expect(await h.takeHit(link.id, 10, link.ledger)).toBe(-1);
      expect(await h.peekHits(link.id)).not.toBeGreaterThan(0);
      expect(await h.takeHit(uid(), 10, link.ledger)).toBe(-1);
    });

    test("exact under concurrency: 500 parallel clicks over two instances, max 120, a slow store; reservations by the block", async () => {
      const [a, b] = [await instance(), await instance()];
      const link = await storedLink(120, 0, { slowMs: 5 });
      const results = await Promise.all(Array.from({ length: 500 }, (_, i) => (i % 2 ? a : b).takeHit(link.id, 120, link.ledger)));
      const served = results.filter((n) => n > 0).sort((x, y) => x - y);
      expect(served).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
      expect(results.filter((n) => n === -1)).toHaveLength(380);
      expect([await a.peekHits(link.id), await link.reserved()]).toEqual([120, 120]);
      // One reservation per block, plus at most one more per instance (both may reserve at the same moment).
      expect(link.reservations).toBeLessThanOrEqual(Math.ceil(120 / hitBlock(120)) + 2);
    });

    test("resetHits forgets the counter, so the next click starts one again, above what was reserved", async () => {
      const h = await instance();
      const link = await storedLink(100, 4);
      expect(await h.takeHit(link.id, 100, link.ledger)).toBe(5);
      await h.resetHits(link.id);
      expect(await h.peekHits(link.id)).toBeNull();
      expect(await h.takeHit(link.id, 100, link.ledger)).toBe(4 + hitBlock(100) + 1);
    });

    test("a store that cannot be reached rejects takeHit, and a counter that cannot reserve serves nothing more", async () => {
      const h = await instance();
      const link = await storedLink(100, 2);
      const down: HitLedger = { start: () => Promise.reject(new Error("db down")), reserve: () => Promise.reject(new Error("db down")), release: async () => {} };
      await expect(h.takeHit(link.id, 100, down)).rejects.toThrow("db down");
      expect(await h.peekHits(link.id)).toBeNull();
      expect(await h.takeHit(link.id, 100, link.ledger)).toBe(3);
      for (let n = 4; n <= 2 + hitBlock(100); n++) expect(await h.takeHit(link.id, 100, down)).toBe(n); // within its block
      await expect(h.takeHit(link.id, 100, down)).rejects.toThrow("db down");
    });

    test("two processes starting one counter at once lose no hit, whichever start arrives first", async () => {
      const [a, b] = [await instance(), await instance()];
      const link = await storedLink(20);
      // a asks the store first, but its answer arrives last.
      const first = await Promise.all([a.takeHit(link.id, 20, link.slowLedger(0, 40)), b.takeHit(link.id, 20, link.slowLedger(15, 0))]);
      let served = first.filter((n) => n > 0).length;
      for (const h of [a, b]) while ((await h.takeHit(link.id, 20, link.ledger)) > 0) served++;
      expect(served).toBe(20);
    });
  });
}

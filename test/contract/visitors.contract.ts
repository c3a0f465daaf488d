/**
 * The VisitorLedger contract (shared/ports/visitors.ts), run against every adapter by its runner file
 * (visitors-memory, visitors-sqlite, visitors-redis, visitors-redis-cluster). `open` gives two clients of one
 * ledger (two connections where the adapter has connections; the same object in memory), as two drains in two
 * processes would use it.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { VisitorLedger } from "../../shared/ports.ts";

export interface LedgerClients {
  a: VisitorLedger;
  b: VisitorLedger;
  close(): Promise<void>;
}

const DAY = 86_400_000;
/** 2030-01-01, a UTC day start; each test uses days of its own around it, so the suite may share a backend. */
let nextDay = Date.UTC(2030, 0, 1);
const freshDay = () => (nextDay += 10 * DAY);

export function runVisitorLedgerContract(name: string, open: () => Promise<LedgerClients>): void {
  describe(`VisitorLedger contract: ${name}`, () => {
    const opened: LedgerClients[] = [];
    const clients = async () => {
      const c = await open();
      opened.push(c);
      return c;
    };
    afterEach(async () => {
      for (const c of opened.splice(0)) await c.close();
    });

    test("a day's key is random, made on the first ask, and the same for every client after", async () => {
      const { a, b } = await clients();
      const day = freshDay();
      const [k1, k2] = await Promise.all([a.visitorKey(day), b.visitorKey(day)]);
      expect(k1.length).toBeGreaterThanOrEqual(32);
      expect(k2).toBe(k1);
      expect(await a.visitorKey(day)).toBe(k1);
      const other = await b.visitorKey(day + DAY);
      expect(other).not.toBe(k1);
      expect(await a.visitorKey(day + DAY)).toBe(other);
    });

    test("a pair's first sighting is true, every later one false; a duplicate within one call counts once", async () => {
      const { a } = await clients();
      const day = freshDay();
      expect(await a.firstVisits(day, ["L1 v1", "L1 v2", "L1 v1"])).toEqual([true, true, false]);
      expect(await a.firstVisits(day, ["L1 v2", "L2 v1", "L1 v1"])).toEqual([false, true, false]);
      expect(await a.firstVisits(day, [])).toEqual([]);
    });

    test("days are separate: the same pair is first again the next day", async () => {
      const { a } = await clients();
      const day = freshDay();
      expect(await a.firstVisits(day, ["L1 v1"])).toEqual([true]);
      expect(await a.firstVisits(day + DAY, ["L1 v1"])).toEqual([true]);
      expect(await a.firstVisits(day, ["L1 v1"])).toEqual([false]);
    });

    test("forgotten pairs are first again; the others stay seen", async () => {
      const { a, b } = await clients();
      const day = freshDay();
      await a.firstVisits(day, ["L1 v1", "L1 v2", "L1 v3"]);
      await b.forgetVisits(day, ["L1 v1", "L1 v3"]);
      await a.forgetVisits(day + DAY, ["L1 v2"]); // another day: changes nothing here
      expect(await a.firstVisits(day, ["L1 v1", "L1 v2", "L1 v3"])).toEqual([true, false, true]);
    });

    test("two clients asking at once: each pair is first exactly once, in answer order", async () => {
      const { a, b } = await clients();
      const day = freshDay();
      const pairs = Array.from({ length: 600 }, (_, i) => `L${i % 7} ${i.toString(16).padStart(16, "0")}`);
      const [ra, rb] = await Promise.all([a.firstVisits(day, pairs), b.firstVisits(day, [...pairs].reverse())]);
      const firsts = pairs.map((_, i) => Number(ra[i]) + Number(rb[pairs.length - 1 - i]));
      expect(firsts.every((n) => n === 1)).toBe(true);
      // Known and new pairs mixed in one call keep their places in the answer.
      const mixed = pairs.slice(0, 50).flatMap((p, i) => [p, `N ${i}`]);
      expect(await b.firstVisits(day, mixed)).toEqual(mixed.map((p) => p.startsWith("N ")));
    });
  });
}

/**
 * For adapters that forget when a newer day's key is made (memory, SQLite; Redis expires keys instead, see its
 * runner): a day's key and pairs are gone once the key of the day two days later exists.
 */
export function expectForgottenAfterTwoDays(name: string, open: () => Promise<LedgerClients>): void {
  test(`${name}: a day's key and pairs are forgotten once a key two days newer is made`, async () => {
    const { a, close } = await open();
    try {
      const day = freshDay();
      const key = await a.visitorKey(day);
      await a.firstVisits(day, ["L1 v1"]);
      await a.visitorKey(day + DAY);
      expect(await a.firstVisits(day, ["L1 v1"])).toEqual([false]); // one day later: still kept
      await a.visitorKey(day + 3 * DAY);
      expect(await a.visitorKey(day)).not.toBe(key);
      expect(await a.firstVisits(day, ["L1 v1"])).toEqual([true]);
    } finally {
      await close();
    }
  });
}

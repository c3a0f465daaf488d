/**
 * The VisitorLedger contract on a single Redis node (two connections), and what the adapter promises beyond it:
 * every key it writes expires two days after its day began.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Redis } from "ioredis";
import { connectRedis } from "../../shared/adapters/redis/connection.ts";
import { RedisVisitorLedger } from "../../shared/adapters/redis/visitors.ts";
import { deleteKeys, REDIS_TEST_URL, testPrefix } from "../helpers/redis-keys.ts";
import { runVisitorLedgerContract } from "./visitors.contract.ts";

const url = REDIS_TEST_URL;
const prefixes: string[] = [];

function openLedgers() {
  const prefix = testPrefix(prefixes);
  const conns = [connectRedis({ url, prefix }), connectRedis({ url, prefix })];
  return { prefix, a: new RedisVisitorLedger(conns[0]!), b: new RedisVisitorLedger(conns[1]!), close: async () => void (await Promise.all(conns.map((c) => c.close()))) };
}

afterAll(() => deleteKeys(prefixes));

runVisitorLedgerContract("Redis single node", async () => openLedgers());

describe("Redis VisitorLedger specifics", () => {
  test("the day's key and sets expire two days after the day began, or an hour from now for a day already past that", async () => {
    const { prefix, a, close } = openLedgers();
    const admin = new Redis(url, { maxRetriesPerRequest: 1 });
    try {
      const today = Date.now() - (Date.now() % 86_400_000);
      await a.visitorKey(today);
      await a.firstVisits(today, Array.from({ length: 64 }, (_, i) => `L ${i}`));
      const old = today - 10 * 86_400_000;
      await a.firstVisits(old, ["L old"]);
      const keys = await admin.keys(`${prefix}:*`);
      expect(keys.length).toBeGreaterThan(2); // the key and several shard sets
      for (const key of keys) {
        const expireAt = await admin.pexpiretime(key);
        if (key.includes(`:${old}:`)) expect(Math.abs(expireAt - (Date.now() + 3_600_000))).toBeLessThan(60_000);
        else expect(expireAt).toBe(today + 2 * 86_400_000);
      }
    } finally {
      admin.disconnect();
      await close();
    }
  });

  test("pairs go to the script one a line: a pair holding a line break is refused, nothing recorded; an empty one keeps its place", async () => {
    const { a, close } = openLedgers();
    try {
      const day = Date.now() - (Date.now() % 86_400_000);
      const refused = await a.firstVisits(day, ["L1 v1", "L1 v2\nL1 v3"]).then(() => null, (e: unknown) => e);
      expect((refused as { code?: string } | null)?.code).toBe("invalid_input");
      expect(await a.firstVisits(day, ["L1 v1", "", "L1 v3", "", "L1 v1"])).toEqual([true, true, true, false, false]);
    } finally {
      await close();
    }
  });
});

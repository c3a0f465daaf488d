/**
 * The HotState contract against a single Redis node (REDIS_URL, default redis://127.0.0.1:6379), plus the
 * adapter's failure policy: a down Redis fails fast, and the adapter recovers by itself when it is back.
 * An unreachable Redis fails this file: scale mode is tested for real on every run.
 */
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { Redis } from "ioredis";
import { AppError } from "../../shared/errors.ts";
import { createRedisHotState } from "../../shared/adapters/redis/hot-state.ts";
import { runHotStateContract } from "./hot-state.contract.ts";
import { dropSubscriberAndRecover, waitUntil } from "./resubscribe.ts";
import { ledgerFrom } from "../helpers/hit-ledger.ts";
import { freePort } from "../helpers/server.ts";
import { deleteKeys } from "../helpers/redis-keys.ts";

const url = process.env.REDIS_URL_TEST || process.env.REDIS_URL || "redis://127.0.0.1:6379";
const prefixes: string[] = [];
let prefix = "";
beforeEach(() => {
  prefix = `clinktest-${crypto.randomUUID().slice(0, 8)}`;
  prefixes.push(prefix);
});

const deleteTestKeys = () => deleteKeys(prefixes, url);

runHotStateContract(
  "Redis single node",
  async () => {
    const h = createRedisHotState({ url, prefix, claimIdleMs: 200 });
    await h.ping();
    return h;
  },
  deleteTestKeys,
);

describe("Redis HotState specifics", () => {
  test("keys carry the prefix and a hash tag; the click stream and its counter share one", async () => {
    const h = createRedisHotState({ url, prefix });
    const admin = new Redis(url);
    try {
      await h.setLink("example.com/abc", null);
      await h.takeHit("L1", 5, ledgerFrom(0));
      await h.rateLimit("key:K1", 5, 60_000);
      await h.enqueueClicks([{ id: "c1", linkId: "L1", ts: 1, ua: "", ip: null, country: null, referrer: null, variant: null, rule: null, qr: false }]);
      expect((await admin.keys(`${prefix}:*`)).sort()).toEqual(
        [`${prefix}:{clicks}:stream`, `${prefix}:{clicks}:count`, `${prefix}:{hits:L1}`, `${prefix}:{hits:L1}:reserved`, `${prefix}:{link:example.com/abc}`, `${prefix}:{rl:key:K1}`].sort(),
      );
      const ttl = await admin.pttl(`${prefix}:{link:example.com/abc}`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(5_000); // the negative cache is short-lived
    } finally {
      await h.close();
      admin.disconnect();
    }
  });

  test("entries of the older one-click format are still delivered; unreadable ones are dropped", async () => {
    const h = createRedisHotState({ url, prefix });
    const admin = new Redis(url);
    try {
      const stream = `${prefix}:{clicks}:stream`;
      const old = { id: "old1", linkId: "L1", ts: 1, ua: "", ip: null, country: null, referrer: null, variant: null };
      await h.readClicks("c1", 10); // creates the consumer group, as the running consumer did before the deploy
      await admin.xadd(stream, "*", "e", JSON.stringify(old));
      await admin.xadd(stream, "*", "b", "not json");
      // A batch as an array of event objects (before the column form), then column bodies that do not hold together.
      await admin.xadd(stream, "*", "n", "1", "b", JSON.stringify([{ ...old, id: "arr1" }]));
      await admin.xadd(stream, "*", "b", JSON.stringify({ v: 2, ids: ["x"], ts: [1], f: [0, 5, -1, -1, -1, -1], s: ["L1"] }));
      await admin.xadd(stream, "*", "b", JSON.stringify({ v: 3, ids: [], ts: [], f: [], s: [] }));
      const now = { ...old, rule: null, qr: false }; // the fields old formats did not have
      await h.enqueueClicks([{ ...now, id: "new1" }, { ...now, id: "new2", ua: "UA", ip: "192.0.2.1", country: "FR", referrer: "https://r/", variant: 1 }]);
      expect(await h.queueDepth()).toBe(6); // at least one click per entry (hand-written ones were never counted)
      const read = await h.readClicks("c1", 1000);
      // Older formats keep their event ids; the column form carries none (the entry is the batch, and each click is
      // named `<entry>:<index>` by the queue).
      expect(read.map((c) => c.event.id)).toEqual(["old1", "arr1", "", ""]);
      expect(read.map((c) => c.id.split(":")[1])).toEqual(["0", "0", "0", "1"]);
      expect(read.map((c) => c.batch)).toEqual(read.map((c) => c.id.split(":")[0]));
      expect(read[3]!.event).toEqual({ ...now, id: "", ua: "UA", ip: "192.0.2.1", country: "FR", referrer: "https://r/", variant: 1 });
      await h.ackBatches([...new Set(read.map((c) => c.batch))]);
      await waitUntil(async () => (await admin.xlen(stream)) === 0, 1_000); // the poison entry is dropped too
      expect(await h.queueDepth()).toBe(0);
      expect(await h.readClicks("c1", 1000)).toEqual([]);
    } finally {
      await h.close();
      admin.disconnect();
    }
  });

  test("an unreachable Redis rejects with AppError unavailable within a second", async () => {
    const h = createRedisHotState({ url: "redis://127.0.0.1:1", prefix });
    try {
      for (const op of [() => h.ping(), () => h.getLink("d/x"), () => h.takeHit("L", 5, ledgerFrom(0))]) {
        const start = performance.now();
        const err = await op().then(() => null, (e: unknown) => e);
        expect(err).toBeInstanceOf(AppError);
        expect((err as AppError).code).toBe("unavailable");
        expect(performance.now() - start).toBeLessThan(1_000);
      }
    } finally {
      await h.close();
    }
  });

  test("after the subscriber connection drops, onResubscribed fires once it is subscribed again, and later invalidations arrive", async () => {
    const h = createRedisHotState({ url, prefix });
    const admin = new Redis(url, { maxRetriesPerRequest: 1 });
    try {
      expect(await dropSubscriberAndRecover(h, [admin])).toBe(1);
    } finally {
      admin.disconnect();
      await h.close();
    }
  });

  test("fails fast while Redis is down and recovers by itself when it is back", async () => {
    const port = await freePort(); // a random one could be taken by a test running beside this one
    const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
    const start = () => Bun.spawn(["redis-server", ...args], { stdout: "ignore", stderr: "ignore" });
    let server = start();
    const h = createRedisHotState({ url: `redis://127.0.0.1:${port}`, prefix });
    try {
      await waitUntil(() => h.ping().then(() => true, () => false));
      await h.setLink("d/a", null);

      server.kill();
      await server.exited;
      const t0 = performance.now();
      const err = await h.getLink("d/a").then(() => null, (e: unknown) => e);
      expect((err as AppError).code).toBe("unavailable");
      expect(performance.now() - t0).toBeLessThan(1_000);

      server = start();
      await waitUntil(() => h.ping().then(() => true, () => false));
      expect(await h.getLink("d/a")).toBeUndefined(); // a fresh server: nothing cached
      expect(await h.takeHit("L", 5, ledgerFrom(4))).toBe(5);
    } finally {
      await h.close();
      server.kill();
    }
  });
});

afterAll(async () => {
  // The last contract cleanup ran before the specifics; sweep their keys too.
  await deleteTestKeys();
});

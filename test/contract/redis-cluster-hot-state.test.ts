/**
 * The HotState contract against a Redis Cluster (REDIS_CLUSTER_NODES, default 127.0.0.1:7001-7003; start one
 * with scripts/redis-cluster.sh). An unreachable cluster fails this file, it is never skipped.
 */
import { beforeEach, describe, expect, test } from "bun:test";
import { Cluster, Redis } from "ioredis";
import { createRedisHotState } from "../../shared/adapters/redis/hot-state.ts";
import { runHotStateContract } from "./hot-state.contract.ts";
import { dropSubscriberAndRecover } from "./resubscribe.ts";

const clusterNodes = (process.env.REDIS_CLUSTER_NODES_TEST || process.env.REDIS_CLUSTER_NODES || "127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003")
  .split(",")
  .map((s) => {
    const [host, port] = s.trim().split(":");
    return { host, port: Number(port) };
  });

const prefixes: string[] = [];
let prefix = "";
beforeEach(() => {
  prefix = `clinktest-${crypto.randomUUID().slice(0, 8)}`;
  prefixes.push(prefix);
});

/** Keys live on every master; each is deleted on its own node (one slot per key). */
async function deleteTestKeys() {
  const admin = new Cluster(clusterNodes);
  try {
    await new Promise((resolve, reject) => admin.once("ready", resolve).once("error", reject));
    for (const node of admin.nodes("master")) {
      const pipe = node.pipeline();
      for (const p of prefixes) for (const key of await node.keys(`${p}:*`)) pipe.del(key);
      await pipe.exec();
    }
  } finally {
    admin.disconnect();
  }
}

runHotStateContract(
  "Redis Cluster",
  async () => {
    const h = createRedisHotState({ clusterNodes, prefix, claimIdleMs: 200 });
    await h.ping();
    return h;
  },
  deleteTestKeys,
);

describe("Redis Cluster HotState specifics", () => {
  test("after the subscriber's connection drops, onResubscribed fires once it is subscribed again, and later invalidations arrive", async () => {
    const h = createRedisHotState({ clusterNodes, prefix });
    const admins = clusterNodes.map((n) => new Redis(n.port, n.host, { maxRetriesPerRequest: 1 }));
    try {
      expect(await dropSubscriberAndRecover(h, admins)).toBeGreaterThanOrEqual(1);
    } finally {
      for (const a of admins) a.disconnect();
      await h.close();
    }
  });
});

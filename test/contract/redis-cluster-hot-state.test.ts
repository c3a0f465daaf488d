/**
 * The HotState contract against a Redis Cluster (REDIS_CLUSTER_NODES, default 127.0.0.1:7001-7003; start one
 * with scripts/redis-cluster.sh). An unreachable cluster fails this file, it is never skipped.
 */
import { beforeEach, describe, expect, test } from "bun:test";
import { Redis } from "ioredis";
import { createRedisHotState } from "../../shared/adapters/redis/hot-state.ts";
import { CLUSTER_TEST_NODES, deleteClusterKeys } from "../helpers/redis-keys.ts";
import { runHotStateContract } from "./hot-state.contract.ts";
import { dropSubscriberAndRecover } from "./resubscribe.ts";

const clusterNodes = CLUSTER_TEST_NODES;

const prefixes: string[] = [];
let prefix = "";
beforeEach(() => {
  prefix = `clinktest-${crypto.randomUUID().slice(0, 8)}`;
  prefixes.push(prefix);
});

/** Keys live on every master; each is deleted on its own node (one slot per key). */
const deleteTestKeys = () => deleteClusterKeys(prefixes, clusterNodes);

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

/**
 * Redis for the contract tests: the addresses the test setup exports (test/setup/services.ts), and removal of the
 * keys a file wrote under its prefixes, on a single node or on every master of a Cluster (one slot per key, so
 * each key is deleted on its own node).
 */
import { Cluster, Redis } from "ioredis";

export const REDIS_TEST_URL = process.env.REDIS_URL_TEST || process.env.REDIS_URL || "redis://127.0.0.1:6379";

export const CLUSTER_TEST_NODES = (process.env.REDIS_CLUSTER_NODES_TEST || process.env.REDIS_CLUSTER_NODES || "127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003")
  .split(",")
  .map((s) => {
    const [host, port] = s.trim().split(":");
    return { host: host!, port: Number(port) };
  });

/** A fresh key prefix for one test's adapter, remembered in `prefixes` for deleteKeys. */
export function testPrefix(prefixes: string[]): string {
  const prefix = `clinktest-${crypto.randomUUID().slice(0, 8)}`;
  prefixes.push(prefix);
  return prefix;
}

/** Deletes every key under `prefixes` on the single node at `url`. */
export async function deleteKeys(prefixes: readonly string[], url = REDIS_TEST_URL): Promise<void> {
  const admin = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    for (const p of prefixes) {
      const keys = await admin.keys(`${p}:*`);
      if (keys.length) await admin.del(...keys);
    }
  } finally {
    admin.disconnect();
  }
}

/** Deletes every key under `prefixes` on each master of the Cluster. */
export async function deleteClusterKeys(prefixes: readonly string[], nodes = CLUSTER_TEST_NODES): Promise<void> {
  const admin = new Cluster(nodes);
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

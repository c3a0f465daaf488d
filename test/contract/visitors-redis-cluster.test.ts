/**
 * The VisitorLedger contract on a Redis Cluster (REDIS_CLUSTER_NODES_TEST, started by the test preload when
 * needed): every script touches one key, so a batch spread over shards in several slots works across masters.
 */
import { afterAll } from "bun:test";
import { connectRedis } from "../../shared/adapters/redis/connection.ts";
import { RedisVisitorLedger } from "../../shared/adapters/redis/visitors.ts";
import { CLUSTER_TEST_NODES as clusterNodes, deleteClusterKeys, testPrefix } from "../helpers/redis-keys.ts";
import { runVisitorLedgerContract } from "./visitors.contract.ts";

const prefixes: string[] = [];
afterAll(() => deleteClusterKeys(prefixes));

runVisitorLedgerContract("Redis Cluster", async () => {
  const prefix = testPrefix(prefixes);
  const conns = [connectRedis({ clusterNodes, prefix }), connectRedis({ clusterNodes, prefix })];
  return { a: new RedisVisitorLedger(conns[0]!), b: new RedisVisitorLedger(conns[1]!), close: async () => void (await Promise.all(conns.map((c) => c.close()))) };
});

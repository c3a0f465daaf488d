/** Chooses the adapters once at start-up from the parsed config (design §2: embedded or scale mode). */
import { join } from "node:path";
import { mkdirSync } from "node:fs";
import type { Config } from "../config.ts";
import type { HotState, LinkStore } from "../ports.ts";

export interface Storage {
  store: LinkStore;
  hot: HotState;
  /** Where the data lives, for the start-up message. */
  description: string;
}

export async function openStorage(config: Config): Promise<Storage> {
  if (config.mode === "scale") {
    const { PostgresLinkStore } = await import("./postgres/link-store.ts");
    const { createRedisHotState } = await import("./redis/hot-state.ts");
    const store = new PostgresLinkStore(config.databaseUrl!);
    const hot = createRedisHotState({ url: config.redisUrl, clusterNodes: config.redisClusterNodes });
    const redis = config.redisClusterNodes ? `Redis Cluster (${config.redisClusterNodes.length} seed nodes)` : "Redis";
    return { store, hot, description: `Postgres + ${redis}` };
  }
  const { SqliteLinkStore } = await import("./sqlite/link-store.ts");
  const { MemoryHotState } = await import("./memory/hot-state.ts");
  mkdirSync(config.dataDir, { recursive: true });
  const file = join(config.dataDir, "clink.sqlite");
  return { store: new SqliteLinkStore(file), hot: new MemoryHotState(), description: `SQLite at ${file}` };
}

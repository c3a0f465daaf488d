/** Chooses the adapters once at start-up from the parsed config (design §2: embedded or scale mode). */
import { join } from "node:path";
import { mkdirSync } from "node:fs";
import type { Config } from "../config.ts";
import type { HotState, Store, VisitorLedger } from "../ports.ts";

export interface Storage {
  store: Store;
  hot: HotState;
  /**
   * The click consumer's VisitorLedger in scale mode: Redis, on HotState's connection. Null in the embedded
   * default, whose click writer thread keeps its own on its SQLite connection.
   */
  visitors: VisitorLedger | null;
  /** Where the data lives, for the start-up message. */
  description: string;
}

export interface OpenStorageOptions {
  /** Postgres pool size (default 10); a redirector, which only reads on cache misses, needs fewer. */
  poolSize?: number;
}

/** At most one line per 10 s for a failing connection, however often the client retries. */
function throttledWarn(config: Config, what: string): (err: Error) => void {
  let last = 0;
  return (err) => {
    if (config.logLevel === "error" || config.logLevel === "silent") return;
    const now = Date.now();
    if (now - last < 10_000) return;
    last = now;
    console.warn(`${what}: ${err.message}`);
  };
}

/** The embedded default's database file. */
export const sqliteFile = (config: Config): string => join(config.dataDir, "clink.sqlite");

export async function openStorage(config: Config, opts: OpenStorageOptions = {}): Promise<Storage> {
  if (config.mode === "scale") {
    const { PostgresStore } = await import("./postgres/store.ts");
    const { RedisHotState } = await import("./redis/hot-state.ts");
    const { connectRedis } = await import("./redis/connection.ts");
    const { RedisVisitorLedger } = await import("./redis/visitors.ts");
    const store = new PostgresStore(config.databaseUrl!, { schema: config.databaseSchema, max: opts.poolSize });
    const conn = connectRedis({
      url: config.redisUrl,
      clusterNodes: config.redisClusterNodes,
      prefix: config.redisPrefix,
      onError: throttledWarn(config, "Redis"),
    });
    const hot = new RedisHotState(conn);
    const redis = config.redisClusterNodes ? `Redis Cluster (${config.redisClusterNodes.length} seed nodes)` : "Redis";
    const schema = config.databaseSchema ? `, schema ${config.databaseSchema}` : "";
    return { store, hot, visitors: new RedisVisitorLedger(conn), description: `Postgres${schema} + ${redis} (prefix ${config.redisPrefix})` };
  }
  const { SqliteStore } = await import("./sqlite/store.ts");
  const { MemoryHotState } = await import("./memory/hot-state.ts");
  mkdirSync(config.dataDir, { recursive: true });
  const file = sqliteFile(config);
  return { store: new SqliteStore(file), hot: new MemoryHotState(), visitors: null, description: `SQLite at ${file}` };
}

/**
 * The Redis server and the Postgres backends serving clink (application_name "clink"), when they run on this
 * machine, so their CPU per redirect or per click can be reported beside clink's own.
 */
import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";
import type postgres from "postgres";

/** True when `pid` is a process of this machine whose command line mentions `name`. */
function localProcess(pid: number, name: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(name);
  } catch {
    return false;
  }
}

/** Asked again each time: Postgres backends come and go with clink's connection pool. */
export function servicePids(redis: Redis, sql: postgres.Sql) {
  return async (): Promise<{ name: "Redis" | "Postgres"; pid: number }[]> => {
    const out: { name: "Redis" | "Postgres"; pid: number }[] = [];
    const redisPid = Number(/process_id:(\d+)/.exec(await redis.info("server"))?.[1]);
    if (redisPid && localProcess(redisPid, "redis")) out.push({ name: "Redis", pid: redisPid });
    const backends = await sql<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE application_name = 'clink' AND datname = current_database()`;
    for (const b of backends) if (localProcess(b.pid, "postgres")) out.push({ name: "Postgres", pid: b.pid });
    return out;
  };
}

/** Deletes every key under `prefix:` (the bench's own key prefix), a SCAN page at a time. */
export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    if (keys.length) await redis.del(...keys);
    cursor = next;
  } while (cursor !== "0");
}

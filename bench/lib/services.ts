/**
 * The Redis server and the Postgres backends serving clink (application_name "clink"), when they run on this
 * machine, so their CPU per redirect or per click can be reported beside clink's own.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
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

/**
 * The local TCP ports of this process's own sockets (its /proc/self/fd sockets looked up in /proc/net/tcp{,6}): a
 * Postgres backend whose client port is one of them serves this process, not another one using the same database.
 */
function ownTcpPorts(): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && inodes.has(f[9]!)) ports.push(parseInt(f[1]!.split(":")[1]!, 16));
    }
  }
  return ports;
}

/**
 * Asked again each time: Postgres backends come and go with clink's connection pool. `ownOnly`: only the backends
 * of this process's connections (other processes' tests and benches on the same database are not counted).
 */
export function servicePids(redis: Redis, sql: postgres.Sql, ownOnly = false) {
  return async (): Promise<{ name: "Redis" | "Postgres"; pid: number }[]> => {
    const out: { name: "Redis" | "Postgres"; pid: number }[] = [];
    const redisPid = Number(/process_id:(\d+)/.exec(await redis.info("server"))?.[1]);
    if (redisPid && localProcess(redisPid, "redis")) out.push({ name: "Redis", pid: redisPid });
    const backends = ownOnly
      ? await sql<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE application_name = 'clink' AND datname = current_database()
          AND client_port = ANY(${ownTcpPorts()}::int[])`
      : await sql<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE application_name = 'clink' AND datname = current_database()`;
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

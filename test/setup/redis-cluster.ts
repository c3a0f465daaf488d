/**
 * A throwaway Redis Cluster for one test run: three masters of the machine's `redis-server` on free loopback ports
 * (client and bus ports both probed, so a cluster already on 7001-7003, or anything else there, is no obstacle),
 * their files in a temp dir of this runner. The nodes run under scripts/redis-cluster-nodes.sh, which stops them
 * and removes the dir when its stdin closes: stop() closes it, and so does the kernel when the runner dies in any
 * other way (--bail, Ctrl-C, SIGKILL), so no redis-server outlives the run.
 *
 *   const cluster = await startTestCluster();   // "127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3", cluster_state:ok
 *   await cluster.stop();
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort, makeTempDir, REPO_ROOT } from "../helpers/server.ts";

const HOST = "127.0.0.1";
const MASTERS = 3;
const SLOT_COUNT = 16_384;
const SUPERVISOR = join(REPO_ROOT, "scripts/redis-cluster-nodes.sh");
const NODE_START_MS = 5_000;
/** A master waits 2 s after start before it declares the cluster ok (CLUSTER_WRITABLE_DELAY); then gossip. */
const CLUSTER_OK_MS = 15_000;
const STOP_MS = 5_000;
const ATTEMPTS = 3;
/** Set by the test setup when it could provide no cluster: the reason, which test/helpers/scale.ts reports. */
export const CLUSTER_PROBLEM_VAR = "CLINK_TEST_CLUSTER_PROBLEM";

export interface TestCluster {
  /** Seed nodes as the tests read them: "127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3". */
  readonly nodes: string;
  /** Where the nodes keep nodes.conf and their logs; removed by stop(). */
  readonly dir: string;
  /** Stops every node and removes dir. Safe to call more than once. */
  stop(): Promise<void>;
}

interface NodePorts {
  port: number;
  bus: number;
}

/** Contiguous slot ranges, one per master, covering all 16,384 slots. */
export function slotRanges(masters: number): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  for (let i = 0; i < masters; i++) {
    ranges.push([Math.floor((i * SLOT_COUNT) / masters), Math.floor(((i + 1) * SLOT_COUNT) / masters) - 1]);
  }
  return ranges;
}

function connect(host: string, port: number): Redis {
  const r = new Redis({ host, port, lazyConnect: true, connectTimeout: 1_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  r.on("error", () => {}); // each command reports its own failure
  return r;
}

async function clusterInfo(r: Redis): Promise<Record<string, string>> {
  const text = String(await r.call("CLUSTER", "INFO"));
  return Object.fromEntries(text.split(/\r?\n/).filter(Boolean).map((line) => line.split(":") as [string, string]));
}

/** Why `nodes` ("host:port,...") is not a usable cluster, or null when every node answers cluster_state:ok. */
export async function clusterProblem(nodes: string): Promise<string | null> {
  const list = nodes.split(",").map((s) => s.trim()).filter(Boolean);
  if (list.length === 0) return "no nodes listed";
  const problems = await Promise.all(
    list.map(async (node) => {
      const [host, port] = node.split(":");
      const r = connect(host!, Number(port));
      try {
        await r.connect();
        const state = (await clusterInfo(r)).cluster_state;
        return state === "ok" ? null : `${node}: cluster_state:${state}`;
      } catch (err) {
        return `${node}: ${(err as Error).message}`;
      } finally {
        r.disconnect();
      }
    }),
  );
  return problems.filter(Boolean).join("; ") || null;
}

/** `count` distinct free TCP ports on 127.0.0.1. */
async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

async function waitUntil(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} not within ${ms} ms`);
    await Bun.sleep(50);
  }
}

function logTail(dir: string, port: number): string {
  try {
    return readFileSync(join(dir, `redis-${port}.log`), "utf8").trim().split("\n").slice(-3).join(" | ");
  } catch {
    return "(no log)";
  }
}

/** Assigns each master its slots, introduces them to each other and waits until every one says cluster_state:ok. */
async function formCluster(nodes: NodePorts[]): Promise<void> {
  const clients = nodes.map((n) => connect(HOST, n.port));
  try {
    await Promise.all(clients.map((c) => c.connect()));
    const ranges = slotRanges(nodes.length);
    await Promise.all(clients.map((c, i) => c.call("CLUSTER", "ADDSLOTSRANGE", ranges[i]![0], ranges[i]![1])));
    for (const n of nodes.slice(1)) await clients[0]!.call("CLUSTER", "MEET", HOST, n.port, n.bus);
    await waitUntil("cluster_state:ok on every node", CLUSTER_OK_MS, async () => {
      const infos = await Promise.all(clients.map(clusterInfo));
      return infos.every((i) => i.cluster_state === "ok" && Number(i.cluster_known_nodes) === nodes.length);
    });
  } finally {
    for (const c of clients) c.disconnect();
  }
}

async function startOnce(): Promise<TestCluster> {
  const ports = await freePorts(MASTERS * 2);
  const nodes: NodePorts[] = Array.from({ length: MASTERS }, (_, i) => ({ port: ports[2 * i]!, bus: ports[2 * i + 1]! }));
  const dir = makeTempDir("redis-cluster");
  const proc = Bun.spawn(["sh", SUPERVISOR, dir, ...nodes.map((n) => `${n.port}:${n.bus}`)], {
    stdin: "pipe",
    stdout: "ignore",
    stderr: "inherit",
  });
  let stopped: Promise<void> | null = null;
  const stop = () =>
    (stopped ??= (async () => {
      proc.stdin.end();
      const timer = setTimeout(() => proc.kill("SIGKILL"), STOP_MS);
      await proc.exited;
      clearTimeout(timer);
    })());
  try {
    for (const n of nodes) {
      await waitUntil(`redis-server on port ${n.port}`, NODE_START_MS, async () => {
        const r = connect(HOST, n.port);
        try {
          await r.connect();
          return (await r.ping()) === "PONG";
        } finally {
          r.disconnect();
        }
      }).catch((err) => {
        throw new Error(`${(err as Error).message}: ${logTail(dir, n.port)}`);
      });
    }
    await formCluster(nodes);
  } catch (err) {
    await stop();
    throw err;
  }
  return { nodes: nodes.map((n) => `${HOST}:${n.port}`).join(","), dir, stop };
}

/**
 * Starts a 3-master cluster and resolves once it is usable. A port taken between the probe and redis-server's bind
 * makes a node fail to start: the attempt is stopped and another made on new ports.
 */
export async function startTestCluster(): Promise<TestCluster> {
  if (!Bun.which("redis-server")) throw new Error("redis-server not found (apt-get install redis-server)");
  let last: unknown;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    try {
      return await startOnce();
    } catch (err) {
      last = err;
    }
  }
  throw last;
}

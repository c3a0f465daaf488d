/**
 * Scale-mode deployments for end-to-end tests: a control plane and N redirectors as real processes on a
 * fresh Postgres schema (DATABASE_SCHEMA) and a random Redis key prefix (REDIS_PREFIX), so test files never
 * see each other's data. Plus private servers a fault test may stop and start at will (the shared Postgres
 * and Redis other tests use are never touched).
 *
 *   const d = await startDeployment({ redirectors: 2 });
 *   const key = await d.createKey("a@example.com");
 *   await api(d.control, key).post("/api/v1/links", { url: "https://example.com", slug: "abc" });
 *   await fetch(`${d.redirectors[1].url}/abc`, { redirect: "manual" });
 *   await d.stop();                        // every process, then the schema and the keys are removed
 *
 * Services come from DATABASE_URL_TEST, REDIS_URL_TEST and REDIS_CLUSTER_NODES_TEST, which the test setup
 * (test/setup/services.ts) exports: the local Postgres and Redis, and a Redis Cluster it started unless one was
 * named. A missing service fails the test with its address: never skipped.
 */
import type { Subprocess } from "bun";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Cluster, Redis } from "ioredis";
import postgres from "postgres";
import { createRedisHotState } from "../../shared/adapters/redis/hot-state.ts";
import { CLUSTER_PROBLEM_VAR } from "../setup/redis-cluster.ts";
import { createKey as runCreateKey, freePort, makeTempDir, startServer, type TestServer } from "./server.ts";

export const PG_URL = process.env.DATABASE_URL_TEST || process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
export const REDIS_URL = process.env.REDIS_URL_TEST || process.env.REDIS_URL || "redis://127.0.0.1:6379";
export const CLUSTER_NODES =
  process.env.REDIS_CLUSTER_NODES_TEST || process.env.REDIS_CLUSTER_NODES || "127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003";

/** Every process of a deployment shares one public base (links are keyed by its host). */
export const BASE_URL = "http://clink.test";

const redact = (url: string) => url.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:***@");
const clusterNodeList = (nodes: string) =>
  nodes.split(",").map((s) => {
    const [host, port] = s.trim().split(":");
    return { host, port: Number(port) };
  });

/** Polls `check` every 10 ms until it returns a truthy value; throws with `what` after `ms`. */
export async function waitFor<T>(what: string, check: () => Promise<T> | T, ms = 10_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms${last ? ` (last error: ${(last as Error).message})` : ""}`);
    await Bun.sleep(10);
  }
}

// --- service checks ------------------------------------------------------------------------------------------

export async function requirePostgres(url = PG_URL): Promise<void> {
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`SELECT 1`;
  } catch (err) {
    throw new Error(`Postgres is unreachable at ${redact(url)} (set DATABASE_URL_TEST): ${(err as Error).message}`);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

export async function requireRedis(url = REDIS_URL): Promise<void> {
  const r = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2_000, lazyConnect: true });
  r.on("error", () => {}); // reported by connect() below
  try {
    await r.connect();
    await r.ping();
  } catch (err) {
    throw new Error(`Redis is unreachable at ${redact(url)} (set REDIS_URL_TEST): ${(err as Error).message}`);
  } finally {
    r.disconnect();
  }
}

export async function requireCluster(nodes = CLUSTER_NODES): Promise<void> {
  const c = new Cluster(clusterNodeList(nodes), { clusterRetryStrategy: () => null, lazyConnect: true });
  c.on("error", () => {}); // reported by connect() below
  try {
    await c.connect();
    const info = await c.cluster("INFO");
    if (!String(info).includes("cluster_state:ok")) throw new Error("cluster_state is not ok");
  } catch (err) {
    const setup = process.env[CLUSTER_PROBLEM_VAR] ?? "the test setup starts one unless REDIS_CLUSTER_NODES_TEST names it";
    throw new Error(`Redis Cluster is unusable at ${nodes} (${setup}): ${(err as Error).message}`);
  } finally {
    c.disconnect();
  }
}

// --- deployments ---------------------------------------------------------------------------------------------

export interface DeploymentOptions {
  controls?: number;
  redirectors?: number;
  /** Postgres server URL (default PG_URL); the deployment gets its own schema in it. */
  databaseUrl?: string;
  /** Single node (default REDIS_URL) or a Cluster's seed nodes ("host:port,..."). */
  redis?: { url: string } | { clusterNodes: string };
  /** Extra environment for every process (e.g. COUNTRY_HEADER). */
  env?: Record<string, string>;
}

export interface Deployment {
  controls: TestServer[];
  redirectors: TestServer[];
  /** controls[0]. */
  control: TestServer;
  schema: string;
  prefix: string;
  /** What every process gets: DATABASE_URL, DATABASE_SCHEMA, REDIS_URL or REDIS_CLUSTER_NODES, REDIS_PREFIX, BASE_URL. */
  env: Record<string, string>;
  /** `npm run create-key` against this deployment; returns the key. */
  createKey(email: string, name?: string): Promise<string>;
  startRedirector(): Promise<TestServer>;
  startControl(): Promise<TestServer>;
  /** Clicks queued in Redis and not yet written to Postgres (via the HotState port); null when Redis is down. */
  queueDepth(): Promise<number | null>;
  stop(): Promise<void>;
}

export async function startDeployment(opts: DeploymentOptions = {}): Promise<Deployment> {
  const databaseUrl = opts.databaseUrl ?? PG_URL;
  const redis = opts.redis ?? { url: REDIS_URL };
  const id = crypto.randomUUID().replace(/-/g, "").slice(0, 12);
  const schema = `e2e_${id}`;
  const prefix = `e2e-${id}`;
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    DATABASE_SCHEMA: schema,
    REDIS_PREFIX: prefix,
    BASE_URL,
    ...("url" in redis ? { REDIS_URL: redis.url } : { REDIS_CLUSTER_NODES: redis.clusterNodes }),
    ...opts.env,
  };
  const hot = createRedisHotState("url" in redis ? { url: redis.url, prefix } : { clusterNodes: clusterNodeList(redis.clusterNodes), prefix });

  const controls: TestServer[] = [];
  const redirectors: TestServer[] = [];
  const startControl = async () => {
    const s = await startServer({ entry: "control/main.ts", args: ["--control"], env });
    controls.push(s);
    return s;
  };
  const startRedirector = async () => {
    const s = await startServer({ entry: "redirector/main.ts", env });
    redirectors.push(s);
    return s;
  };

  const deployment: Deployment = {
    controls,
    redirectors,
    get control() {
      return controls[0];
    },
    schema,
    prefix,
    env,
    createKey: (email, name) => runCreateKey({ env: { ...controls[0].env } }, email, name),
    startRedirector,
    startControl,
    queueDepth: () => hot.queueDepth().catch(() => null),
    async stop() {
      await Promise.all([...controls, ...redirectors].map((s) => s.stop()));
      await hot.close();
      await dropSchema(databaseUrl, schema).catch(() => {});
      await deleteKeys(redis, prefix).catch(() => {});
    },
  };
  try {
    // The first control runs the migrations; the rest start together.
    await startControl();
    const more = [];
    for (let i = 1; i < (opts.controls ?? 1); i++) more.push(startControl());
    for (let i = 0; i < (opts.redirectors ?? 2); i++) more.push(startRedirector());
    await Promise.all(more);
    // As an orchestrator does before it routes traffic: /healthz answers as soon as the process listens, but a
    // Redis client still connecting fails its commands at once (no offline queue), so wait for /readyz too.
    await Promise.all([...controls, ...redirectors].map((s) => waitUntilReady(s)));
  } catch (err) {
    await deployment.stop();
    throw err;
  }
  return deployment;
}

/** Resolves once GET /readyz answers 200 (every dependency connected, the schema migrated). */
export async function waitUntilReady(server: { url: string }, ms = 15_000): Promise<void> {
  await waitFor(`${server.url}/readyz to answer 200`, async () => {
    const res = await fetch(`${server.url}/readyz`, { signal: AbortSignal.timeout(2_500) }).catch(() => null);
    await res?.body?.cancel();
    return res?.status === 200 ? true : null;
  }, ms);
}

async function dropSchema(url: string, schema: string): Promise<void> {
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

async function deleteKeys(redis: { url: string } | { clusterNodes: string }, prefix: string): Promise<void> {
  const nodes: Redis[] = [];
  let cluster: Cluster | null = null;
  if ("url" in redis) nodes.push(new Redis(redis.url, { maxRetriesPerRequest: 0, retryStrategy: () => null }));
  else {
    cluster = new Cluster(clusterNodeList(redis.clusterNodes), { clusterRetryStrategy: () => null });
    await new Promise((resolve, reject) => cluster!.once("ready", resolve).once("error", reject));
    nodes.push(...cluster.nodes("master"));
  }
  try {
    for (const node of nodes) {
      const keys = await node.keys(`${prefix}:*`);
      // One DEL per key: in a Cluster, keys of one node may still sit in different slots.
      if (keys.length) await Promise.all(keys.map((k) => node.del(k)));
    }
  } finally {
    if (cluster) cluster.disconnect();
    else for (const n of nodes) n.disconnect();
  }
}

// --- private servers for fault tests -------------------------------------------------------------------------

/** A Redis of our own on a free port, without persistence: stop() loses everything, as a crash would. */
export interface PrivateRedis {
  readonly url: string;
  readonly port: number;
  start(): Promise<void>;
  /** SIGKILL by default: Redis dies as if the machine had gone. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let proc: Subprocess | null = null;
  const self: PrivateRedis = {
    url,
    port,
    async start() {
      proc = Bun.spawn(["redis-server", "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
        stdout: "ignore",
        stderr: "pipe",
      });
      await waitFor(`private Redis on port ${port}`, () => requireRedis(url).then(() => true), 5_000);
    },
    async stop(signal = "SIGKILL") {
      if (!proc) return;
      proc.kill(signal);
      await proc.exited;
      proc = null;
    },
  };
  await self.start();
  return self;
}

/** A Postgres cluster of our own (initdb in a temp dir, fsync off), started and stopped as a child process. */
export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  readonly url: string;
  start(): Promise<void>;
  /** SIGINT: Postgres' "fast shutdown" (running sessions are cut, as in a restart). */
  stop(): Promise<void>;
  /** stop() and remove the data directory. */
  destroy(): Promise<void>;
}

function postgresBinDir(): string {
  const r = Bun.spawnSync(["pg_config", "--bindir"]);
  const fromPgConfig = r.success ? r.stdout.toString().trim() : "";
  if (fromPgConfig && Bun.file(join(fromPgConfig, "initdb")).size > 0) return fromPgConfig;
  const glob = new Bun.Glob("/usr/lib/postgresql/*/bin/initdb");
  const found = [...glob.scanSync({ absolute: true })].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  if (!found.length) throw new Error("Postgres server binaries (initdb, postgres) not found: install postgresql");
  return found[found.length - 1].replace(/\/initdb$/, "");
}

/** initdb and postgres refuse to run as root: run them as the `postgres` user then. */
function postgresUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const uid = Number(Bun.spawnSync(["id", "-u", "postgres"]).stdout.toString().trim());
  const gid = Number(Bun.spawnSync(["id", "-g", "postgres"]).stdout.toString().trim());
  if (!uid) throw new Error("running as root, and there is no `postgres` user to run a private Postgres as");
  return { uid, gid };
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  const user = postgresUser();
  const dir = makeTempDir("pg");
  if (user) Bun.spawnSync(["chown", "-R", `${user.uid}:${user.gid}`, dir]);
  const data = join(dir, "data");
  const init = Bun.spawnSync([join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"], {
    ...(user ?? {}),
    stdout: "pipe",
    stderr: "pipe",
  });
  if (!init.success) throw new Error(`initdb failed: ${init.stderr.toString()}`);
  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let proc: Subprocess | null = null;
  const self: PrivatePostgres = {
    url,
    async start() {
      const args = ["-D", data, "-p", String(port), "-k", dir, "-h", "127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off"];
      proc = Bun.spawn([join(bin, "postgres"), ...args], { ...(user ?? {}), stdout: "ignore", stderr: "pipe" });
      await waitFor(`private Postgres on port ${port}`, () => requirePostgres(url).then(() => true), 10_000);
    },
    async stop() {
      if (!proc) return;
      proc.kill("SIGINT");
      await proc.exited;
      proc = null;
    },
    async destroy() {
      await self.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await self.start();
  return self;
}

// --- short addresses -----------------------------------------------------------------------------------------

export const DESKTOP_CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
export const IPHONE_SAFARI =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";

/** GET of a short address on one process, redirects not followed. */
export async function visit(server: { url: string }, slug: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/${slug}`, { redirect: "manual", headers: { "user-agent": DESKTOP_CHROME, ...headers } });
  await res.arrayBuffer();
  return { status: res.status, location: res.headers.get("location"), retryAfter: res.headers.get("retry-after") };
}

/** Sends `n` GETs at once, spread round-robin over `servers`; returns how many got each status. */
export async function burst(servers: { url: string }[], slug: string, n: number): Promise<Record<number, number>> {
  const statuses = await Promise.all(Array.from({ length: n }, (_, i) => visit(servers[i % servers.length], slug).then((r) => r.status)));
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

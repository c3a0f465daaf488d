/**
 * Liveness and readiness on every kind of process (embedded, control, redirector): /healthz touches nothing
 * and answers 200 while the process lives; /readyz checks storage, hot state and the schema, and answers 503
 * with a JSON body naming what is down (never a secret from a connection URL).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { requirePostgres, requireRedis, startDeployment, type Deployment } from "../helpers/scale.ts";

const READY_CHECKS = ["storage", "hotState", "migrations"];

async function probe(server: { url: string }, path: string, init?: RequestInit) {
  const res = await fetch(`${server.url}${path}`, init);
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, headers: res.headers, body, text };
}

describe("probes on the embedded server", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  test("GET /healthz answers 200 {status: ok}, not cached", async () => {
    const r = await probe(server, "/healthz");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: "ok" });
    expect(r.headers.get("cache-control")).toBe("no-store");
  });

  test("GET /readyz answers 200 with every check passing", async () => {
    const r = await probe(server, "/readyz");
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("ready");
    expect(r.body.down).toEqual([]);
    expect(Object.keys(r.body.checks).sort()).toEqual([...READY_CHECKS].sort());
    for (const name of READY_CHECKS) expect(r.body.checks[name]).toEqual({ ok: true });
  });

  test("the probes answer GET and HEAD only", async () => {
    expect((await probe(server, "/healthz", { method: "HEAD" })).status).toBe(200);
    const post = await probe(server, "/readyz", { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  test("without METRICS_TOKEN, GET /metrics is open and in Prometheus text format", async () => {
    const r = await probe(server, "/metrics");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
    expect(r.text).toContain('clink_info{role="embedded"} 1');
  });
});

describe("probes in scale mode", () => {
  let d: Deployment;
  const extra: TestServer[] = [];

  beforeAll(async () => {
    await requirePostgres();
    await requireRedis();
    d = await startDeployment({ redirectors: 1 });
  });
  afterAll(async () => {
    await Promise.all(extra.map((s) => s.stop()));
    await d?.stop();
  });

  test("control and redirector both answer /healthz and /readyz with 200", async () => {
    for (const [server, role] of [[d.control, "control"], [d.redirectors[0]!, "redirector"]] as const) {
      expect((await probe(server, "/healthz")).status).toBe(200);
      const ready = await probe(server, "/readyz");
      expect(ready.status).toBe(200);
      expect(ready.body.down).toEqual([]);
      expect((await probe(server, "/metrics")).text).toContain(`clink_info{role="${role}"} 1`);
    }
  });

  test("a redirector on a schema no control plane has migrated is alive but not ready: 503 names migrations", async () => {
    const unmigrated = `e2e_none_${crypto.randomUUID().replace(/-/g, "").slice(0, 10)}`;
    const r = await startServer({ entry: "redirector/main.ts", env: { ...d.env, DATABASE_SCHEMA: unmigrated } });
    extra.push(r);
    expect((await probe(r, "/healthz")).status).toBe(200);
    const ready = await probe(r, "/readyz");
    expect(ready.status).toBe(503);
    expect(ready.headers.get("retry-after")).toBe("5");
    expect(ready.body.status).toBe("unavailable");
    expect(ready.body.down).toEqual(["migrations"]);
    expect(ready.body.checks.storage).toEqual({ ok: true });
    expect(ready.body.checks.migrations.error).toContain("not applied");
  });

  test("a redirector whose Postgres and Redis are unreachable: /healthz 200, /readyz 503 naming both, no password shown", async () => {
    const r = await startServer({
      entry: "redirector/main.ts",
      env: {
        ...d.env,
        DATABASE_URL: "postgres://clink:pg-Secret-42@127.0.0.1:1/clink",
        REDIS_URL: "redis://:redis-Secret-42@127.0.0.1:1",
      },
    });
    extra.push(r);
    expect((await probe(r, "/healthz")).status).toBe(200);
    const started = performance.now();
    const ready = await probe(r, "/readyz");
    expect(performance.now() - started).toBeLessThan(4_000); // each check has a 2 s budget, run in parallel
    expect(ready.status).toBe(503);
    expect(ready.body.down).toEqual(expect.arrayContaining(["storage", "hotState"]));
    expect(ready.body.checks.storage.ok).toBe(false);
    expect(ready.body.checks.hotState.ok).toBe(false);
    for (const text of [ready.text, r.stdout, r.stderr]) {
      expect(text).not.toContain("pg-Secret-42");
      expect(text).not.toContain("redis-Secret-42");
    }
  });
});

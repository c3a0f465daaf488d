/**
 * Proves the e2e harness against the real embedded server: it starts, answers /healthz, accepts a key made by the
 * create-key CLI, shuts down cleanly on SIGTERM and keeps its data across a restart on the same DATA_DIR.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { api, createKey, createKeyWithCli, makeTempDir, startServer, type TestServer } from "../helpers/server.ts";

describe("e2e harness against the embedded server", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer();
  });

  afterAll(async () => {
    await server?.stop();
  });

  test("GET /healthz answers 200", async () => {
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).toBe(200);
  });

  test("create-key prints a ck_ key on its last line that authenticates the REST API", async () => {
    const key = await createKeyWithCli(server, "harness@example.com", "harness");
    expect(key).toMatch(/^ck_[A-Za-z0-9_]{32,}$/);

    const listed = await api(server, key).get("/api/v1/links");
    expect(listed.status).toBe(200);
    expect(Array.isArray(listed.body.links)).toBe(true);

    const anonymous = await api(server).get("/api/v1/links");
    expect(anonymous.status).toBe(401);
  });
});

describe("e2e harness lifecycle", () => {
  const dataDir = makeTempDir("lifecycle");

  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("SIGTERM exits with code 0 and a key survives a restart on the same DATA_DIR", async () => {
    const first = await startServer({ dataDir });
    const key = await createKey(first, "lifecycle@example.com");
    expect(await first.stop("SIGTERM")).toBe(0);
    expect(first.running).toBe(false);

    const second = await startServer({ dataDir });
    try {
      const listed = await api(second, key).get("/api/v1/links");
      expect(listed.status).toBe(200);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  });
});

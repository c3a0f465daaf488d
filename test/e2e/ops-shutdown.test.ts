/**
 * Graceful shutdown of the embedded server under load (design §8: no click lost on SIGTERM): while clients
 * keep requesting a short address, SIGTERM stops the process; it exits 0 after finishing the requests in
 * flight, flushing the click buffer and queue into SQLite and closing it. After a restart on the same
 * DATA_DIR the link's stats hold every redirect a client received.
 */
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { api, createKey, makeTempDir, startServer } from "../helpers/server.ts";

const dataDir = makeTempDir("shutdown");
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test("SIGTERM under load: exit 0, and every redirect served is a recorded click", async () => {
  const server = await startServer({ dataDir });
  const key = await createKey(server, "shutdown@example.com");
  expect((await api(server, key).post("/api/v1/links", { url: "https://example.com/busy", slug: "busy" })).status).toBe(201);

  let served = 0;
  let running = true;
  const client = async () => {
    while (running) {
      try {
        const res = await fetch(`${server.url}/busy`, { redirect: "manual" });
        await res.arrayBuffer();
        if (res.status === 302) served++;
      } catch {
        // Refused or reset once the server stops accepting: that request was not served.
        if (!server.running) return;
        await Bun.sleep(5);
      }
    }
  };
  const clients = Array.from({ length: 24 }, client);
  await Bun.sleep(1_000);
  const servedBeforeSignal = served;
  server.proc.kill("SIGTERM");
  const code = await server.proc.exited;
  running = false;
  await Promise.all(clients);
  expect(code).toBe(0);
  expect(servedBeforeSignal).toBeGreaterThan(200); // it really was under load

  // Same port, so the same BASE_URL and therefore the same link domain.
  const again = await startServer({ dataDir, port: server.port });
  try {
    const stats = await api(again, key).get("/api/v1/links/busy/stats");
    expect(stats.status).toBe(200);
    const link = await api(again, key).get("/api/v1/links/busy");
    console.log(`SIGTERM under load: ${served} redirects received by clients, ${stats.body.totalClicks} clicks recorded`);
    // A response can be written and the connection cut before the client reads it: recorded may exceed served
    // by the requests in flight (at most one per client), never fall short of it.
    expect(stats.body.totalClicks).toBeGreaterThanOrEqual(served);
    expect(stats.body.totalClicks).toBeLessThanOrEqual(served + clients.length);
    expect(link.body.hits).toBe(stats.body.totalClicks);
  } finally {
    await again.stop();
  }
}, 30_000);

/** Lowering maxHits right after a burst must count the clicks still queued for the store (no counter reset). */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { api, createKey, startServer, type ApiClient, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let owner: ApiClient;
beforeAll(async () => {
  server = await startServer({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  owner = api(server, await createKey(server, "race@example.com"));
});
afterAll(() => server?.stop());

async function burst(slug: string, n: number): Promise<number> {
  const statuses = await Promise.all(Array.from({ length: n }, () => fetch(`${server.url}/${slug}`, { redirect: "manual" }).then((r) => r.status)));
  return statuses.filter((s) => s === 302).length;
}

test("PATCH of maxHits right after 50 clicks: 100 → 60 lets exactly 10 more through", async () => {
  await owner.post("/api/v1/links", { url: "https://example.com/", slug: "race", maxHits: 100 });
  expect(await burst("race", 50)).toBe(50);
  expect((await owner.patch("/api/v1/links/race", { maxHits: 60 })).status).toBe(200);
  expect(await burst("race", 50)).toBe(10);
});

test("removing the limit and setting it again re-seeds from the recorded hits", async () => {
  await owner.post("/api/v1/links", { url: "https://example.com/", slug: "race-2", maxHits: 5 });
  expect(await burst("race-2", 5)).toBe(5);
  await owner.patch("/api/v1/links/race-2", { maxHits: null });
  expect(await burst("race-2", 5)).toBe(5);
  for (let i = 0; i < 100 && (await owner.get("/api/v1/links/race-2")).body.hits < 10; i++) await Bun.sleep(50);
  await owner.patch("/api/v1/links/race-2", { maxHits: 12 });
  expect(await burst("race-2", 5)).toBe(2);
});

/**
 * maxHits in scale mode (design §2 data flow 4, §8): one atomic Redis step per click decides, so the limit is
 * exact however the requests are spread over redirector processes; a missing counter is seeded from Postgres,
 * so losing it in Redis cannot reset a limit.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PostgresStore } from "../../shared/adapters/postgres/store.ts";
import { createRedisHotState } from "../../shared/adapters/redis/hot-state.ts";
import { api, type ApiClient } from "../helpers/server.ts";
import { BASE_URL, PG_URL, REDIS_URL, burst, requirePostgres, requireRedis, startDeployment, waitFor, type Deployment } from "../helpers/scale.ts";

let d: Deployment;
let c: ApiClient;

beforeAll(async () => {
  await requirePostgres();
  await requireRedis();
  d = await startDeployment({ redirectors: 2 });
  c = api(d.control, await d.createKey("alice@example.com"));
}, 30_000);
afterAll(() => d?.stop());

/**
 * Waits until Postgres holds `expected` hits for the link (clicks leave the redirectors within ~50 ms, then the
 * consumer writes them) and nothing is left queued, then returns the stored count, which may only be higher if
 * a click was over-served.
 */
async function storedHits(slug: string, expected: number): Promise<number> {
  await waitFor(`${expected} hits stored for ${slug}`, async () => (await c.get(`/api/v1/links/${slug}`)).body.hits >= expected);
  await Bun.sleep(100); // a late click would still be on its way
  await waitFor("click queue drained", async () => (await d.queueDepth()) === 0);
  return (await c.get(`/api/v1/links/${slug}`)).body.hits;
}

describe("maxHits across two redirector processes", () => {
  test("1,000 concurrent requests split over both, maxHits 100: exactly 100 redirects", async () => {
    expect((await c.post("/api/v1/links", { url: "https://example.com/hundred", slug: "hundred", maxHits: 100 })).status).toBe(201);
    const counts = await burst(d.redirectors, "hundred", 1_000);
    expect(counts).toEqual({ 302: 100, 410: 900 });
    expect(await storedHits("hundred", 100)).toBe(100);
    const stats = await c.get("/api/v1/links/hundred/stats");
    expect(stats.body.totalClicks).toBe(100);
  });

  test("a counter lost in Redis is seeded from Postgres: the limit still holds", async () => {
    await c.post("/api/v1/links", { url: "https://example.com/fifty", slug: "fifty", maxHits: 50 });
    expect(await burst(d.redirectors, "fifty", 30)).toEqual({ 302: 30 });
    expect(await storedHits("fifty", 30)).toBe(30);

    // As after a Redis restart without persistence: the counter key is gone.
    const store = new PostgresStore(PG_URL, { schema: d.schema, max: 1 });
    const hot = createRedisHotState({ url: REDIS_URL, prefix: d.prefix });
    try {
      const link = (await store.getLink(new URL(BASE_URL).host, "fifty"))!;
      await hot.resetHits(link.id);
      expect(await hot.peekHits(link.id)).toBeNull();
    } finally {
      await hot.close();
      await store.close();
    }

    expect(await burst(d.redirectors, "fifty", 100)).toEqual({ 302: 20, 410: 80 });
    expect(await storedHits("fifty", 50)).toBe(50);
  });

  test("raising maxHits by PATCH allows exactly the difference", async () => {
    await c.post("/api/v1/links", { url: "https://example.com/ten", slug: "ten", maxHits: 10 });
    expect(await burst(d.redirectors, "ten", 40)).toEqual({ 302: 10, 410: 30 });
    expect(await storedHits("ten", 10)).toBe(10);
    expect((await c.patch("/api/v1/links/ten", { maxHits: 15 })).status).toBe(200);
    // The change reaches the redirectors through pub/sub; the counter is re-seeded from Postgres (10).
    await waitFor("raised limit served", async () => (await burst(d.redirectors, "ten", 1))[302] === 1, 2_000);
    expect(await burst(d.redirectors, "ten", 40)).toEqual({ 302: 4, 410: 36 });
    expect(await storedHits("ten", 15)).toBe(15);
  });
});

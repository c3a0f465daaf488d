/**
 * maxHits (design §4 step 3, §8 "a limit is never exceeded"): exact under 1,000 concurrent requests, and the count
 * survives a graceful restart of the embedded server (hits are in SQLite; the in-memory counter is seeded from them).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { api, createKey, startServer, type ApiClient, type TestServer } from "../helpers/server.ts";

const HUMAN = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";

let server: TestServer;
let owner: ApiClient;

beforeAll(async () => {
  server = await startServer({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  owner = api(server, await createKey(server, "limits@example.com"));
});
afterAll(() => server?.stop());

/** Fires `n` requests at once and tallies the statuses; every request has its own deadline. */
async function burst(slug: string, n: number, method = "GET"): Promise<Record<number, number>> {
  const statuses = await Promise.all(
    Array.from({ length: n }, async () => {
      const res = await fetch(`${server.url}/${slug}`, {
        method,
        redirect: "manual",
        headers: { "user-agent": HUMAN },
        signal: AbortSignal.timeout(30_000),
      });
      await res.arrayBuffer();
      return res.status;
    }),
  );
  const tally: Record<number, number> = {};
  for (const s of statuses) tally[s] = (tally[s] ?? 0) + 1;
  return tally;
}

/** Waits until the stored hit count reaches `n` (the consumer writes clicks in batches), then returns the link. */
async function waitForHits(slug: string, n: number) {
  for (let i = 0; i < 200; i++) {
    const link = (await owner.get(`/api/v1/links/${slug}`)).body;
    if (link.hits >= n) return link;
    await Bun.sleep(25);
  }
  throw new Error(`hits of ${slug} never reached ${n}`);
}

describe("maxHits", () => {
  test("1,000 concurrent requests on maxHits 100: exactly 100 × 302 and 900 × 410; a graceful restart keeps the count", async () => {
    const created = await owner.post("/api/v1/links", { url: "https://example.com/limited", slug: "hundred", maxHits: 100 });
    expect(created.status).toBe(201);

    expect(await burst("hundred", 1000)).toEqual({ 302: 100, 410: 900 });

    // Restarted at once: clicks still buffered or queued must be written on SIGTERM, not lost.
    await server.restart();
    // HEAD first: right after a restart the counter is not loaded yet, and HEAD must not claim a redirect.
    const head = await api(server).raw("/hundred", { method: "HEAD" });
    expect(head.status).toBe(410);
    expect(head.headers.get("location")).toBeNull();
    const after = await api(server).get("/hundred", { headers: { "user-agent": HUMAN } });
    expect(after.status).toBe(410);
    expect(after.headers.get("location")).toBeNull();
    expect(after.body).toContain("click limit");
    expect(await burst("hundred", 50)).toEqual({ 410: 50 });
    expect((await waitForHits("hundred", 100)).hits).toBe(100);
    await Bun.sleep(300);
    expect((await owner.get("/api/v1/links/hundred")).body.hits).toBe(100);
    const stats = (await owner.get("/api/v1/links/hundred/stats")).body;
    expect(stats.totalClicks).toBe(100);
    expect(stats.last24h.reduce((n: number, h: { clicks: number }) => n + h.clicks, 0)).toBe(100);
  });

  test("a partly used limit resumes where it was after a restart", async () => {
    await owner.post("/api/v1/links", { url: "https://example.com/ten", slug: "ten", maxHits: 10 });
    expect(await burst("ten", 6)).toEqual({ 302: 6 });
    await server.restart();
    expect(await burst("ten", 20)).toEqual({ 302: 4, 410: 16 });
    expect((await waitForHits("ten", 10)).hits).toBe(10);
  });

  test("raising maxHits lets exactly the difference through; HEAD never takes a hit", async () => {
    await owner.post("/api/v1/links", { url: "https://example.com/raise", slug: "raise", maxHits: 5 });
    expect(await burst("raise", 10, "HEAD")).toEqual({ 302: 10 });
    expect(await burst("raise", 20)).toEqual({ 302: 5, 410: 15 });
    await waitForHits("raise", 5);
    expect((await owner.patch("/api/v1/links/raise", { maxHits: 8 })).status).toBe(200);
    expect(await burst("raise", 20)).toEqual({ 302: 3, 410: 17 });
    expect((await owner.patch("/api/v1/links/raise", { maxHits: null })).status).toBe(200);
    expect(await burst("raise", 5)).toEqual({ 302: 5 });
    expect((await waitForHits("raise", 13)).hits).toBe(13);
  });
});

/**
 * The REST API (design §3) over real HTTP against the embedded server process: only what needs the real process.
 * The API's own contract (link object, validation, errors, auth, lists, bulk, rate limits, OpenAPI) is tested in
 * process in test/app/*.test.ts; what stays here is what they cannot see: the redirector answering the short
 * address after a create, PATCH, DELETE or bulk (and a PATCH racing a DELETE), clicks recorded by the real click
 * pipeline and read back as stats, 404s for hostile paths, and Bun.serve's own request body limit (413).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { api, createKey, startServer, type ApiClient, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let a: ApiClient;

beforeAll(async () => {
  server = await startServer();
  a = api(server, await createKey(server, "alice@example.com"));
  expect((await a.post("/api/v1/links", { url: "https://example.com/page", slug: "first-link" })).status).toBe(201);
});
afterAll(() => server?.stop());

function expectProblem(res: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  expect(res.body).toMatchObject({ status, code });
  expect(typeof res.body.type).toBe("string");
  expect(typeof res.body.title).toBe("string");
  expect(typeof res.body.detail).toBe("string");
}

/** Waits until the click consumer has written `n` clicks for the slug. */
async function waitForClicks(client: ApiClient, slug: string, n: number) {
  for (let i = 0; i < 100; i++) {
    const s = await client.get(`/api/v1/links/${slug}/stats`);
    if (s.body.totalClicks >= n) return s.body;
    await Bun.sleep(50);
  }
  throw new Error(`stats never reached ${n} clicks`);
}

describe("create", () => {
  test("spaces and non-ASCII in addresses are stored percent-encoded, and redirect as such", async () => {
    const res = await a.post("/api/v1/links", {
      url: "https://bücher.example/a b?q=ü", slug: "encoded-target",
      abUrls: [{ url: "https://example.com/x y", weight: 1 }],
    });
    expect(res.status).toBe(201);
    const hop = await fetch(`${server.url}/encoded-target`, { redirect: "manual" });
    expect(hop.status).toBe(302);
    expect(hop.headers.get("location")).toBe("https://example.com/x%20y");
  });

  test("body over 1 MiB → 413 payload_too_large", async () => {
    const res = await a.raw("/api/v1/links", {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ url: "https://e.com", folder: "x".repeat(1_100_000) }),
    });
    expectProblem(res, 413, "payload_too_large");
  });
});

describe("update and delete, seen on the short address", () => {
  test("PATCH: the short address redirects to the new target, without the UTM source it cleared", async () => {
    await a.post("/api/v1/links", { url: "https://example.com/before", slug: "patch-me", folder: "f", utmSource: "nl", tags: ["t"] });
    const res = await a.patch("/api/v1/links/patch-me", { targetUrl: "https://example.com/after", folder: null, utmSource: "", maxHits: 10 });
    expect(res.status).toBe(200);
    const r = await api(server).get("/patch-me");
    expect(r.headers.get("location")).toBe("https://example.com/after");
  });

  test("DELETE → 204, then the API and the short address answer 404", async () => {
    await a.post("/api/v1/links", { url: "https://example.com/del", slug: "delete-me" });
    expect((await api(server).get("/delete-me")).status).toBe(302);
    const res = await a.del("/api/v1/links/delete-me");
    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
    expectProblem(await a.get("/api/v1/links/delete-me"), 404, "not_found");
    expect((await api(server).get("/delete-me")).status).toBe(404);
  });

  test("a PATCH racing a DELETE never brings the link back: the short address answers 404", async () => {
    for (let i = 0; i < 3; i++) {
      const slug = `race-delete-${i}`;
      await a.post("/api/v1/links", { url: "https://example.com/r", slug });
      expect((await api(server).get(`/${slug}`)).status).toBe(302); // cached by the redirector
      const [patched, deleted] = await Promise.all([a.patch(`/api/v1/links/${slug}`, { password: "secret-pw" }), Bun.sleep(2).then(() => a.del(`/api/v1/links/${slug}`))]);
      expect(deleted.status).toBe(204);
      expect([200, 404]).toContain(patched.status);
      expectProblem(await a.get(`/api/v1/links/${slug}`), 404, "not_found");
      expect((await api(server).get(`/${slug}`)).status).toBe(404);
    }
  });
});

describe("bulk", () => {
  test("500 rows: the last one created redirects", async () => {
    const rows = Array.from({ length: 500 }, (_, i) => ({ url: `https://bulk.example.com/${i}` }));
    const res = await a.post("/api/v1/bulk", rows);
    expect([res.status, res.body.created]).toEqual([200, 500]);
    expect((await api(server).get(`/${res.body.results[499].slug}`)).headers.get("location")).toBe("https://bulk.example.com/499");
  });
});

const BROWSER_OF_IPHONE = "Safari";

describe("redirects and stats", () => {
  test("302 with UTM parameters and Cache-Control: private, max-age=0", async () => {
    await a.post("/api/v1/links", { url: "https://example.com/land?x=1", slug: "utm-link", utmSource: "news letter", utmMedium: "email", utmCampaign: "c1" });
    const res = await api(server).get("/utm-link");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("https://example.com/land?x=1&utm_source=news+letter&utm_medium=email&utm_campaign=c1");
    expect(res.headers.get("cache-control")).toBe("private, max-age=0");
  });

  const tricks = ["/no-such-slug", "/..%2F..%2Fetc%2Fpasswd", "/first-link/extra", "/%F0%9F%94%A5", "/first-link%00", "/FIRST-LINK", "/ab", `/${"x".repeat(41)}`, "/a%20b"];
  for (const path of tricks) {
    test(`${path.slice(0, 30)} → 404 HTML`, async () => {
      const res = await api(server).get(path);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toContain("text/html");
    });
  }

  test("stats count clicks by device and browser from rollups, 24 hourly buckets", async () => {
    await a.post("/api/v1/links", { url: "https://example.com/s", slug: "stats-link" });
    const iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
    const chrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";
    for (let i = 0; i < 3; i++) await api(server).get("/stats-link", { headers: { "user-agent": iphone } });
    for (let i = 0; i < 2; i++) await api(server).get("/stats-link", { headers: { "user-agent": chrome } });
    await api(server).raw("/stats-link", { method: "HEAD" });
    const stats = await waitForClicks(a, "stats-link", 5);
    await Bun.sleep(300);
    const s = (await a.get("/api/v1/links/stats-link/stats")).body;
    expect(s.totalClicks).toBe(5);
    expect(s.slug).toBe("stats-link");
    expect(s.byDevice).toEqual({ mobile: 3, desktop: 2 });
    expect(s.byBrowser).toEqual({ [BROWSER_OF_IPHONE]: 3, Chrome: 2 });
    expect(s.last24h).toHaveLength(24);
    const current = new Date();
    current.setUTCMinutes(0, 0, 0);
    expect(s.last24h[23]).toEqual({ hour: current.toISOString(), clicks: 5 });
    expect(s.last24h.slice(0, 23).every((h: { clicks: number }) => h.clicks === 0)).toBe(true);
    expect(Date.parse(s.last24h[1].hour) - Date.parse(s.last24h[0].hour)).toBe(3_600_000);
    expect((await a.get("/api/v1/links/stats-link")).body.hits).toBe(5);
    expect(stats.totalClicks).toBeGreaterThanOrEqual(5);
  });
});

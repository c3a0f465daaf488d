/**
 * GET /metrics on the embedded server after known traffic: every redirect outcome, the latency histogram, API
 * requests by route template and status, both kinds of rate-limit rejection, clicks written, the click queue,
 * webhook deliveries and the link cache; and METRICS_TOKEN guarding the endpoint.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { api, createKey, startServer, type ApiClient, type TestServer } from "../helpers/server.ts";

const TOKEN = "metrics-token-for-tests-0123456789";
const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";

/** The value of one series in a Prometheus text exposition; undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = m[2] ? m[2].split(/,(?=[a-zA-Z_]\w*=")/) : [];
    if (wanted.length === have.length && wanted.every((w) => have.includes(w))) return Number(m[3]);
  }
  return undefined;
}

async function visit(server: TestServer, slug: string, init: RequestInit = {}): Promise<number> {
  const res = await fetch(`${server.url}/${slug}`, { redirect: "manual", ...init, headers: { "user-agent": CHROME, ...(init.headers ?? {}) } });
  await res.arrayBuffer();
  return res.status;
}

async function waitFor(what: string, check: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await Bun.sleep(25);
  }
}

describe("GET /metrics", () => {
  let server: TestServer;
  let owner: ApiClient;
  let hook: ReturnType<typeof Bun.serve>;
  let hooksReceived = 0;
  const scrape = async () => {
    const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    return res.text();
  };

  beforeAll(async () => {
    hook = Bun.serve({
      port: 0,
      fetch() {
        hooksReceived++;
        return new Response(null, { status: 204 });
      },
    });
    server = await startServer({ env: { METRICS_TOKEN: TOKEN, RATE_LIMIT_PER_MINUTE: "10", WEBHOOK_ALLOW_PRIVATE: "true" } });
    owner = api(server, await createKey(server, "metrics@example.com"));
    const future = new Date(Date.now() + 86_400_000).toISOString();
    for (const body of [
      { url: "https://example.com/ok", slug: "m-ok" },
      { url: "https://example.com/once", slug: "m-once", maxHits: 1 },
      { url: "https://example.com/later", slug: "m-later", startsAt: future },
      { url: "https://example.com/secret", slug: "m-pw", password: "the-password" },
      { url: "https://example.com/hook", slug: "m-hook", webhookUrl: `http://127.0.0.1:${hook.port}/hook` },
    ]) {
      expect((await owner.post("/api/v1/links", body)).status).toBe(201);
    }

    // Known traffic: 302 ×5, 404, 410, 425, 401 ×6 (one GET, five wrong passwords), then 429.
    for (let i = 0; i < 3; i++) expect(await visit(server, "m-ok")).toBe(302);
    expect(await visit(server, "m-once")).toBe(302);
    expect(await visit(server, "m-once")).toBe(410);
    expect(await visit(server, "m-hook")).toBe(302);
    expect(await visit(server, "m-nothing-here")).toBe(404);
    expect(await visit(server, "m-later")).toBe(425);
    expect(await visit(server, "m-pw")).toBe(401);
    const wrong = { method: "POST", body: new URLSearchParams({ password: "wrong" }), headers: { "content-type": "application/x-www-form-urlencoded" } };
    for (let i = 0; i < 5; i++) expect(await visit(server, "m-pw", wrong)).toBe(401);
    expect(await visit(server, "m-pw", wrong)).toBe(429);

    // A second key spends its 10 requests per minute, then one more: one API rate-limit rejection.
    const limited = api(server, await createKey(server, "metrics@example.com", "limited"));
    for (let i = 0; i < 10; i++) expect((await limited.get("/api/v1/links/m-ok")).status).toBe(200);
    expect((await limited.get("/api/v1/links/m-ok")).status).toBe(429);
  });

  afterAll(async () => {
    await server?.stop();
    hook?.stop(true);
  });

  test("redirects are counted by outcome, and every one is in the latency histogram", async () => {
    const text = await scrape();
    const expected: Record<string, number> = { "302": 5, "404": 1, "410": 1, "425": 1, "401": 6, "429": 1, "200": 0, "503": 0 };
    for (const [outcome, n] of Object.entries(expected)) {
      expect({ outcome, n: sample(text, "clink_redirects_total", { outcome }) }).toEqual({ outcome, n });
    }
    expect(sample(text, "clink_redirect_duration_seconds_count")).toBe(15);
    expect(sample(text, "clink_redirect_duration_seconds_bucket", { le: "+Inf" })).toBe(15);
    expect(sample(text, "clink_redirect_duration_seconds_sum")).toBeGreaterThan(0);
    expect(text).toContain("# TYPE clink_redirect_duration_seconds histogram");
  });

  test("API requests are counted by route template, method and status; rate-limit rejections by scope", async () => {
    const text = await scrape();
    expect(sample(text, "clink_api_requests_total", { route: "/api/v1/links", method: "POST", status: "201" })).toBe(5);
    expect(sample(text, "clink_api_requests_total", { route: "/api/v1/links/:param", method: "GET", status: "200" })).toBe(10);
    expect(sample(text, "clink_api_requests_total", { route: "/api/v1/links/:param", method: "GET", status: "429" })).toBe(1);
    expect(sample(text, "clink_api_request_duration_seconds_count", { route: "/api/v1/links" })).toBe(5);
    expect(sample(text, "clink_rate_limit_rejections_total", { scope: "api" })).toBe(1);
    expect(sample(text, "clink_rate_limit_rejections_total", { scope: "password" })).toBe(1);
    // No raw slug ever becomes a label value.
    expect(text).not.toContain("m-ok");
  });

  test("clicks written, queue depth and lag, webhook deliveries", async () => {
    let text = "";
    await waitFor("5 clicks written and 1 webhook delivered", async () => {
      text = await scrape();
      return sample(text, "clink_clicks_written_total") === 5 && sample(text, "clink_webhook_deliveries_total", { result: "delivered" }) === 1;
    });
    expect(hooksReceived).toBe(1);
    expect(sample(text, "clink_click_queue_depth")).toBe(0);
    expect(sample(text, "clink_click_buffer_size")).toBe(0);
    expect(sample(text, "clink_clicks_dropped_total")).toBe(0);
    expect(sample(text, "clink_clicks_refused_total")).toBe(0);
    const lag = sample(text, "clink_click_lag_seconds")!;
    expect(lag).toBeGreaterThanOrEqual(0);
    expect(lag).toBeLessThan(10);
    for (const result of ["failed", "refused", "dropped"]) expect(sample(text, "clink_webhook_deliveries_total", { result })).toBe(0);
  });

  test("the link cache reports hits, misses and their ratio", async () => {
    const text = await scrape();
    const hits = sample(text, "clink_link_cache_lookups_total", { result: "hit" })!;
    const misses = sample(text, "clink_link_cache_lookups_total", { result: "miss" })!;
    expect(hits).toBeGreaterThan(0);
    expect(misses).toBeGreaterThan(0);
    expect(sample(text, "clink_link_cache_hit_ratio")).toBeCloseTo(hits / (hits + misses), 5);
  });

  test("process metrics from prom-client are included", async () => {
    const text = await scrape();
    expect(sample(text, "process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(0);
  });

  test("with METRICS_TOKEN set, /metrics needs that Bearer token", async () => {
    const none = await fetch(`${server.url}/metrics`);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
    expect(none.headers.get("content-type")).toBe("application/problem+json");
    expect(await none.text()).not.toContain("clink_");
    const wrong = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } });
    expect(wrong.status).toBe(401);
    const apiKeyInstead = await fetch(`${server.url}/metrics`, { headers: { authorization: "Basic bWV0cmljczp4" } });
    expect(apiKeyInstead.status).toBe(401);
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    // The probes stay open: orchestrators call them without credentials.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });
});

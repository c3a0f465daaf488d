/**
 * Click webhooks end to end (design §4): the real server POSTs to a real receiver on 127.0.0.1 (allowed by
 * WEBHOOK_ALLOW_PRIVATE=true), signed per Standard Webhooks with the link's webhookSecret. Checked here: the exact
 * payload and what it must not carry, one delivery per counted click and none for HEAD, crawler previews, locked
 * password views or clicks over the limit, delivery off the hot path with the 5 s timeout and no redirects followed,
 * and the SSRF guard at create/PATCH time and again at send time.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { openCountryLookup } from "../../shared/facts/geo.ts";
import { verifyWebhook } from "../../shared/webhooks/sign.ts";
import { api, createKey, startServer, type ApiClient, type ApiResponse, type TestServer } from "../helpers/server.ts";

const IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
const DESKTOP = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";
const CRAWLER = "Twitterbot/1.0";
const PASSWORD = "webhook-link-password";
const PAYLOAD_KEYS = ["browser", "country", "destination", "device", "domain", "event", "referrer", "shortUrl", "slug", "target", "timestamp"];

interface Delivery {
  path: string;
  method: string;
  headers: Headers;
  body: string;
  at: number;
  /** When the sender gave up on the request (for /hang), else null. */
  abortedAt: number | null;
}

let receiver: Server<unknown>;
let hookBase: string;
let hookPort: number;
const deliveries: Delivery[] = [];
let server: TestServer;
let key: string;
let owner: ApiClient;

beforeAll(async () => {
  receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 30,
    async fetch(req) {
      const url = new URL(req.url);
      const d: Delivery = { path: url.pathname, method: req.method, headers: req.headers, body: await req.text(), at: Date.now(), abortedAt: null };
      deliveries.push(d);
      if (url.pathname === "/redirect") return new Response(null, { status: 302, headers: { location: "/landed" } });
      if (url.pathname.startsWith("/hang")) {
        await new Promise<void>((resolve) => req.signal.addEventListener("abort", () => resolve(), { once: true }));
        d.abortedAt = Date.now();
        return new Response(null, { status: 204 });
      }
      return new Response(null, { status: 204 });
    },
  });
  hookPort = receiver.port ?? 0;
  hookBase = `http://127.0.0.1:${hookPort}`;
  server = await startServer({
    env: { WEBHOOK_ALLOW_PRIVATE: "true", COUNTRY_HEADER: "CF-IPCountry", TRUSTED_PROXIES: "127.0.0.1", RATE_LIMIT_PER_MINUTE: "100000" },
  });
  key = await createKey(server, "hooks@example.com");
  owner = api(server, key);
});
afterAll(async () => {
  await server?.stop();
  receiver?.stop(true);
});

let slugSeq = 0;
async function createLink(body: Record<string, unknown>): Promise<{ slug: string; shortUrl: string; webhookSecret: string }> {
  const res = await owner.post("/api/v1/links", { slug: `wh-${++slugSeq}-${Date.now().toString(36)}`, ...body });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

function visit(slug: string, headers: Record<string, string> = {}, method = "GET"): Promise<ApiResponse> {
  return api(server).raw(`/${slug}`, { method, headers: { "user-agent": DESKTOP, ...headers } });
}

/** Deliveries to one receiver path (each test uses its own path, so tests never see each other's webhooks). */
const at = (path: string) => deliveries.filter((d) => d.path === path);

/** Waits until `path` has received `n` deliveries, then a little longer so that extra ones would show. */
async function received(path: string, n: number, settleMs = 300): Promise<Delivery[]> {
  for (let i = 0; i < 200 && at(path).length < n; i++) await Bun.sleep(25);
  await Bun.sleep(settleMs);
  return at(path);
}

describe("payload and signature", () => {
  test("a counted click POSTs exactly the §4 payload, signed with the link's webhookSecret", async () => {
    const link = await createLink({
      url: "https://example.com/land",
      utmSource: "hook",
      rules: [{ kind: "country", match: "DE", url: "https://de.example.com/" }],
      webhookUrl: `${hookBase}/signed`,
    });
    expect(link.webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const before = Math.floor(Date.now() / 1000);
    const res = await visit(link.slug, { "user-agent": IPHONE, "cf-ipcountry": "de", referer: "https://news.example.org/post", "x-forwarded-for": "8.8.8.8" });
    expect(res.status).toBe(302);

    const [d, ...extra] = await received("/signed", 1);
    expect(extra).toHaveLength(0);
    expect(d.method).toBe("POST");
    expect(d.headers.get("content-type")).toBe("application/json");
    expect(d.headers.get("webhook-id")).toMatch(/^msg_/);
    const ts = Number(d.headers.get("webhook-timestamp"));
    expect(ts).toBeGreaterThanOrEqual(before - 1);
    expect(ts).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 1);
    expect(d.headers.get("webhook-signature")).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(verifyWebhook(link.webhookSecret, d.headers, d.body)).toBe(true);
    // The check really depends on the secret and the body.
    const other = await createLink({ url: "https://example.com/x", webhookUrl: `${hookBase}/unused` });
    expect(verifyWebhook(other.webhookSecret, d.headers, d.body)).toBe(false);
    expect(verifyWebhook(link.webhookSecret, d.headers, d.body.replace("link.clicked", "link.clickeD"))).toBe(false);

    const payload = JSON.parse(d.body);
    expect(Object.keys(payload).sort()).toEqual(PAYLOAD_KEYS);
    expect(payload).toEqual({
      event: "link.clicked",
      slug: link.slug,
      domain: new URL(link.shortUrl).host,
      shortUrl: link.shortUrl,
      target: "https://example.com/land",
      destination: "https://de.example.com/?utm_source=hook",
      timestamp: expect.any(String),
      country: "DE",
      device: "mobile",
      browser: "Safari",
      referrer: "https://news.example.org/post",
    });
    expect(new Date(payload.timestamp).toISOString()).toBe(payload.timestamp);
    expect(Math.abs(Date.parse(payload.timestamp) - ts * 1000)).toBeLessThan(5_000);
    // No raw IP address (but the short address's and its domain's: BASE_URL is 127.0.0.1 here), no password, no API key, no secret.
    expect(d.body.replace(payload.shortUrl, "").replace(`"${payload.domain}"`, "")).not.toMatch(/\b\d{1,3}(?:\.\d{1,3}){3}\b/);
    expect(d.body).not.toContain(key);
    expect(d.body).not.toContain(link.webhookSecret);
    let headerText = "";
    d.headers.forEach((value, name) => (headerText += `${name}: ${value}\n`));
    expect(headerText).not.toContain("8.8.8.8");
    expect(headerText).not.toContain(key);
    expect(headerText).not.toContain(link.webhookSecret);
  });

  test("country from GeoIP when there is no header; unknown values are null", async () => {
    const lookup = await openCountryLookup();
    const link = await createLink({ url: "https://example.com/geo", webhookUrl: `${hookBase}/geo` });
    await visit(link.slug, { "x-forwarded-for": "81.169.145.1" });
    await visit(link.slug, { "user-agent": "" });
    const got = (await received("/geo", 2)).map((d) => JSON.parse(d.body));
    expect(got).toHaveLength(2);
    const withIp = got.find((p) => p.device === "desktop")!;
    expect(withIp.country).toBe(lookup("81.169.145.1"));
    expect(withIp.destination).toBe("https://example.com/geo");
    expect(withIp.referrer).toBeNull();
    const bare = got.find((p) => p !== withIp)!;
    expect(bare.country).toBeNull(); // 127.0.0.1 has no country
    expect(bare.referrer).toBeNull();
  });
});

describe("which requests send a webhook", () => {
  test("one per counted click, each with its own id; HEAD and crawler previews send none", async () => {
    const link = await createLink({ url: "https://example.com/og", serveOg: true, ogTitle: "Card", webhookUrl: `${hookBase}/counted` });
    await visit(link.slug, {}, "HEAD");
    await visit(link.slug, { "user-agent": CRAWLER }, "HEAD");
    expect((await visit(link.slug, { "user-agent": CRAWLER })).status).toBe(200);
    expect((await visit(link.slug, { "user-agent": CRAWLER })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await visit(link.slug)).status).toBe(302);
    const got = await received("/counted", 3);
    expect(got).toHaveLength(3);
    expect(new Set(got.map((d) => d.headers.get("webhook-id"))).size).toBe(3);
    for (const d of got) expect(verifyWebhook(link.webhookSecret, d.headers, d.body)).toBe(true);
  });

  test("password link: locked views and guesses send nothing; the unlocked click does, without the password", async () => {
    const link = await createLink({ url: "https://example.com/locked", password: PASSWORD, webhookUrl: `${hookBase}/password` });
    expect((await visit(link.slug)).status).toBe(401);
    expect((await visit(link.slug, { "user-agent": CRAWLER })).status).toBe(401);
    const form = (password: string) =>
      api(server).raw(`/${link.slug}`, { method: "POST", headers: { "user-agent": DESKTOP }, body: new URLSearchParams({ password }) });
    expect((await form("not-it")).status).toBe(401);
    expect((await form(PASSWORD)).status).toBe(302);
    const got = await received("/password", 1);
    expect(got).toHaveLength(1);
    expect(got[0].body).not.toContain(PASSWORD);
    expect(got[0].body).not.toContain("argon2");
    expect(JSON.parse(got[0].body).destination).toBe("https://example.com/locked");
  });

  test("clicks refused by maxHits send nothing", async () => {
    const link = await createLink({ url: "https://example.com/limited", maxHits: 2, webhookUrl: `${hookBase}/limited` });
    const statuses = await Promise.all(Array.from({ length: 6 }, () => visit(link.slug).then((r) => r.status)));
    expect(statuses.sort()).toEqual([302, 302, 410, 410, 410, 410]);
    expect(await received("/limited", 2)).toHaveLength(2);
  });
});

describe("delivery", () => {
  test("off the hot path: a receiver that never answers does not slow the redirect, and is dropped after 5 s", async () => {
    const link = await createLink({ url: "https://example.com/slow", webhookUrl: `${hookBase}/hang` });
    const started = performance.now();
    const res = await visit(link.slug);
    expect(res.status).toBe(302);
    // Had the redirect waited for the receiver, it would have taken the sender's 5 s timeout: half that is the bound,
    // so a loaded machine's slow answer is not mistaken for it.
    expect(performance.now() - started).toBeLessThan(2_500);
    const [d] = await received("/hang", 1, 0);
    for (let i = 0; i < 80 && d.abortedAt === null; i++) await Bun.sleep(100);
    expect(d.abortedAt).not.toBeNull();
    const waited = d.abortedAt! - d.at;
    expect(waited).toBeGreaterThan(4_000);
    expect(waited).toBeLessThan(6_500);
  }, 15_000);

  test("40 clicks for account A whose endpoint never answers do not delay account B's webhook", async () => {
    const [a, b] = await Promise.all(["burst-a@example.com", "burst-b@example.com"].map(async (email) => api(server, await createKey(server, email))));
    const slug = (who: string) => `fair-${who}-${Date.now().toString(36)}`;
    const linkA = (await a.post("/api/v1/links", { slug: slug("a"), url: "https://example.com/a", webhookUrl: `${hookBase}/hang-a` })).body;
    const linkB = (await b.post("/api/v1/links", { slug: slug("b"), url: "https://example.com/b", webhookUrl: `${hookBase}/fair-b` })).body;
    const statuses = await Promise.all(Array.from({ length: 40 }, () => visit(linkA.slug).then((r) => r.status)));
    expect(statuses).toEqual(Array(40).fill(302));
    expect((await visit(linkB.slug)).status).toBe(302);

    // One shared queue (8 in flight, 5 s timeout) sent B's only after rounds of A's: 25 s for 40 clicks.
    const [forB] = await received("/fair-b", 1, 0);
    expect(forB).toBeDefined();
    const heldForA = at("/hang-a");
    // When B's arrived, A's first deliveries were still held (none given up on yet) and A had only its share.
    expect(heldForA.filter((d) => d.abortedAt !== null && d.abortedAt < forB.at)).toHaveLength(0);
    expect(heldForA.filter((d) => d.at <= forB.at).length).toBeLessThanOrEqual(2);
  }, 30_000);

  test("a redirect answer is not followed", async () => {
    const link = await createLink({ url: "https://example.com/r", webhookUrl: `${hookBase}/redirect` });
    await visit(link.slug);
    expect(await received("/redirect", 1)).toHaveLength(1);
    await Bun.sleep(200);
    expect(at("/landed")).toHaveLength(0);
  });
});

describe("SSRF guard", () => {
  const refused = (port: number) => [
    `http://127.0.0.1:${port}/hook`,
    "http://169.254.169.254/latest/meta-data/",
    "http://[::ffff:127.0.0.1]/",
    `http://[::ffff:7f00:1]:${port}/`,
    `http://localhost:${port}/`,
    "http://10.0.0.5/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    `http://[::1]:${port}/`,
    "http://[fe80::1]/",
    "http://0x7f.1/",
    "http://2130706433/",
    "http://0.0.0.0/",
  ];

  function expectRefused(res: ApiResponse) {
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.body.code).toBe("invalid_input");
    expect(res.body.errors).toEqual([{ path: "/webhookUrl", message: expect.any(String) }]);
  }

  test("metadata addresses are refused even with WEBHOOK_ALLOW_PRIVATE=true", async () => {
    for (const url of ["http://169.254.169.254/", "http://[::ffff:169.254.169.254]/", "http://100.100.100.200/"]) {
      expectRefused(await owner.post("/api/v1/links", { url: "https://example.com/", webhookUrl: url }));
    }
  });

  describe("with WEBHOOK_ALLOW_PRIVATE unset", () => {
    let existing: { slug: string; webhookSecret: string };

    beforeAll(async () => {
      existing = await createLink({ url: "https://example.com/before", webhookUrl: `${hookBase}/send-time` });
      // Delivered while allowed, so the later silence is the send-time check and nothing else.
      await visit(existing.slug);
      expect(await received("/send-time", 1)).toHaveLength(1);
      await server.restart({ WEBHOOK_ALLOW_PRIVATE: "" });
    });

    test("creating a link with a private, loopback, link-local or metadata webhookUrl → 400 invalid_input, nothing created", async () => {
      for (const [i, url] of refused(hookPort).entries()) {
        const slug = `ssrf-create-${i}`;
        expectRefused(await owner.post("/api/v1/links", { url: "https://example.com/", slug, webhookUrl: url }));
        expect((await owner.get(`/api/v1/links/${slug}`)).status).toBe(404);
      }
    });

    test("PATCHing one in → 400 invalid_input, the link unchanged", async () => {
      const link = await createLink({ url: "https://example.com/patch" });
      for (const url of refused(hookPort)) expectRefused(await owner.patch(`/api/v1/links/${link.slug}`, { webhookUrl: url }));
      expect((await owner.get(`/api/v1/links/${link.slug}`)).body).toMatchObject({ webhookUrl: null, webhookSecret: null });
    });

    test("a public address is accepted", async () => {
      const res = await owner.post("/api/v1/links", { url: "https://example.com/", webhookUrl: "https://8.8.8.8/hooks/clicks" });
      expect(res.status).toBe(201);
      expect(res.body.webhookSecret).toMatch(/^whsec_/);
    });

    test("a link stored while loopback was allowed is refused at send time: the click works, no new request arrives", async () => {
      const res = await visit(existing.slug);
      expect(res.status).toBe(302);
      await Bun.sleep(700);
      expect(at("/send-time")).toHaveLength(1);
    });
  });
});

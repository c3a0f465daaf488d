/**
 * Webhook sender against real local receivers (design §4, §8): signed POSTs that verify, SSRF refusal, no redirects
 * followed, timeout, bounded concurrency and queue, and delivery to the checked address (DNS pinning) over http and
 * https.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { DEFAULT_HEALTH_POLICY } from "../../shared/webhooks/endpoint-health.ts";
import { createWebhookSender, type WebhookJob, type WebhookPause, type WebhookResult, type WebhookSenderOptions } from "../../shared/webhooks/sender.ts";
import { generateWebhookSecret, verifyWebhook } from "../../shared/webhooks/sign.ts";

// Test-only self-signed certificate for "hooks.test" (valid 2020–2120); its key protects nothing.
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBVzCB/qADAgECAhQ/iBuso+eaxEDMmiMt7uIibT2fbDAKBggqhkjOPQQDAjAV
MRMwEQYDVQQDDApob29rcy50ZXN0MCAXDTIwMDEwMTAwMDAwMFoYDzIxMjAwMTAx
MDAwMDAwWjAVMRMwEQYDVQQDDApob29rcy50ZXN0MFkwEwYHKoZIzj0CAQYIKoZI
zj0DAQcDQgAElJoPcXLTJ1O2mwO867nvf5w7uKBg/NQtsy1kkMvEYAjhRQWosDdO
v0Fwpbwe7YTjyOrLpCCuDQUGQEuSoSoOtaMqMCgwFQYDVR0RBA4wDIIKaG9va3Mu
dGVzdDAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCICLe50kg3Gmg
/vaScwBIrscfXUFrD6EAVrF98+qE/AT2AiEA6Rt0Theyvr/pSj8OtY6HjWJWHDQi
9iEcWB+uATbQki4=
-----END CERTIFICATE-----
`;
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgMKGO5eGG9zQnFMZw
3AxQHrx58KhPe2aqdIodMq+5LFOhRANCAASUmg9xctMnU7abA7zrue9/nDu4oGD8
1C2zLWSQy8RgCOFFBaiwN06/QXClvB7thOPI6sukIK4NBQZAS5KhKg61
-----END PRIVATE KEY-----
`;

interface Received {
  path: string;
  host: string | null;
  headers: Headers;
  body: string;
  /** performance.now() when the request arrived. */
  at: number;
  /** For /hold: when the sender gave up on the request, else null. */
  abortedAt: number | null;
}

/** A receiver on 127.0.0.1 whose paths behave differently; it records what it got and the peak concurrency. */
function startReceiver(tls?: { cert: string; key: string }) {
  const received: Received[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let releaseHung: () => void = () => {};
  const hung = new Promise<void>((r) => (releaseHung = r));
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls,
    async fetch(req) {
      const url = new URL(req.url);
      const got: Received = { path: url.pathname, host: req.headers.get("host"), headers: req.headers, body: await req.text(), at: performance.now(), abortedAt: null };
      received.push(got);
      switch (url.pathname) {
        case "/ok":
          return new Response(null, { status: 204 });
        case "/error":
          return new Response("nope", { status: 500 });
        case "/redirect":
          return new Response(null, { status: 302, headers: { location: "/landed" } });
        case "/hang":
          await hung;
          return new Response("too late");
        case "/hold": // never answers; notes when the sender gives up
          await new Promise<void>((r) => req.signal.addEventListener("abort", () => r(), { once: true }));
          got.abortedAt = performance.now();
          return new Response("too late");
        case "/slow":
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await Bun.sleep(100);
          inFlight--;
          return new Response("ok");
        default:
          return new Response("landed");
      }
    },
  });
  return {
    server,
    received,
    peak: () => maxInFlight,
    resetPeak: () => void (maxInFlight = 0),
    stop() {
      releaseHung();
      server.stop(true);
    },
  };
}

/** Every name used here resolves to the receiver's loopback address, so the test never touches public DNS. */
const resolve = async (host: string) => {
  if (host === "hooks.test") return ["127.0.0.1"];
  throw new Error(`ENOTFOUND ${host}`);
};

function sender(opts: Partial<WebhookSenderOptions> = {}) {
  const results: WebhookResult[] = [];
  const s = createWebhookSender({ allowPrivate: true, resolve, onResult: (r) => results.push(r), ...opts });
  return { s, results };
}

const secret = generateWebhookSecret();
const payload = { event: "link.clicked", slug: "abc", target: "https://example.com/", country: "US", device: "mobile" };

/** A delivery to `url`, for one account's link (the same link for the same url unless given). */
const job = (url: string, o: Partial<WebhookJob> = {}): WebhookJob => ({ url, secret, payload, accountId: "acct-1", linkId: `link:${url}`, linkVersion: 1, ...o });

describe("webhook sender", () => {
  let rx: ReturnType<typeof startReceiver>;
  let base: string;
  beforeAll(() => {
    rx = startReceiver();
    base = `http://hooks.test:${rx.server.port}`;
  });
  afterAll(() => rx.stop());

  test("delivers a signed POST that verifies, to the checked address with the original Host", async () => {
    const { s, results } = sender();
    rx.received.length = 0;
    s.send(job(`${base}/ok?via=test`, { id: "click_123" }));
    expect(s.pending()).toBe(1);
    await s.drain();
    expect(results).toEqual(["delivered"]);
    expect(s.pending()).toBe(0);

    const [got] = rx.received;
    expect(got.path).toBe("/ok");
    // "hooks.test" exists only in our resolver: reaching the receiver proves the request went to the checked IP.
    expect(got.host).toBe(`hooks.test:${rx.server.port}`);
    expect(got.headers.get("content-type")).toBe("application/json");
    expect(got.headers.get("webhook-id")).toBe("click_123");
    expect(got.headers.get("webhook-timestamp")).toMatch(/^\d{10}$/);
    expect(got.headers.get("webhook-signature")).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(JSON.parse(got.body)).toEqual(payload);
    expect(verifyWebhook(secret, got.headers, got.body)).toBe(true);
    expect(verifyWebhook(generateWebhookSecret(), got.headers, got.body)).toBe(false);
  });

  test("each message gets its own webhook-id by default", async () => {
    const { s } = sender();
    rx.received.length = 0;
    s.send(job(`${base}/ok`));
    s.send(job(`${base}/ok`));
    await s.drain();
    const ids = rx.received.map((r) => r.headers.get("webhook-id"));
    expect(ids[0]).toMatch(/^msg_/);
    expect(ids[0]).not.toBe(ids[1]);
  });

  test("the system resolver works too (localhost, private allowed)", async () => {
    const { s, results } = sender({ resolve: undefined });
    s.send(job(`http://localhost:${rx.server.port}/ok`));
    await s.drain();
    expect(results).toEqual(["delivered"]);
  });

  test("a loopback target is refused when private targets are not allowed, and nothing is sent", async () => {
    const { s, results } = sender({ allowPrivate: false });
    rx.received.length = 0;
    s.send(job(`${base}/ok`));
    s.send(job(`http://127.0.0.1:${rx.server.port}/ok`));
    s.send(job(`http://[::ffff:7f00:1]:${rx.server.port}/ok`));
    await s.drain();
    expect(results).toEqual(["refused", "refused", "refused"]);
    expect(rx.received).toHaveLength(0);
  });

  test("a 302 answer is not followed and counts as failed", async () => {
    const { s, results } = sender();
    rx.received.length = 0;
    s.send(job(`${base}/redirect`));
    await s.drain();
    expect(results).toEqual(["failed"]);
    expect(rx.received.map((r) => r.path)).toEqual(["/redirect"]);
  });

  test("a non-2xx answer counts as failed", async () => {
    const { s, results } = sender();
    s.send(job(`${base}/error`));
    await s.drain();
    expect(results).toEqual(["failed"]);
  });

  test("a receiver that hangs is abandoned at the timeout", async () => {
    const { s, results } = sender({ timeoutMs: 300 });
    const t0 = performance.now();
    s.send(job(`${base}/hang`));
    await s.drain();
    const elapsed = performance.now() - t0;
    expect(results).toEqual(["failed"]);
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(2000);
  });

  test("a resolver that hangs is abandoned at the timeout too", async () => {
    const { s, results } = sender({ timeoutMs: 300, resolve: () => new Promise(() => {}) });
    s.send(job("http://slow-dns.test/hook"));
    await s.drain();
    expect(results).toEqual(["failed"]);
  });

  test("no more than `concurrency` deliveries are in flight at once", async () => {
    const { s, results } = sender({ concurrency: 3 });
    rx.resetPeak();
    const t0 = performance.now();
    // Six accounts, so neither the per-account cap (2) nor the per-host one (4) is what binds.
    for (let i = 0; i < 12; i++) s.send(job(`${base}/slow`, { accountId: `acct-${i % 6}` }));
    expect(s.pending()).toBe(12);
    await s.drain();
    expect(results).toEqual(Array(12).fill("delivered"));
    expect(rx.peak()).toBe(3);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(350); // 4 waves of 100 ms
  });

  test("beyond maxQueue waiting deliveries, the oldest waiting are dropped", async () => {
    const { s, results } = sender({ concurrency: 1, maxQueue: 2 });
    rx.received.length = 0;
    for (let i = 0; i < 5; i++) s.send(job(`${base}/ok`, { id: `msg_${i}` }));
    expect(results).toEqual(["dropped", "dropped", "dropped"]);
    await s.drain();
    expect(results).toEqual(["dropped", "dropped", "dropped", "delivered", "delivered"]);
    expect(rx.received.map((r) => r.headers.get("webhook-id"))).toEqual(["msg_3", "msg_4"]);
  });

  test("an account over its own queue bound loses its oldest waiting, and only it", async () => {
    const { s, results } = sender({ concurrency: 1, maxQueuePerAccount: 2 });
    rx.received.length = 0;
    for (let i = 0; i < 5; i++) s.send(job(`${base}/ok`, { id: `a_${i}`, accountId: "acct-a" }));
    s.send(job(`${base}/ok`, { id: "b_0", accountId: "acct-b" }));
    await s.drain();
    expect(results.filter((r) => r === "dropped")).toHaveLength(3);
    expect(rx.received.map((r) => r.headers.get("webhook-id")).sort()).toEqual(["a_3", "a_4", "b_0"]);
  });

  test("accounts take turns: with one slot, A's backlog and B's deliveries alternate", async () => {
    const { s } = sender({ concurrency: 1 });
    rx.received.length = 0;
    for (let i = 0; i < 4; i++) s.send(job(`${base}/ok`, { id: `a_${i}`, accountId: "acct-a" }));
    for (let i = 0; i < 2; i++) s.send(job(`${base}/ok`, { id: `b_${i}`, accountId: "acct-b" }));
    await s.drain();
    expect(rx.received.map((r) => r.headers.get("webhook-id"))).toEqual(["a_0", "b_0", "a_1", "b_1", "a_2", "a_3"]);
  });

  test("at most `perAccount` of one account's deliveries are in flight, and `perHost` to one host", async () => {
    const one = sender({ concurrency: 8 });
    rx.resetPeak();
    for (let i = 0; i < 6; i++) one.s.send(job(`${base}/slow`, { accountId: "acct-a" }));
    await one.s.drain();
    expect(rx.peak()).toBe(2);

    // Twelve accounts, one host: the host's cap binds before the global one.
    const many = sender({ concurrency: 8 });
    rx.resetPeak();
    for (let i = 0; i < 12; i++) many.s.send(job(`${base}/slow`, { accountId: `acct-${i}` }));
    await many.s.drain();
    expect(rx.peak()).toBe(4);
    expect([...one.results, ...many.results]).toEqual(Array(18).fill("delivered"));
  });

  test("send() never throws: bad URL, unserialisable payload, throwing onResult", async () => {
    const { s, results } = sender();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => s.send(job("not a url"))).not.toThrow();
    expect(() => s.send(job(`${base}/ok`, { payload: cyclic }))).not.toThrow();
    expect(() => s.send(job("ftp://hooks.test/x"))).not.toThrow();
    await s.drain();
    expect(results.sort()).toEqual(["failed", "refused", "refused"]);

    const throwing = createWebhookSender({ allowPrivate: true, resolve, onResult: () => { throw new Error("boom"); } });
    throwing.send(job(`${base}/ok`));
    await throwing.drain();
    expect(throwing.pending()).toBe(0);
  });

  test.each([40, 200])("%i deliveries to account A's endpoint that never answers, then one for B: B's arrives before any of A's is given up on", async (burst) => {
    const { s, results } = sender({ timeoutMs: 1_500 });
    const start = rx.received.length;
    for (let i = 0; i < burst; i++) s.send(job(`${base}/hold`, { accountId: "acct-a", linkId: "link-a" }));
    s.send(job(`${base}/ok?for=b`, { accountId: "acct-b", linkId: "link-b" }));
    const mine = () => rx.received.slice(start);
    const arrivedForB = () => mine().find((r) => r.path === "/ok");
    // One shared queue started B's only after A's backlog ahead of it: several rounds of the timeout.
    for (let i = 0; i < 400 && !arrivedForB(); i++) await Bun.sleep(25);
    const b = arrivedForB();
    expect(b).toBeDefined();
    const givenUpBeforeB = mine().filter((r) => r.path === "/hold" && r.abortedAt !== null && r.abortedAt < b!.at);
    expect(givenUpBeforeB).toHaveLength(0);
    await s.drain();
    // A held two slots (its cap); once they timed out, its link backed off and the rest of its backlog was dropped.
    expect(mine().filter((r) => r.path === "/hold")).toHaveLength(2);
    const count = (r: WebhookResult) => results.filter((x) => x === r).length;
    expect([count("delivered"), count("failed"), count("backed_off")]).toEqual([1, 2, burst - 2]);
  }, 60_000);

  test("drain() on an idle sender resolves at once", async () => {
    const { s } = sender();
    await s.drain();
    expect(s.pending()).toBe(0);
  });
});

describe("backoff and pause of a failing endpoint, on a test clock", () => {
  let rx: ReturnType<typeof startReceiver>;
  let base: string;
  let t: number;
  const now = () => t;
  beforeAll(() => {
    rx = startReceiver();
    base = `http://hooks.test:${rx.server.port}`;
  });
  beforeEach(() => {
    t = 0;
    rx.received.length = 0;
  });
  afterAll(() => rx.stop());

  test("consecutive failures back the link off, doubling; its deliveries meanwhile are dropped as backed_off, other links go", async () => {
    const { s, results } = sender({ now });
    for (const at of [0, 500, 999, 1_000, 2_999, 3_000]) {
      t = at;
      s.send(job(`${base}/error`));
      await s.drain();
    }
    expect(results).toEqual(["failed", "backed_off", "backed_off", "failed", "backed_off", "failed"]);
    expect(rx.received).toHaveLength(3);
    s.send(job(`${base}/ok`)); // another link of the same account
    await s.drain();
    expect(results.at(-1)).toBe("delivered");
  });

  test("an endpoint failing 20 times over 10 minutes is paused once, reported with its URL and reason; a newer link version is sent again", async () => {
    const pauses: WebhookPause[] = [];
    const { s, results } = sender({ now, onPause: (p) => void pauses.push(p) });
    for (let i = 0; i < 25; i++, t += 60_000) {
      s.send(job(`${base}/error`, { linkId: "l-err" }));
      await s.drain();
    }
    expect(rx.received).toHaveLength(20);
    expect(results.slice(19)).toEqual(["failed", "backed_off", "backed_off", "backed_off", "backed_off", "backed_off"]);
    const reason = "20 deliveries in a row failed over 19 minutes; the last: answered HTTP 500. Set the webhook URL again to resume.";
    expect(pauses).toEqual([{ linkId: "l-err", url: `${base}/error`, reason, at: 19 * 60_000 }]);

    s.send(job(`${base}/error`, { linkId: "l-err", linkVersion: 2 }));
    await s.drain();
    expect(rx.received).toHaveLength(21);
  });

  test("the reason names what failed: no answer in time, or the SSRF guard's refusal", async () => {
    const pauses: WebhookPause[] = [];
    const health = { ...DEFAULT_HEALTH_POLICY, pauseAfterFailures: 1, pauseAfterMs: 0 };
    const onPause = (p: WebhookPause) => void pauses.push(p);
    const hanging = sender({ now, health, onPause, timeoutMs: 200 });
    hanging.s.send(job(`${base}/hold`));
    await hanging.s.drain();
    const guarded = sender({ now, health, onPause, allowPrivate: false });
    guarded.s.send(job(`${base}/ok`));
    await guarded.s.drain();
    expect(pauses.map((p) => p.reason.split("; the last: ")[1])).toEqual([
      "no answer within 0.2 s. Set the webhook URL again to resume.",
      expect.stringMatching(/^refused: .*hooks\.test.*\. Set the webhook URL again to resume\.$/),
    ]);
  });

  test("an onPause that throws or rejects changes nothing: the link stays paused here", async () => {
    const health = { ...DEFAULT_HEALTH_POLICY, pauseAfterFailures: 1, pauseAfterMs: 0 };
    for (const onPause of [() => { throw new Error("store down"); }, () => Promise.reject(new Error("store down"))]) {
      const { s, results } = sender({ now, health, onPause });
      s.send(job(`${base}/error`));
      await s.drain();
      t += 3_600_000;
      s.send(job(`${base}/error`));
      await s.drain();
      expect(results).toEqual(["failed", "backed_off"]);
    }
  });
});

describe("webhook sender over https", () => {
  let rx: ReturnType<typeof startReceiver>;
  beforeAll(() => {
    rx = startReceiver({ cert: TEST_CERT, key: TEST_KEY });
  });
  afterAll(() => rx.stop());

  test("pins the checked address while TLS still verifies the certificate against the host name", async () => {
    const { s, results } = sender({ tlsCa: TEST_CERT });
    s.send(job(`https://hooks.test:${rx.server.port}/ok`));
    await s.drain();
    expect(results).toEqual(["delivered"]);
    const [got] = rx.received;
    expect(got.host).toBe(`hooks.test:${rx.server.port}`);
    expect(verifyWebhook(secret, got.headers, got.body)).toBe(true);
  });

  test("a certificate that does not match the name fails (no silent downgrade to the IP)", async () => {
    const { s, results } = sender({ tlsCa: TEST_CERT });
    rx.received.length = 0;
    s.send(job(`https://127.0.0.1:${rx.server.port}/ok`));
    await s.drain();
    expect(results).toEqual(["failed"]);
    expect(rx.received).toHaveLength(0);
  });

  test("an untrusted certificate fails", async () => {
    const { s, results } = sender();
    s.send(job(`https://hooks.test:${rx.server.port}/ok`));
    await s.drain();
    expect(results).toEqual(["failed"]);
  });
});

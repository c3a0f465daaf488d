/**
 * Webhook sender against real local receivers (design §4, §8): signed POSTs that verify, SSRF refusal, no redirects
 * followed, timeout, bounded concurrency and queue, and delivery to the checked address (DNS pinning) over http and
 * https.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWebhookSender, type WebhookResult, type WebhookSenderOptions } from "../../shared/webhooks/sender.ts";
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
      received.push({ path: url.pathname, host: req.headers.get("host"), headers: req.headers, body: await req.text() });
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
    s.send({ url: `${base}/ok?via=test`, secret, payload, id: "click_123" });
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
    s.send({ url: `${base}/ok`, secret, payload });
    s.send({ url: `${base}/ok`, secret, payload });
    await s.drain();
    const ids = rx.received.map((r) => r.headers.get("webhook-id"));
    expect(ids[0]).toMatch(/^msg_/);
    expect(ids[0]).not.toBe(ids[1]);
  });

  test("the system resolver works too (localhost, private allowed)", async () => {
    const { s, results } = sender({ resolve: undefined });
    s.send({ url: `http://localhost:${rx.server.port}/ok`, secret, payload });
    await s.drain();
    expect(results).toEqual(["delivered"]);
  });

  test("a loopback target is refused when private targets are not allowed, and nothing is sent", async () => {
    const { s, results } = sender({ allowPrivate: false });
    rx.received.length = 0;
    s.send({ url: `${base}/ok`, secret, payload });
    s.send({ url: `http://127.0.0.1:${rx.server.port}/ok`, secret, payload });
    s.send({ url: `http://[::ffff:7f00:1]:${rx.server.port}/ok`, secret, payload });
    await s.drain();
    expect(results).toEqual(["refused", "refused", "refused"]);
    expect(rx.received).toHaveLength(0);
  });

  test("a 302 answer is not followed and counts as failed", async () => {
    const { s, results } = sender();
    rx.received.length = 0;
    s.send({ url: `${base}/redirect`, secret, payload });
    await s.drain();
    expect(results).toEqual(["failed"]);
    expect(rx.received.map((r) => r.path)).toEqual(["/redirect"]);
  });

  test("a non-2xx answer counts as failed", async () => {
    const { s, results } = sender();
    s.send({ url: `${base}/error`, secret, payload });
    await s.drain();
    expect(results).toEqual(["failed"]);
  });

  test("a receiver that hangs is abandoned at the timeout", async () => {
    const { s, results } = sender({ timeoutMs: 300 });
    const t0 = performance.now();
    s.send({ url: `${base}/hang`, secret, payload });
    await s.drain();
    const elapsed = performance.now() - t0;
    expect(results).toEqual(["failed"]);
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(2000);
  });

  test("a resolver that hangs is abandoned at the timeout too", async () => {
    const { s, results } = sender({ timeoutMs: 300, resolve: () => new Promise(() => {}) });
    s.send({ url: "http://slow-dns.test/hook", secret, payload });
    await s.drain();
    expect(results).toEqual(["failed"]);
  });

  test("no more than `concurrency` deliveries are in flight at once", async () => {
    const { s, results } = sender({ concurrency: 3 });
    const t0 = performance.now();
    for (let i = 0; i < 12; i++) s.send({ url: `${base}/slow`, secret, payload });
    expect(s.pending()).toBe(12);
    await s.drain();
    expect(results).toEqual(Array(12).fill("delivered"));
    expect(rx.peak()).toBe(3);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(350); // 4 waves of 100 ms
  });

  test("beyond maxQueue waiting deliveries, new ones are dropped at once", async () => {
    const { s, results } = sender({ concurrency: 1, maxQueue: 2 });
    for (let i = 0; i < 5; i++) s.send({ url: `${base}/ok`, secret, payload });
    expect(results).toEqual(["dropped", "dropped", "dropped"]);
    await s.drain();
    expect(results).toEqual(["dropped", "dropped", "dropped", "delivered", "delivered"]);
  });

  test("send() never throws: bad URL, unserialisable payload, throwing onResult", async () => {
    const { s, results } = sender();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => s.send({ url: "not a url", secret, payload })).not.toThrow();
    expect(() => s.send({ url: `${base}/ok`, secret, payload: cyclic })).not.toThrow();
    expect(() => s.send({ url: "ftp://hooks.test/x", secret, payload })).not.toThrow();
    await s.drain();
    expect(results.sort()).toEqual(["failed", "refused", "refused"]);

    const throwing = createWebhookSender({ allowPrivate: true, resolve, onResult: () => { throw new Error("boom"); } });
    throwing.send({ url: `${base}/ok`, secret, payload });
    await throwing.drain();
    expect(throwing.pending()).toBe(0);
  });

  test("drain() on an idle sender resolves at once", async () => {
    const { s } = sender();
    await s.drain();
    expect(s.pending()).toBe(0);
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
    s.send({ url: `https://hooks.test:${rx.server.port}/ok`, secret, payload });
    await s.drain();
    expect(results).toEqual(["delivered"]);
    const [got] = rx.received;
    expect(got.host).toBe(`hooks.test:${rx.server.port}`);
    expect(verifyWebhook(secret, got.headers, got.body)).toBe(true);
  });

  test("a certificate that does not match the name fails (no silent downgrade to the IP)", async () => {
    const { s, results } = sender({ tlsCa: TEST_CERT });
    rx.received.length = 0;
    s.send({ url: `https://127.0.0.1:${rx.server.port}/ok`, secret, payload });
    await s.drain();
    expect(results).toEqual(["failed"]);
    expect(rx.received).toHaveLength(0);
  });

  test("an untrusted certificate fails", async () => {
    const { s, results } = sender();
    s.send({ url: `https://hooks.test:${rx.server.port}/ok`, secret, payload });
    await s.drain();
    expect(results).toEqual(["failed"]);
  });
});

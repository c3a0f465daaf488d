/** Standard Webhooks signing (design §4), checked against the specification's published test vector. */
import { describe, expect, test } from "bun:test";
import { generateWebhookSecret, signWebhook, verifyWebhook } from "../../shared/webhooks/sign.ts";

// From the Standard Webhooks reference libraries' tests (standard-webhooks/standard-webhooks,
// libraries/javascript/src/webhook.test.ts, "sign function works"). Reproducing it proves receivers using any
// Standard Webhooks or Svix library accept our signatures; a round trip through our own verifier would not.
const VECTOR = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};

const headersOf = (id: string, timestamp: number | string, signature: string) => ({
  "webhook-id": id,
  "webhook-timestamp": String(timestamp),
  "webhook-signature": signature,
});

describe("signWebhook", () => {
  test("reproduces the Standard Webhooks test vector", () => {
    expect(signWebhook(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
  });

  test("the whsec_ prefix is optional, as in the reference libraries", () => {
    expect(signWebhook(VECTOR.secret.slice(6), VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
  });

  test("non-ASCII bodies are signed as UTF-8", () => {
    const body = JSON.stringify({ slug: "café", emoji: "🔗" });
    const sig = signWebhook(VECTOR.secret, "msg_1", 1700000000, body);
    expect(verifyWebhook(VECTOR.secret, headersOf("msg_1", 1700000000, sig), body, { nowSeconds: 1700000000 })).toBe(true);
  });

  test("an empty secret is refused", () => {
    expect(() => signWebhook("whsec_", "msg_1", 1, "{}")).toThrow(/empty/);
  });
});

describe("generateWebhookSecret", () => {
  test("is whsec_ + base64 of 24 random bytes, different every time", () => {
    const a = generateWebhookSecret();
    const b = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(a.slice(6), "base64").length).toBe(24);
    expect(a).not.toBe(b);
  });

  test("a generated secret signs and verifies", () => {
    const secret = generateWebhookSecret();
    const now = Math.floor(Date.now() / 1000);
    const sig = signWebhook(secret, "msg_x", now, "{}");
    expect(verifyWebhook(secret, headersOf("msg_x", now, sig), "{}")).toBe(true);
  });
});

describe("verifyWebhook", () => {
  const at = { nowSeconds: VECTOR.timestamp };
  const good = headersOf(VECTOR.id, VECTOR.timestamp, VECTOR.signature);

  test.each([
    ["the vector itself", good, VECTOR.body, at, true],
    ["Fetch Headers object", new Headers(good), VECTOR.body, at, true],
    ["header names in any case", { "Webhook-Id": VECTOR.id, "WEBHOOK-TIMESTAMP": String(VECTOR.timestamp), "Webhook-Signature": VECTOR.signature }, VECTOR.body, at, true],
    ["several signatures, one valid (key rotation)", { ...good, "webhook-signature": `v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= v2,abc ${VECTOR.signature}` }, VECTOR.body, at, true],
    ["within tolerance (4 min late)", good, VECTOR.body, { nowSeconds: VECTOR.timestamp + 240 }, true],
    ["tampered body", good, '{"test": 2432232315}', at, false],
    ["wrong id", { ...good, "webhook-id": "msg_other" }, VECTOR.body, at, false],
    ["timestamp changed", { ...good, "webhook-timestamp": String(VECTOR.timestamp + 1) }, VECTOR.body, { nowSeconds: VECTOR.timestamp + 1 }, false],
    ["too old", good, VECTOR.body, { nowSeconds: VECTOR.timestamp + 301 }, false],
    ["too new", good, VECTOR.body, { nowSeconds: VECTOR.timestamp - 301 }, false],
    ["non-numeric timestamp", { ...good, "webhook-timestamp": "hello" }, VECTOR.body, at, false],
    ["truncated signature", { ...good, "webhook-signature": VECTOR.signature.slice(0, 8) }, VECTOR.body, at, false],
    ["empty signature", { ...good, "webhook-signature": "v1," }, VECTOR.body, at, false],
    ["other version only", { ...good, "webhook-signature": VECTOR.signature.replace("v1,", "v2,") }, VECTOR.body, at, false],
    ["missing id", { "webhook-timestamp": good["webhook-timestamp"], "webhook-signature": good["webhook-signature"] }, VECTOR.body, at, false],
    ["missing signature", { "webhook-id": good["webhook-id"], "webhook-timestamp": good["webhook-timestamp"] }, VECTOR.body, at, false],
  ] as const)("%s → %p", (_what, headers, body, opts, expected) => {
    expect(verifyWebhook(VECTOR.secret, headers, body, opts)).toBe(expected);
  });

  test("a different secret does not verify", () => {
    expect(verifyWebhook(generateWebhookSecret(), good, VECTOR.body, at)).toBe(false);
  });

  test("an unusable secret is a failed verification, not an exception", () => {
    expect(verifyWebhook("whsec_", good, VECTOR.body, at)).toBe(false);
  });
});

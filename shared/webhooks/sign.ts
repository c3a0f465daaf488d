/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com, design §4): `webhook-signature` is
 * `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`, keyed by the base64-decoded part of a
 * `whsec_…` secret. Receivers can verify with any Standard Webhooks or Svix library.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

const PREFIX = "whsec_";
/** Verification tolerance of the reference libraries: 5 minutes either way. */
const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

/** A fresh link webhook secret: `whsec_` + base64 of 24 random bytes (192 bits). */
export function generateWebhookSecret(): string {
  return PREFIX + randomBytes(24).toString("base64");
}

/** The HMAC key of a secret: the base64 after `whsec_` (the prefix is optional, as in the reference libraries). */
function secretKey(secret: string): Buffer {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, "base64");
  if (key.length === 0) throw new Error("webhook secret is empty");
  return key;
}

function hmac(key: Buffer, id: string, timestampSeconds: number, body: string): string {
  return createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64");
}

/** The `webhook-signature` header value for one message. */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${hmac(secretKey(secret), id, timestampSeconds, body)}`;
}

/** Headers as a Fetch Headers or a plain object (any header-name case). */
export type WebhookHeaders = Headers | Record<string, string | undefined>;

function header(headers: WebhookHeaders, name: string): string | null {
  if (headers instanceof Headers) return headers.get(name);
  for (const k in headers) if (k.toLowerCase() === name) return headers[k] ?? null;
  return null;
}

/**
 * Verifies a received webhook the way receivers should: all three headers present, timestamp within
 * `toleranceSeconds` of `nowSeconds`, and one of the space-separated `v1,` signatures matching (constant time).
 * Reference code for users and a check for our own tests.
 */
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  body: string,
  opts: { nowSeconds?: number; toleranceSeconds?: number } = {},
): boolean {
  const id = header(headers, "webhook-id");
  const ts = header(headers, "webhook-timestamp");
  const sigs = header(headers, "webhook-signature");
  if (!id || !ts || !sigs || !/^\d{1,12}$/.test(ts)) return false;
  const timestamp = Number(ts);
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) return false;

  let key: Buffer;
  try {
    key = secretKey(secret);
  } catch {
    return false;
  }
  const expected = Buffer.from(hmac(key, id, timestamp, body));
  for (const versioned of sigs.split(" ")) {
    if (!versioned.startsWith("v1,")) continue;
    const given = Buffer.from(versioned.slice(3));
    if (given.length === expected.length && timingSafeEqual(given, expected)) return true;
  }
  return false;
}

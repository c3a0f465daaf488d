/**
 * A value shown once, across the POST-redirect-GET of the page that made it: a new API key (keys page), a webhook
 * endpoint's signing secret (webhooks page) or an invitation's link (members page). The hand-off names its kind and
 * each page takes only its own: a person who does not follow the redirect and opens another of these pages is not
 * shown an invitation link as a new key, and the value stays for its own page. The POST answers 303 and hands the
 * value to the GET that follows in a short-lived cookie, sealed (AES-256-GCM) under a key derived from the visitor's
 * session token, which the server never stores (the sessions table holds its hash); the GET opens it, shows the
 * key and clears the cookie. So the key is never in a URL, a page served twice, or the database (only its hash
 * is stored, design §6), and nothing lives in one control process's memory, so this works behind several.
 * A copy of the cookie replayed within its lifetime shows nothing: a one-time check per key id (a rate limit of
 * 1 on the shared hot state) lets only the first GET through.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { cookie, isSecureRequest } from "./http.ts";
import { SESSION_COOKIE, type SignedInCtx } from "./session.ts";

export const NEW_KEY_COOKIE = "clink_new_key";
/** Long enough for any redirect to be followed; the key is lost (revoke it, create another) if it is not. */
export const NEW_KEY_LIFETIME_MS = 5 * 60_000;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** What a hand-off carries, each shown by one page only. */
export const HAND_OFF_KINDS = ["apiKey", "webhookSecret", "invitation"] as const;
export type HandOffKind = (typeof HAND_OFF_KINDS)[number];
const isKind = (v: unknown): v is HandOffKind => (HAND_OFF_KINDS as readonly unknown[]).includes(v);

/** The value handed off: `key` is the secret shown once, `id` and `name` what the page says it belongs to. */
export interface NewKey {
  kind: HandOffKind;
  id: string;
  name: string;
  key: string;
}

/** The sealing key for this session: HKDF-SHA256 of its token. */
const sealingKey = (sessionToken: string) => Buffer.from(hkdfSync("sha256", sessionToken, "", "clink dashboard new API key", 32));

/** The cookie value carrying `created` until `expiresAt`, readable only with the same session token. */
export function sealNewKey(created: NewKey, sessionToken: string, expiresAt: number): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", sealingKey(sessionToken), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify({ ...created, exp: expiresAt }), "utf8"), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url");
}

/** The key sealed in `value`; null when it was sealed for another session, altered, malformed or is past `now`. */
export function openNewKey(value: string, sessionToken: string, now: number): NewKey | null {
  try {
    const raw = Buffer.from(value, "base64url");
    if (raw.length <= IV_BYTES + TAG_BYTES) return null;
    const decipher = createDecipheriv("aes-256-gcm", sealingKey(sessionToken), raw.subarray(0, IV_BYTES));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    const json = Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString("utf8");
    const v = JSON.parse(json) as Partial<NewKey & { exp: number }>;
    if (typeof v.exp !== "number" || v.exp <= now || !isKind(v.kind) || typeof v.id !== "string" || typeof v.name !== "string" || typeof v.key !== "string") return null;
    return { kind: v.kind, id: v.id, name: v.name, key: v.key };
  } catch {
    return null; // a wrong tag (other session, altered) throws in final()
  }
}

const secure = (ctx: SignedInCtx) => isSecureRequest(ctx.deps, ctx.request);

/** The Set-Cookie header handing `created` to the next page of this session (the one showing its kind). */
export function handOffCookie(ctx: SignedInCtx, created: NewKey): string {
  const value = sealNewKey(created, ctx.cookies.get(SESSION_COOKIE) ?? "", ctx.deps.now() + NEW_KEY_LIFETIME_MS);
  return cookie(NEW_KEY_COOKIE, value, NEW_KEY_LIFETIME_MS / 1000, secure(ctx));
}

/**
 * The value of `kind` handed to this page, the first time it is asked for, and the cookie to clear when it came
 * (or cannot be opened). A hand-off of another kind is left as it is, untaken, for its own page.
 */
export async function takeNewKey(ctx: SignedInCtx, kind: HandOffKind): Promise<{ created: NewKey | null; setCookie: string[] }> {
  const value = ctx.cookies.get(NEW_KEY_COOKIE);
  if (!value) return { created: null, setCookie: [] };
  const clear = [cookie(NEW_KEY_COOKIE, "", 0, secure(ctx))];
  const opened = openNewKey(value, ctx.cookies.get(SESSION_COOKIE) ?? "", ctx.deps.now());
  if (!opened) return { created: null, setCookie: clear };
  if (opened.kind !== kind) return { created: null, setCookie: [] };
  const first = await ctx.deps.hot.rateLimit(`dashboard-new-key:${opened.kind}:${opened.id}`, 1, NEW_KEY_LIFETIME_MS);
  return { created: first.allowed ? opened : null, setCookie: clear };
}

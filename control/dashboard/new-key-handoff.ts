/**
 * A new API key's one showing, across the POST-redirect-GET of the keys page. The POST answers 303 and hands the
 * key to the GET that follows in a short-lived cookie, sealed (AES-256-GCM) under a key derived from the visitor's
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

export interface NewKey {
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
    if (typeof v.exp !== "number" || v.exp <= now || typeof v.id !== "string" || typeof v.name !== "string" || typeof v.key !== "string") return null;
    return { id: v.id, name: v.name, key: v.key };
  } catch {
    return null; // a wrong tag (other session, altered) throws in final()
  }
}

const secure = (ctx: SignedInCtx) => isSecureRequest(ctx.deps, ctx.request);

/** The Set-Cookie header handing `created` to the next page of this session. */
export function handOffCookie(ctx: SignedInCtx, created: NewKey): string {
  const value = sealNewKey(created, ctx.cookies.get(SESSION_COOKIE) ?? "", ctx.deps.now() + NEW_KEY_LIFETIME_MS);
  return cookie(NEW_KEY_COOKIE, value, NEW_KEY_LIFETIME_MS / 1000, secure(ctx));
}

/** The key handed to this page, the first time it is asked for; and the cookie to clear whenever one came. */
export async function takeNewKey(ctx: SignedInCtx): Promise<{ created: NewKey | null; setCookie: string[] }> {
  const value = ctx.cookies.get(NEW_KEY_COOKIE);
  if (!value) return { created: null, setCookie: [] };
  const clear = [cookie(NEW_KEY_COOKIE, "", 0, secure(ctx))];
  const opened = openNewKey(value, ctx.cookies.get(SESSION_COOKIE) ?? "", ctx.deps.now());
  if (!opened) return { created: null, setCookie: clear };
  const first = await ctx.deps.hot.rateLimit(`dashboard-new-key:${opened.id}`, 1, NEW_KEY_LIFETIME_MS);
  return { created: first.allowed ? opened : null, setCookie: clear };
}

/**
 * A password link's form POST: the password a visitor posted and whether it is right. Only the form body is read
 * (never the query string), and at most 16 KiB of it, whatever Content-Length says: a chunked body has none, and
 * it must not be read to the server's 8 MiB limit just to find a field of at most 200 characters.
 */
import type { CompiledLink } from "../shared/link.ts";
import { addressBucket } from "../shared/net/ip.ts";
import type { HotState } from "../shared/ports.ts";
import type { LazyRequestFacts } from "./request-facts.ts";

const MAX_FORM_BYTES = 16_384;
const MAX_PASSWORD = 200;

/** The body's bytes, or null when it is larger than `max` (reading stops there). */
async function bodyUpTo(req: Request, max: number): Promise<Uint8Array<ArrayBuffer> | null> {
  const declared = req.headers.get("content-length");
  if (declared !== null && Number(declared) > max) return null;
  if (req.body === null) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return new Uint8Array(await new Blob(chunks).arrayBuffer());
}

/** The posted password, or "" when there is none, the form is malformed or too large, or it is too long. */
export async function postedPassword(req: Request): Promise<string> {
  const type = req.headers.get("content-type") ?? "";
  const urlencoded = type.startsWith("application/x-www-form-urlencoded");
  if (!urlencoded && !type.startsWith("multipart/form-data")) return "";
  try {
    const body = await bodyUpTo(req, MAX_FORM_BYTES);
    if (body === null) return "";
    const value = urlencoded
      ? new URLSearchParams(new TextDecoder().decode(body)).get("password")
      : (await new Response(body, { headers: { "content-type": type } }).formData()).get("password");
    return typeof value === "string" && value.length <= MAX_PASSWORD ? value : "";
  } catch {
    return "";
  }
}

const PASSWORD_ATTEMPTS = 5;
const PASSWORD_WINDOW_MS = 60_000;

export type PasswordVerdict = { kind: "right" } | { kind: "wrong" } | { kind: "limited"; retryAfter: number };
const RIGHT: PasswordVerdict = { kind: "right" };
const WRONG: PasswordVerdict = { kind: "wrong" };

/**
 * Checks a form POST's password against the link's hash. Attempts are limited per link and client address (its
 * /64 for IPv6) to 5 a minute, checked before the password is verified, so a right guess over the limit is refused too.
 */
export async function checkPassword(hot: Pick<HotState, "rateLimit">, facts: LazyRequestFacts, link: CompiledLink): Promise<PasswordVerdict> {
  const ip = addressBucket(facts.ctx.ipOf(facts.req, facts.server) ?? "unknown");
  const limit = await hot.rateLimit(`pw:${link.id}:${ip}`, PASSWORD_ATTEMPTS, PASSWORD_WINDOW_MS);
  if (!limit.allowed) return { kind: "limited", retryAfter: limit.resetSeconds };
  const password = await postedPassword(facts.req);
  const ok = password.length > 0 && (await Bun.password.verify(password, link.passwordHash!));
  return ok ? RIGHT : WRONG;
}

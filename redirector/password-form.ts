/**
 * A password link's form POST: the password a visitor posted and whether it is right. Only the form body is read
 * (never the query string), and at most 16 KiB of it (shared/net/body.ts): a larger form is answered 413.
 */
import { AppError, problemResponse } from "../shared/errors.ts";
import type { CompiledLink } from "../shared/link.ts";
import { readBodyUpTo } from "../shared/net/body.ts";
import { addressBucket } from "../shared/net/ip.ts";
import type { HotState } from "../shared/ports.ts";
import type { LazyRequestFacts } from "./request-facts.ts";

const MAX_FORM_BYTES = 16_384;
const MAX_PASSWORD = 200;

/**
 * The posted password, "" when there is none, the form is malformed or the password too long, or null when the
 * form is over 16 KiB.
 */
export async function postedPassword(req: Request): Promise<string | null> {
  const type = req.headers.get("content-type") ?? "";
  const urlencoded = type.startsWith("application/x-www-form-urlencoded");
  if (!urlencoded && !type.startsWith("multipart/form-data")) return "";
  let body: Uint8Array<ArrayBuffer> | null;
  try {
    body = await readBodyUpTo(req, MAX_FORM_BYTES);
  } catch {
    return ""; // the visitor went away mid-body
  }
  if (body === null) return null;
  try {
    const value = urlencoded
      ? new URLSearchParams(new TextDecoder().decode(body)).get("password")
      : (await new Response(body, { headers: { "content-type": type } }).formData()).get("password");
    return typeof value === "string" && value.length <= MAX_PASSWORD ? value : "";
  } catch {
    return "";
  }
}

/** The answer to a form over 16 KiB: problem+json, as every body over its limit gets. */
export function formTooLargeResponse(): Response {
  return problemResponse(new AppError("payload_too_large", "The form must be at most 16 KiB"));
}

const PASSWORD_ATTEMPTS = 5;
const PASSWORD_WINDOW_MS = 60_000;

export type PasswordVerdict = { kind: "right" } | { kind: "wrong" } | { kind: "tooLarge" } | { kind: "limited"; retryAfter: number };
const RIGHT: PasswordVerdict = { kind: "right" };
const WRONG: PasswordVerdict = { kind: "wrong" };
const TOO_LARGE: PasswordVerdict = { kind: "tooLarge" };

/**
 * Checks a form POST's password against the link's hash. Attempts are limited per link and client address (its
 * /64 for IPv6) to 5 a minute, checked before the password is verified, so a right guess over the limit is refused too.
 */
export async function checkPassword(hot: Pick<HotState, "rateLimit">, facts: LazyRequestFacts, link: CompiledLink): Promise<PasswordVerdict> {
  const ip = addressBucket(facts.visitorAddress() ?? "unknown");
  const limit = await hot.rateLimit(`pw:${link.id}:${ip}`, PASSWORD_ATTEMPTS, PASSWORD_WINDOW_MS);
  if (!limit.allowed) return { kind: "limited", retryAfter: limit.resetSeconds };
  const password = await postedPassword(facts.req);
  if (password === null) return TOO_LARGE;
  const ok = password.length > 0 && (await Bun.password.verify(password, link.passwordHash!));
  return ok ? RIGHT : WRONG;
}

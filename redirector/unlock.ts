/**
 * Password links: after a correct password the visitor gets a short-lived HttpOnly cookie holding an
 * HMAC token (never the password). The HMAC key is the link's password hash, so tokens need no shared
 * secret between redirectors and die by themselves when the password changes.
 */
import { timingSafeEqual } from "node:crypto";
import type { CompiledLink } from "../shared/link.ts";

const TTL_SECONDS = 3600;
export const UNLOCK_COOKIE = "clink_unlock";

function mac(link: CompiledLink, expires: number): string {
  return new Bun.CryptoHasher("sha256", link.passwordHash!).update(`${link.id}.${expires}`).digest("base64url");
}

export function unlockCookie(link: CompiledLink, nowMs: number, secure: boolean): string {
  const expires = Math.floor(nowMs / 1000) + TTL_SECONDS;
  const token = `${expires}.${mac(link, expires)}`;
  return `${UNLOCK_COOKIE}=${token}; Path=/${link.slug}; Max-Age=${TTL_SECONDS}; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`;
}

/** True when the request carries a valid, unexpired unlock token for this link. */
export function isUnlocked(link: CompiledLink, cookieHeader: string | null, nowMs: number): boolean {
  if (!cookieHeader) return false;
  // The cookie by its whole name: at the start of the header or after a separator, not inside "xclink_unlock".
  let start = cookieHeader.indexOf(`${UNLOCK_COOKIE}=`);
  while (start > 0 && cookieHeader[start - 1] !== ";" && cookieHeader[start - 1] !== " ") start = cookieHeader.indexOf(`${UNLOCK_COOKIE}=`, start + 1);
  if (start < 0) return false;
  const end = cookieHeader.indexOf(";", start);
  const token = cookieHeader.slice(start + UNLOCK_COOKIE.length + 1, end < 0 ? undefined : end).trim();
  const dot = token.indexOf(".");
  const expires = Number(token.slice(0, dot));
  if (dot < 0 || !Number.isInteger(expires) || expires * 1000 < nowMs) return false;
  const expected = mac(link, expires);
  const given = token.slice(dot + 1);
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

/**
 * The secrets the authorization server hands out, their shapes and lifetimes. Each has a prefix saying what it is
 * (a leaked token is recognisable, and the Bearer check tells an access token from a `ck_` key by it); only its
 * SHA-256 hash is stored.
 */
import { createHash } from "node:crypto";
import { newToken, sha256Hex } from "../../shared/ids.ts";

export const ACCESS_TOKEN_PREFIX = "cla_";
const REFRESH_TOKEN_PREFIX = "clr_";
const CODE_PREFIX = "clc_";

/** An access token lives an hour: a stolen one is useful briefly, and refreshing is cheap. */
export const ACCESS_TOKEN_TTL_MS = 3_600_000;
/** A refresh token lives 30 days unused; each use gives a new one for another 30 days (rotation). */
export const REFRESH_TOKEN_TTL_MS = 30 * 86_400_000;
/** An authorization code must be exchanged within 5 minutes (OAuth 2.1 §4.1.2: short-lived, at most 10). */
export const CODE_TTL_MS = 5 * 60_000;

/** Two of the 32-character random tokens: 64 base62 characters, about 380 bits. */
const secret = (prefix: string) => `${prefix}${newToken()}${newToken()}`;

export const newAccessToken = () => secret(ACCESS_TOKEN_PREFIX);
export const newRefreshToken = () => secret(REFRESH_TOKEN_PREFIX);
export const newAuthorizationCode = () => secret(CODE_PREFIX);
export const hashOf = sha256Hex;

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** PKCE S256 (RFC 7636 §4.6): BASE64URL(SHA256(verifier)) equals the challenge sent to the authorization endpoint. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  if (!VERIFIER.test(verifier)) return false;
  return createHash("sha256").update(verifier).digest("base64url") === challenge;
}

/** A S256 challenge is the base64url of 32 bytes: 43 characters. */
export const isS256Challenge = (challenge: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(challenge);

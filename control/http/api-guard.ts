/**
 * Authentication and the per-key rate limit (design §3.3) for every API route, REST and MCP alike:
 * one budget of `rateLimitPerMinute` per key, counted atomically in HotState, with RateLimit headers.
 */
import { AppError } from "../../shared/errors.ts";
import type { RateLimitResult } from "../../shared/ports.ts";
import type { Caller, Deps } from "../deps.ts";
import type { KeyAuthenticator } from "../keys/service.ts";

export function rateLimitHeaders(r: RateLimitResult): Record<string, string> {
  return {
    "ratelimit-limit": String(r.limit),
    "ratelimit-remaining": String(r.remaining),
    "ratelimit-reset": String(r.resetSeconds),
  };
}

/** Authenticates the request and takes one unit of the key's budget; throws unauthorized or rate_limited. */
export async function guardApiRequest(
  deps: Deps,
  auth: KeyAuthenticator,
  authorization: string | null | undefined,
  headers: Record<string, unknown>,
): Promise<Caller> {
  const caller = await auth.authenticate(authorization);
  let r: RateLimitResult;
  try {
    r = await deps.hot.rateLimit(`api:${caller.keyId}`, deps.config.rateLimitPerMinute, 60_000);
  } catch {
    throw new AppError("unavailable", "Rate limiter unavailable", { retryAfter: 1 });
  }
  Object.assign(headers, rateLimitHeaders(r));
  if (!r.allowed) throw new AppError("rate_limited", "Rate limit exceeded: 120 requests per minute per key", { retryAfter: r.resetSeconds });
  return caller;
}

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
  await chargeApiRequests(deps, caller, 1, headers);
  return caller;
}

/**
 * Takes `units` of the caller's budget (the guard takes one per HTTP request; an MCP batch of N JSON-RPC
 * messages is N requests) and sets the RateLimit headers; throws rate_limited when the budget is exceeded.
 */
export async function chargeApiRequests(deps: Deps, caller: Caller, units: number, headers: Record<string, unknown>): Promise<void> {
  let r: RateLimitResult;
  try {
    r = await deps.hot.rateLimit(`api:${caller.keyId}`, deps.config.rateLimitPerMinute, 60_000, units);
  } catch {
    throw new AppError("unavailable", "Rate limiter unavailable", { retryAfter: 1 });
  }
  Object.assign(headers, rateLimitHeaders(r));
  if (!r.allowed) {
    throw new AppError("rate_limited", `Rate limit exceeded: ${deps.config.rateLimitPerMinute} requests per minute per key`, { retryAfter: r.resetSeconds });
  }
}

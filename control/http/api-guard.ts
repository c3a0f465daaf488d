/**
 * Authentication and the per-key rate limit (design §3.3) for every API route, REST and MCP alike:
 * one budget of `rateLimitPerMinute` per key, counted atomically in HotState, with RateLimit headers.
 */
import { AppError } from "../../shared/errors.ts";
import type { RateLimitResult } from "../../shared/ports.ts";
import { SCOPES, type Role, type Scope } from "../../shared/enums.ts";
import { bearerChallenge, resourceOfPath, resourceUrl } from "../auth/challenge.ts";
import { requireRole } from "../auth/roles.ts";
import { requireScope } from "../auth/scopes.ts";
import type { Caller, Deps } from "../deps.ts";
import type { KeyAuthenticator } from "../keys/service.ts";

export function rateLimitHeaders(r: RateLimitResult): Record<string, string> {
  return {
    "ratelimit-limit": String(r.limit),
    "ratelimit-remaining": String(r.remaining),
    "ratelimit-reset": String(r.resetSeconds),
  };
}

/**
 * Authenticates the request, checks the role and the scope the route needs (if any) and takes one unit of the
 * caller's budget; throws unauthorized (with a challenge naming the resource's OAuth metadata), forbidden_role (the
 * role first: it names what the person needs, whatever their key), insufficient_scope or rate_limited.
 */
export async function guardApiRequest(
  deps: Deps,
  auth: KeyAuthenticator,
  request: Request,
  headers: Record<string, unknown>,
  scope?: Scope,
  least?: Role,
): Promise<Caller> {
  const resource = resourceOfPath(new URL(request.url).pathname);
  let caller: Caller;
  try {
    caller = await auth.authenticate(request.headers.get("authorization"), resourceUrl(deps.config.baseUrl, resource));
  } catch (e) {
    if (e instanceof AppError && e.code === "unauthorized" && e.challenge === undefined) {
      // The scopes to ask for (MCP authorization, "Scope Selection Strategy"): all of them, what a key has too.
      throw new AppError("unauthorized", e.message, { challenge: bearerChallenge(deps.config.baseUrl, resource, { scope: SCOPES }) });
    }
    throw e;
  }
  if (least) requireRole(caller, least, "This call");
  if (scope) requireScope(caller, scope, deps.config.baseUrl, resource);
  await chargeApiRequests(deps, caller, 1, headers);
  return caller;
}

/** The rate-limit budget a caller spends: its key's, its OAuth grant's, else its account's. */
const budgetOf = (caller: Caller): string => caller.keyId ?? (caller.grantId ? `grant:${caller.grantId}` : `account:${caller.accountId}`);

/**
 * Takes `units` of the caller's budget (the guard takes one per HTTP request; an MCP batch of N JSON-RPC
 * messages is N requests) and sets the RateLimit headers; throws rate_limited when the budget is exceeded.
 */
export async function chargeApiRequests(deps: Deps, caller: Caller, units: number, headers: Record<string, unknown>): Promise<void> {
  let r: RateLimitResult;
  try {
    r = await deps.hot.rateLimit(`api:${budgetOf(caller)}`, deps.config.rateLimitPerMinute, 60_000, units);
  } catch {
    throw new AppError("unavailable", "Rate limiter unavailable", { retryAfter: 1 });
  }
  Object.assign(headers, rateLimitHeaders(r));
  if (!r.allowed) {
    throw new AppError("rate_limited", `Rate limit exceeded: ${deps.config.rateLimitPerMinute} requests per minute per key`, { retryAfter: r.resetSeconds });
  }
}

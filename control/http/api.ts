/** What API route handlers share: the guard (auth + rate limit) and the body parser. */
import type { Role, Scope } from "../../shared/enums.ts";
import type { Caller, Deps } from "../deps.ts";
import type { KeyAuthenticator } from "../keys/service.ts";
import { chargeApiRequests, guardApiRequest } from "./api-guard.ts";
import { parseJsonBody } from "./errors.ts";

export interface ApiContext {
  /**
   * Authenticates, checks the workspace role (`least`: admin for what only admins manage) and `scope` when the route
   * names them, and takes one unit of the caller's budget.
   */
  guard(request: Request, headers: Record<string, unknown>, scope?: Scope, least?: Role): Promise<Caller>;
  /** Takes `units` more of an authenticated caller's budget (requests carried inside one HTTP request). */
  charge(caller: Caller, units: number, headers: Record<string, unknown>): Promise<void>;
  body(request: Request): Promise<unknown>;
}

export function createApiContext(deps: Deps, auth: KeyAuthenticator): ApiContext {
  return {
    guard: (request, headers, scope, least) => guardApiRequest(deps, auth, request, headers, scope, least),
    charge: (caller, units, headers) => chargeApiRequests(deps, caller, units, headers),
    body: parseJsonBody,
  };
}

/** What API route handlers share: the guard (auth + rate limit) and the body parser. */
import type { Scope } from "../../shared/enums.ts";
import type { Caller, Deps } from "../deps.ts";
import type { KeyAuthenticator } from "../keys/service.ts";
import { chargeApiRequests, guardApiRequest } from "./api-guard.ts";
import { parseJsonBody } from "./errors.ts";

export interface ApiContext {
  /** Authenticates, checks `scope` when the route names one, and takes one unit of the caller's budget. */
  guard(request: Request, headers: Record<string, unknown>, scope?: Scope): Promise<Caller>;
  /** Takes `units` more of an authenticated caller's budget (requests carried inside one HTTP request). */
  charge(caller: Caller, units: number, headers: Record<string, unknown>): Promise<void>;
  body(request: Request): Promise<unknown>;
}

export function createApiContext(deps: Deps, auth: KeyAuthenticator): ApiContext {
  return {
    guard: (request, headers, scope) => guardApiRequest(deps, auth, request, headers, scope),
    charge: (caller, units, headers) => chargeApiRequests(deps, caller, units, headers),
    body: parseJsonBody,
  };
}

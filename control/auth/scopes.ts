/**
 * Scope checks, the same for keys and OAuth access tokens: a call outside the caller's scopes is 403
 * `insufficient_scope` with a challenge naming the scope needed (RFC 6750 §3.1), so a client can ask for it; a
 * call outside what the caller's workspace role grants is 403 `forbidden_role` instead (roles.ts), since no other
 * key or token of that person could get it.
 */
import { SCOPES, type Scope } from "../../shared/enums.ts";
import { AppError } from "../../shared/errors.ts";
import type { Caller } from "../deps.ts";
import { bearerChallenge, type ProtectedResource } from "./challenge.ts";
import { leastRoleFor, ROLE_SCOPES, roleRefusal } from "./roles.ts";

/** Every scope: what a session, and a key created before scopes existed, may do. */
export const ALL_SCOPES: readonly Scope[] = SCOPES;

export const hasScope = (caller: Caller, scope: Scope): boolean => caller.scopes.includes(scope);

/** Throws 403 forbidden_role unless the caller's role grants `scope`, then 403 insufficient_scope unless the caller holds it. */
export function requireScope(caller: Caller, scope: Scope, baseUrl: string, resource: ProtectedResource): void {
  if (hasScope(caller, scope)) return;
  if (!ROLE_SCOPES[caller.role].includes(scope)) throw roleRefusal(leastRoleFor(scope), caller.role, `This call (${scope})`);
  throw new AppError("insufficient_scope", `This call needs the ${scope} scope, which this key or token does not have`, {
    challenge: bearerChallenge(baseUrl, resource, { error: "insufficient_scope", scope: [scope] }),
  });
}

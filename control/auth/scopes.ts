/**
 * Scope checks, the same for keys and OAuth access tokens: a call outside the caller's scopes is 403
 * `insufficient_scope` with a challenge naming the scope needed (RFC 6750 §3.1), so a client can ask for it.
 */
import { SCOPES, type Scope } from "../../shared/enums.ts";
import { AppError } from "../../shared/errors.ts";
import type { Caller } from "../deps.ts";
import { bearerChallenge, type ProtectedResource } from "./challenge.ts";

/** Every scope: what a session, and a key created before scopes existed, may do. */
export const ALL_SCOPES: readonly Scope[] = SCOPES;

export const hasScope = (caller: Caller, scope: Scope): boolean => caller.scopes.includes(scope);

/** Throws 403 insufficient_scope unless the caller holds `scope`. */
export function requireScope(caller: Caller, scope: Scope, baseUrl: string, resource: ProtectedResource): void {
  if (hasScope(caller, scope)) return;
  throw new AppError("insufficient_scope", `This call needs the ${scope} scope, which this key or token does not have`, {
    challenge: bearerChallenge(baseUrl, resource, { error: "insufficient_scope", scope: [scope] }),
  });
}

/**
 * What each workspace role may do (issue #24, docs/teams.md). A role grants scopes, and a caller's effective scopes
 * are its key's, token's or session's scopes ∩ its role's, computed when the caller is resolved: every scope check
 * (REST guard, MCP tools/call) enforces the role with no edit of its own. What no scope names (managing keys,
 * domains, members, invitations; deleting the workspace) is checked with requireRole.
 */
import { ROLES, type Role, type Scope } from "../../shared/enums.ts";
import { AppError } from "../../shared/errors.ts";
import type { Caller } from "../deps.ts";

/** The scopes each role grants; a role grants what the role below it does, and more. */
export const ROLE_SCOPES: Record<Role, readonly Scope[]> = {
  viewer: ["links:read", "stats:read"],
  member: ["links:read", "links:write", "stats:read"],
  admin: ["links:read", "links:write", "stats:read", "webhooks:manage"],
  owner: ["links:read", "links:write", "stats:read", "webhooks:manage"],
};

/** Whether `role` is `least` or stronger (ROLES is weakest first). */
export const roleAtLeast = (role: Role, least: Role): boolean => ROLES.indexOf(role) >= ROLES.indexOf(least);

/** What a caller of `role` holding `scopes` may do: the scopes the role grants too, in the order given. */
export const effectiveScopes = (scopes: readonly Scope[], role: Role): Scope[] => scopes.filter((s) => ROLE_SCOPES[role].includes(s));

/** The weakest role granting `scope`. */
export const leastRoleFor = (scope: Scope): Role => ROLES.find((r) => ROLE_SCOPES[r].includes(scope))!;

/** 403 forbidden_role naming the role needed and the caller's. */
export const roleRefusal = (least: Role, role: Role, what: string): AppError =>
  new AppError("forbidden_role", `${what} needs the ${least} role or higher in this workspace; you are ${article(role)} ${role}`);

const article = (role: Role) => (role === "admin" || role === "owner" ? "an" : "a");

/** Throws 403 forbidden_role unless the caller's role is `least` or stronger; `what` says what was asked, for the message. */
export function requireRole(caller: Caller, least: Role, what: string): void {
  if (!roleAtLeast(caller.role, least)) throw roleRefusal(least, caller.role, what);
}

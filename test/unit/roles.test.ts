/** Workspace roles (control/auth/roles.ts): what each grants, the intersection with a key's scopes, requireRole. */
import { describe, expect, test } from "bun:test";
import { effectiveScopes, leastRoleFor, requireRole, ROLE_SCOPES, roleAtLeast } from "../../control/auth/roles.ts";
import type { Caller } from "../../control/deps.ts";
import { ROLES, SCOPES, type Role } from "../../shared/enums.ts";
import { AppError } from "../../shared/errors.ts";

const callerOf = (role: Role): Caller => ({ workspaceId: "w", accountId: "a", role, keyId: null, scopes: SCOPES });

test("viewers read links and stats, members also write links, admins and owners also manage webhooks", () => {
  expect(ROLE_SCOPES).toEqual({
    viewer: ["links:read", "stats:read"],
    member: ["links:read", "links:write", "stats:read"],
    admin: ["links:read", "links:write", "stats:read", "webhooks:manage"],
    owner: ["links:read", "links:write", "stats:read", "webhooks:manage"],
  });
  // Each role grants what the one below it does.
  for (let i = 1; i < ROLES.length; i++) for (const s of ROLE_SCOPES[ROLES[i - 1]]) expect(ROLE_SCOPES[ROLES[i]]).toContain(s);
});

test("a caller's scopes are its key's scopes that its role grants, in the key's order", () => {
  expect(effectiveScopes(SCOPES, "viewer")).toEqual(["links:read", "stats:read"]);
  expect(effectiveScopes(["webhooks:manage", "links:write"], "member")).toEqual(["links:write"]);
  expect(effectiveScopes(["webhooks:manage", "links:write"], "admin")).toEqual(["webhooks:manage", "links:write"]);
  expect(effectiveScopes([], "owner")).toEqual([]);
});

test("the least role of each scope", () => {
  expect(SCOPES.map(leastRoleFor)).toEqual(["viewer", "member", "viewer", "admin"]);
});

test("roleAtLeast orders viewer < member < admin < owner", () => {
  const table = ROLES.map((r) => ROLES.map((least) => roleAtLeast(r, least)));
  expect(table).toEqual([
    [true, false, false, false],
    [true, true, false, false],
    [true, true, true, false],
    [true, true, true, true],
  ]);
});

describe("requireRole", () => {
  test("passes the role and those above it", () => {
    for (const r of ["admin", "owner"] as const) expect(() => requireRole(callerOf(r), "admin", "Adding a domain")).not.toThrow();
  });
  test("refuses those below with 403 forbidden_role naming the role needed and the caller's", () => {
    let thrown: unknown;
    try {
      requireRole(callerOf("member"), "admin", "Adding a domain");
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(AppError);
    const p = (thrown as AppError).toProblem();
    expect([p.status, p.code, p.detail]).toEqual([403, "forbidden_role", "Adding a domain needs the admin role or higher in this workspace; you are a member"]);
  });
});

/**
 * Every role against every REST route and every MCP tool (issue #24): in a shared workspace with an owner, an admin,
 * a member and a viewer, each holding a key with every scope, a role below what a route or tool needs is refused
 * with 403 forbidden_role naming the role needed, and each role from it up is served. The route table is the app's
 * own (scoped-routes.ts, checked against the app's route list by key-scopes-rest.test.ts), so a new route is here too.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { leastRoleFor, roleAtLeast } from "../../control/auth/roles.ts";
import { LINK_TOOLS } from "../../control/mcp/tools.ts";
import { ROLES, type Role } from "../../shared/enums.ts";
import { jsonOf, problemOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import { fixturesFor, requestOf, SCOPED_ROUTES, type Fixtures, type ScopedRoute } from "./scoped-routes.ts";
import { MCP_ARGS, mcpCall, team, type Team } from "./workspaces-helpers.ts";

/** Routes whose role is more than their scope's least role: what only admins (or owners) manage. */
const ROUTE_ROLES: Record<string, Role> = {
  "POST /api/v1/domains": "admin",
  "PATCH /api/v1/domains/:id": "admin",
  "POST /api/v1/domains/:id/verify": "admin",
  "DELETE /api/v1/domains/:id": "admin",
  "GET /api/v1/audit": "admin",
  "PATCH /api/v1/workspace": "admin",
  "PATCH /api/v1/workspace/members/:accountId": "admin",
  "DELETE /api/v1/workspace/members/:accountId": "admin",
  "GET /api/v1/workspace/invitations": "admin",
  "POST /api/v1/workspace/invitations": "admin",
  "DELETE /api/v1/workspace/invitations/:id": "admin",
  "DELETE /api/v1/workspace": "owner",
};
const leastRoleOf = (r: ScopedRoute): Role => ROUTE_ROLES[r.route] ?? leastRoleFor(r.scope);

let cp: InProcessControlPlane;
let t: Team;
let fx: Fixtures;
const keys = {} as Record<Role, string>;

beforeAll(async () => {
  cp = await startControlPlane({ env: { WEBHOOK_ALLOW_PRIVATE: "true", RATE_LIMIT_PER_MINUTE: "100000" } });
  t = await team(cp, "roles-owner@example.com", "Roles");
  keys.owner = await t.keyOf(t.owner);
  for (const role of ["admin", "member", "viewer"] as const) keys[role] = await t.keyOf(await t.join(`roles-${role}@example.com`, role));
  fx = fixturesFor(cp, keys.owner);
});
afterAll(() => cp?.close());

async function expectRoleRefusal(res: Response, least: Role, role: Role): Promise<void> {
  const p = await problemOf(res, 403, "forbidden_role");
  expect(p.detail).toContain(`needs the ${least} role or higher in this workspace; you are a${role === "admin" || role === "owner" ? "n" : ""} ${role}`);
}

test("the roles the routes need, as docs/teams.md tells them", () => {
  expect(Object.fromEntries(SCOPED_ROUTES.map((r) => [r.route, leastRoleOf(r)]))).toMatchObject({
    "GET /api/v1/links": "viewer", "POST /api/v1/links": "member", "GET /api/v1/stats": "viewer", "POST /api/v1/webhooks": "admin",
    "POST /api/v1/domains": "admin", "GET /api/v1/domains": "viewer", "DELETE /api/v1/workspace": "owner",
  });
  for (const route of Object.keys(ROUTE_ROLES)) expect(SCOPED_ROUTES.map((r) => r.route)).toContain(route);
});

describe("every REST route, every role", () => {
  // Deleting the workspace ends it for every key: that one is the last test of this file.
  for (const r of SCOPED_ROUTES.filter((r) => r.route !== "DELETE /api/v1/workspace")) {
    const least = leastRoleOf(r);
    test(`${r.route}: ${least} and up`, async () => {
      for (const role of ROLES) {
        const call = await r.call(fx);
        const res = await requestOf(cp, r, call, keys[role]);
        if (!roleAtLeast(role, least)) await expectRoleRefusal(res, least, role);
        else expect([role, res.status, res.status < 300 ? "" : await res.text()]).toEqual([role, r.ok, ""]);
      }
    });
  }
});

describe("every MCP tool, every role", () => {

  test("the table has every tool", () => expect(LINK_TOOLS.map((tool) => tool.name).sort()).toEqual(Object.keys(MCP_ARGS).sort()));
  for (const tool of LINK_TOOLS) {
    const least = leastRoleFor(tool.scope);
    test(`${tool.name}: ${least} and up`, async () => {
      for (const role of ROLES) {
        const res = await mcpCall(cp, keys[role], tool.name, MCP_ARGS[tool.name]!(await fx.link()));
        if (!roleAtLeast(role, least)) await expectRoleRefusal(res, least, role);
        else {
          const { result } = await jsonOf(res);
          expect([role, res.status, result.isError ? result.content[0].text : "served"]).toEqual([role, 200, "served"]);
        }
      }
    });
  }
});

test("a key's scopes are cut to its maker's role: a member's key with webhooks:manage is refused", async () => {
  const member = await cp.account("roles-member@example.com");
  const key = await t.keyOf(member, ["webhooks:manage"]);
  await expectRoleRefusal(await cp.request("GET", "/api/v1/webhooks", { key }), "admin", "member");
});

test("a role change counts from the next request: a viewer made member may create, then made viewer may not", async () => {
  const person = await t.join("roles-promoted@example.com", "viewer");
  const key = await t.keyOf(person);
  const create = () => cp.request("POST", "/api/v1/links", { key, json: { url: "https://example.com/promoted" } });
  await expectRoleRefusal(await create(), "member", "viewer");
  const owner = { key: keys.owner };
  expect((await cp.request("PATCH", `/api/v1/workspace/members/${person.id}`, { ...owner, json: { role: "member" } })).status).toBe(200);
  expect((await create()).status).toBe(201);
  expect((await cp.request("PATCH", `/api/v1/workspace/members/${person.id}`, { ...owner, json: { role: "viewer" } })).status).toBe(200);
  await expectRoleRefusal(await create(), "member", "viewer");
});

test("DELETE /api/v1/workspace: owners only; afterwards no key of the workspace works", async () => {
  const r = SCOPED_ROUTES.find((x) => x.route === "DELETE /api/v1/workspace")!;
  for (const role of ["viewer", "member", "admin"] as const) await expectRoleRefusal(await requestOf(cp, r, {}, keys[role]), "owner", role);
  expect((await requestOf(cp, r, {}, keys.owner)).status).toBe(204);
  for (const role of ROLES) await problemOf(await cp.request("GET", "/api/v1/links", { key: keys[role] }), 401, "unauthorized");
});

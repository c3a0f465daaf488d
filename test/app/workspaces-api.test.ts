/**
 * The workspace REST API (docs/teams.md): each route's answer and each of its error paths as problem+json with its
 * stable code, through app.handle; a removed member's key refused on the very next request; the audit log's entries.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { jsonOf, problemOf, startControlPlane, START_TIME, type InProcessControlPlane } from "../helpers/in-process.ts";
import { acceptInvitation } from "../../control/workspaces/service.ts";
import type { Account } from "../../shared/ports.ts";
import { team, tokenOf, type Team } from "./workspaces-helpers.ts";

let cp: InProcessControlPlane;
let t: Team;
let owner: string;
let admin: Account;
let adminKey: string;
let memberKey: string;
let member: Account;

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  t = await team(cp, "api-owner@example.com", "Api Team");
  owner = await t.keyOf(t.owner);
  admin = await t.join("api-admin@example.com", "admin");
  adminKey = await t.keyOf(admin);
  member = await t.join("api-member@example.com", "member");
  memberKey = await t.keyOf(member);
});
afterAll(() => cp?.close());

const req = (method: string, path: string, key: string, json?: unknown) => cp.request(method, `/api/v1${path}`, { key, json });

describe("GET and PATCH /api/v1/workspace", () => {
  test("the key's workspace with the caller's role", async () => {
    expect(await jsonOf(await req("GET", "/workspace", memberKey))).toEqual({
      id: t.workspaceId, name: "Api Team", personal: false, role: "member", defaultDomain: null, createdAt: new Date(START_TIME).toISOString(),
    });
    const personalKey = (await cp.createKey("api-personal@example.com")).key;
    expect(await jsonOf(await req("GET", "/workspace", personalKey))).toMatchObject({ name: "Personal", personal: true, role: "owner" });
  });

  test("rename: 200 for an admin; invalid_input, invalid_json, forbidden_role otherwise", async () => {
    expect(await jsonOf(await req("PATCH", "/workspace", adminKey, { name: " Api Team " }))).toMatchObject({ name: "Api Team", role: "admin" });
    for (const body of [{}, { name: "" }, { name: " " }, { name: "x".repeat(81) }, { name: "ok", other: true }]) {
      const p = await problemOf(await req("PATCH", "/workspace", adminKey, body), 400, "invalid_input");
      expect(p.errors?.length).toBeGreaterThan(0);
    }
    await problemOf(await cp.request("PATCH", "/api/v1/workspace", { key: adminKey, body: "{", headers: { "content-type": "application/json" } }), 400, "invalid_json");
    const p = await problemOf(await req("PATCH", "/workspace", memberKey, { name: "Mine" }), 403, "forbidden_role");
    expect(p.detail).toBe("This call needs the admin role or higher in this workspace; you are a member");
  });

  test("an unsupported method is 405", async () => {
    await problemOf(await req("POST", "/workspace", owner, {}), 405, "method_not_allowed");
    await problemOf(await req("PUT", "/workspace/members", owner, {}), 405, "method_not_allowed");
    await problemOf(await req("GET", "/workspace/invitations/x", owner), 405, "method_not_allowed");
  });
});

describe("DELETE /api/v1/workspace", () => {
  test("a personal workspace: 409 personal_workspace; an admin: 403 forbidden_role naming owner", async () => {
    const personalKey = (await cp.createKey("api-keeper@example.com")).key;
    await problemOf(await req("DELETE", "/workspace", personalKey), 409, "personal_workspace");
    expect((await problemOf(await req("DELETE", "/workspace", adminKey), 403, "forbidden_role")).detail).toContain("needs the owner role");
  });
});

describe("members", () => {
  test("the list: every member with email, role and when they joined", async () => {
    const { members } = await jsonOf(await req("GET", "/workspace/members", memberKey));
    expect(members.map((m: { email: string; role: string }) => [m.email, m.role]).sort()).toEqual(
      [["api-admin@example.com", "admin"], ["api-member@example.com", "member"], ["api-owner@example.com", "owner"]],
    );
    expect(members[0]).toEqual({ accountId: expect.any(String), email: expect.any(String), role: expect.any(String), joinedAt: new Date(START_TIME).toISOString() });
  });

  test("changing a role: 200; not_found, invalid_input, forbidden_role, last_owner", async () => {
    const p = await t.join("api-changed@example.com", "viewer");
    expect(await jsonOf(await req("PATCH", `/workspace/members/${p.id}`, adminKey, { role: "member" }))).toMatchObject({ accountId: p.id, role: "member", email: "api-changed@example.com" });
    await problemOf(await req("PATCH", "/workspace/members/nobody", adminKey, { role: "member" }), 404, "not_found");
    await problemOf(await req("PATCH", `/workspace/members/${p.id}`, adminKey, { role: "king" }), 400, "invalid_input");
    expect((await problemOf(await req("PATCH", `/workspace/members/${p.id}`, adminKey, { role: "owner" }), 403, "forbidden_role")).detail).toContain("Making or unmaking an owner needs the owner role");
    await problemOf(await req("PATCH", `/workspace/members/${t.owner.id}`, owner, { role: "admin" }), 409, "last_owner");
  });

  test("removing: 204, and the member's key is refused on the next request; not_found after", async () => {
    const gone = await t.join("api-gone@example.com", "member");
    const key = await t.keyOf(gone);
    expect((await req("GET", "/links", key)).status).toBe(200);
    await problemOf(await req("DELETE", `/workspace/members/${gone.id}`, memberKey), 403, "forbidden_role");
    expect((await req("DELETE", `/workspace/members/${gone.id}`, adminKey)).status).toBe(204);
    await problemOf(await req("GET", "/links", key), 401, "unauthorized");
    await problemOf(await req("DELETE", `/workspace/members/${gone.id}`, adminKey), 404, "not_found");
  });

  test("leaving: any role with its own id; the last owner may not", async () => {
    const viewer = await t.join("api-leaver@example.com", "viewer");
    const key = await t.keyOf(viewer, ["links:read"]);
    expect((await req("DELETE", `/workspace/members/${viewer.id}`, key)).status).toBe(204);
    await problemOf(await req("GET", "/workspace", key), 401, "unauthorized");
    await problemOf(await req("DELETE", `/workspace/members/${t.owner.id}`, owner), 409, "last_owner");
  });
});

describe("invitations", () => {
  test("create: 201 with the link shown once; list; revoke: 204 then not_found", async () => {
    const res = await req("POST", "/workspace/invitations", adminKey, { role: "viewer", expiresInDays: 2 });
    expect(res.status).toBe(201);
    const inv = await jsonOf(res);
    expect(inv).toEqual({
      id: expect.stringMatching(/^inv_/), role: "viewer", state: "pending", createdBy: admin.id, createdAt: new Date(START_TIME).toISOString(),
      expiresAt: new Date(START_TIME + 2 * 86_400_000).toISOString(), usedAt: null, usedBy: null, revokedAt: null, url: expect.stringMatching(/^http:\/\/clink\.test\/dashboard\/invitations\//),
    });
    const { invitations } = await jsonOf(await req("GET", "/workspace/invitations", adminKey));
    expect(invitations.find((i: { id: string }) => i.id === inv.id)).toEqual({ ...inv, url: undefined });
    expect(JSON.stringify(invitations)).not.toContain(tokenOf(inv.url));
    expect((await req("DELETE", `/workspace/invitations/${inv.id}`, adminKey)).status).toBe(204);
    await problemOf(await req("DELETE", `/workspace/invitations/${inv.id}`, adminKey), 404, "not_found");
    await problemOf(await req("DELETE", "/workspace/invitations/inv_nothing", adminKey), 404, "not_found");
  });

  test("create: invalid_input, forbidden_role for a member and for an admin inviting an owner", async () => {
    for (const body of [{ role: "boss" }, { expiresInDays: 31 }, { expiresInDays: 0 }, { note: "hi" }]) await problemOf(await req("POST", "/workspace/invitations", adminKey, body), 400, "invalid_input");
    await problemOf(await req("POST", "/workspace/invitations", memberKey, {}), 403, "forbidden_role");
    await problemOf(await req("GET", "/workspace/invitations", memberKey), 403, "forbidden_role");
    expect((await problemOf(await req("POST", "/workspace/invitations", adminKey, { role: "owner" }), 403, "forbidden_role")).detail).toContain("Inviting an owner needs the owner role");
  });

  test("the invitation taken shows as used, by whom", async () => {
    const inv = await jsonOf(await req("POST", "/workspace/invitations", owner, {}));
    const joiner = await cp.account("api-joiner@example.com");
    await acceptInvitation(cp.deps, joiner.id, tokenOf(inv.url));
    const { invitations } = await jsonOf(await req("GET", "/workspace/invitations", owner));
    expect(invitations.find((i: { id: string }) => i.id === inv.id)).toMatchObject({ state: "used", usedBy: joiner.id, usedAt: new Date(START_TIME).toISOString() });
  });
});

test("member and invitation changes are in the workspace's audit log", async () => {
  const { entries } = await jsonOf(await req("GET", "/audit?limit=100", owner));
  const actions = new Set(entries.map((e: { action: string }) => e.action));
  for (const a of ["workspace.created", "workspace.updated", "invitation.created", "invitation.accepted", "invitation.revoked", "member.role_changed", "member.removed", "key.created"]) {
    expect([a, actions.has(a)]).toEqual([a, true]);
  }
});

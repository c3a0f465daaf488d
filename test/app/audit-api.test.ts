/**
 * GET /api/v1/audit in process (issue #24): newest first, cursor pages, the action, actor (id or email), from and to
 * filters, each bad parameter a 400 with its stable code, the role check (admins and owners only), the scope it
 * needs, and one workspace never reading another's entries.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readAuditLog } from "../../control/audit/read.ts";
import { createApiKey } from "../../control/keys/service.ts";
import { acceptInvitation, changeMemberRole, createInvitation, createWorkspace } from "../../control/workspaces/service.ts";
import { recordAudit, type AuditAction } from "../../control/audit/service.ts";
import { jsonOf, problemOf, rejectionOf, START_TIME, startControlPlane, type InProcessControlPlane, type TestKey } from "../helpers/in-process.ts";
import { keyWith } from "./scoped-routes.ts";

let cp: InProcessControlPlane;
let owner: TestKey;
let other: TestKey;
const MIN = 60_000;

/**
 * Six entries a minute apart in the owner's workspace, from an hour after the keys were made (whose own entries the
 * reads below leave out with `from`): three by the owner's key, three by the system.
 */
const seeded: { action: AuditAction; at: number }[] = [];
const SEEDED_FROM = START_TIME + 60 * MIN;

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  owner = await cp.createKey("audit-owner@example.com");
  other = await cp.createKey("audit-other@example.com");
  const actions: AuditAction[] = ["link.created", "link.updated", "link.deleted", "key.created", "domain.created", "link.created"];
  for (const [i, action] of actions.entries()) {
    cp.clock.set(SEEDED_FROM + i * MIN);
    const actor = i < 3 ? owner.caller : { workspaceId: owner.caller.workspaceId, accountId: null };
    await recordAudit(cp.deps, actor, action, { type: "link", id: `l${i}` }, { slug: `s${i}` });
    seeded.push({ action, at: SEEDED_FROM + i * MIN });
  }
  await recordAudit(cp.deps, other.caller, "link.created", { type: "link", id: "theirs" }, { slug: "theirs" });
});
afterAll(async () => {
  await cp?.close();
});

/** The log from SEEDED_FROM on, unless the query sets `from`. */
const read = (query = "", key = owner.key) => {
  const from = query.includes("from=") ? "" : `${query ? "&" : "?"}from=${new Date(SEEDED_FROM).toISOString()}`;
  return cp.request("GET", `/api/v1/audit${query}${from}`, { key });
};

describe("reading the log", () => {
  test("newest first, with who (account, email, key), what, on what and the detail", async () => {
    const res = await read();
    expect(res.status).toBe(200);
    const body = await jsonOf(res);
    expect(body.nextCursor).toBeNull();
    expect(body.entries.map((e: { action: string }) => e.action)).toEqual(seeded.map((s) => s.action).reverse());
    expect(body.entries[5]).toEqual({
      id: expect.any(String), at: new Date(SEEDED_FROM).toISOString(), action: "link.created",
      actor: { accountId: owner.account.id, email: "audit-owner@example.com", keyId: owner.caller.keyId, grantId: null },
      target: { type: "link", id: "l0" }, detail: { slug: "s0" },
    });
    expect(body.entries[0].actor).toEqual({ accountId: null, email: null, keyId: null, grantId: null });
  });

  test("cursor pages visit every entry once, and the last page says so", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const body: { entries: { target: { id: string } }[]; nextCursor: string | null } = await jsonOf(await read(`?limit=4${cursor ? `&cursor=${cursor}` : ""}`));
      seen.push(...body.entries.map((e) => e.target.id));
      cursor = body.nextCursor;
      pages++;
    } while (cursor);
    expect([pages, seen]).toEqual([2, ["l5", "l4", "l3", "l2", "l1", "l0"]]);
  });

  test("filters: action, actor by account id or email, from and to (inclusive, ISO 8601)", async () => {
    const targets = async (q: string) => (await jsonOf(await read(q))).entries.map((e: { target: { id: string } }) => e.target.id);
    expect(await targets("?action=link.created")).toEqual(["l5", "l0"]);
    expect(await targets(`?actor=${owner.account.id}`)).toEqual(["l2", "l1", "l0"]);
    expect(await targets("?actor=Audit-Owner@Example.com")).toEqual(["l2", "l1", "l0"]);
    expect(await targets("?actor=nobody@example.com")).toEqual([]);
    const iso = (i: number) => new Date(SEEDED_FROM + i * MIN).toISOString();
    expect(await targets(`?from=${iso(1)}&to=${iso(3)}`)).toEqual(["l3", "l2", "l1"]);
    expect(await targets(`?from=${iso(1)}&to=${iso(3)}&action=link.updated&actor=${owner.account.id}`)).toEqual(["l1"]);
  });

  test("a workspace reads only its own entries", async () => {
    const body = await jsonOf(await read("", other.key));
    expect(body.entries.map((e: { target: { id: string } }) => e.target.id)).toEqual(["theirs"]);
  });
});

describe("refusals", () => {
  test.each([
    ["?limit=0", "invalid_parameter", "/limit"],
    ["?limit=101", "invalid_parameter", "/limit"],
    ["?limit=ten", "invalid_parameter", "/limit"],
    ["?cursor=not-a-cursor", "invalid_parameter", "/cursor"],
    ["?action=link.exploded", "invalid_parameter", "/action"],
    [`?actor=${"x".repeat(321)}`, "invalid_parameter", "/actor"],
    ["?acton=link.created", "invalid_parameter", "/acton"],
    ["?from=yesterday", "invalid_range", "/from"],
    ["?to=2030-02-30", "invalid_range", "/to"],
    ["?from=2030-01-02&to=2030-01-01", "invalid_range", "/from"],
  ] as const)("%s is 400 %s", async (query, code, path) => {
    const body = await problemOf(await read(query), 400, code);
    expect(body.errors?.[0]?.path).toBe(path);
  });

  test("no key is 401; a key without links:read is 403 insufficient_scope", async () => {
    await problemOf(await cp.request("GET", "/api/v1/audit"), 401, "unauthorized");
    const writeOnly = await keyWith(cp, owner.account.id, ["links:write"]);
    await problemOf(await read("", writeOnly), 403, "insufficient_scope");
  });

  test("a shared workspace's member, with a key holding links:read, is refused: 403 forbidden_role; made admin, reads it", async () => {
    const team = await createWorkspace(cp.deps, owner.account.id, { name: "Audit API team" });
    const inTeam = { ...owner.caller, workspaceId: team.id };
    const invitation = await createInvitation(cp.deps, inTeam, { role: "member" });
    const member = await cp.account("audit-api-member@example.com");
    await acceptInvitation(cp.deps, member.id, new URL(invitation.url).pathname.split("/").pop());
    const { key } = await createApiKey(cp.deps, { workspaceId: team.id, accountId: member.id }, "member key", ["links:read"]);
    const refused = await problemOf(await read("", key), 403, "forbidden_role");
    expect(refused.detail).toContain("Reading the audit log needs the admin role or higher");
    await changeMemberRole(cp.deps, inTeam, member.id, { role: "admin" });
    const body = await jsonOf(await cp.request("GET", "/api/v1/audit?action=member.role_changed", { key }));
    expect(body.entries.map((e: { target: { id: string }; detail: unknown }) => [e.target.id, e.detail])).toEqual([[member.id, { from: "member", to: "admin" }]]);
  });

  test("members and viewers may not read it: 403 forbidden_role; admins may", async () => {
    for (const role of ["member", "viewer"] as const) {
      const problem = await rejectionOf(readAuditLog(cp.deps, { ...owner.caller, role }, {}));
      expect([problem.status, problem.code]).toEqual([403, "forbidden_role"]);
    }
    expect((await readAuditLog(cp.deps, { ...owner.caller, role: "admin" }, { action: "link.created" })).entries.map((e) => e.target?.id)).toEqual(["l5", "l0"]);
  });

  test("other methods are 405", async () => {
    await problemOf(await cp.request("POST", "/api/v1/audit", { key: owner.key, json: {} }), 405, "method_not_allowed");
  });
});

test("the route is in the OpenAPI document with its parameters", async () => {
  const doc = await jsonOf(await cp.request("GET", "/api/v1/openapi.json"));
  const get = doc.paths["/api/v1/audit"].get;
  expect(get.parameters.map((p: { name: string }) => p.name)).toEqual(["limit", "cursor", "action", "actor", "from", "to"]);
  expect(Object.keys(get.responses)).toContain("200");
});

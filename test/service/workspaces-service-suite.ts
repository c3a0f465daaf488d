/**
 * Workspaces, members and invitations as service functions over a real store (control/workspaces/service.ts): who
 * may do what, the owner rules (two owners racing included), and every invitation refusal with its stable code; the
 * test clock moves for expiry. Run on SQLite (workspaces-service.test.ts) and Postgres (-postgres.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  acceptInvitation, changeMemberRole, createInvitation, createWorkspace, deleteWorkspace, getWorkspace, leaveWorkspace, listInvitations,
  listMembers, listMyWorkspaces, MAX_OWNED_WORKSPACES, MAX_PENDING_INVITATIONS, removeMember, updateWorkspace, revokeInvitation, switchWorkspace,
} from "../../control/workspaces/service.ts";
import { sessionCaller } from "../../control/dashboard/session.ts";
import { createApiKey, listApiKeys } from "../../control/keys/service.ts";
import { rejectionOf, START_TIME, type InProcessControlPlane } from "../helpers/in-process.ts";
import { personIn, team, tokenOf, type Team } from "../app/workspaces-helpers.ts";
import type { Account, Session } from "../../shared/ports.ts";

/** The suite on a control plane `start` makes (its store migrated, the test clock at START_TIME). */
export function runWorkspaceServiceSuite(start: () => Promise<InProcessControlPlane>): void {
  const DAY = 86_400_000;
  let cp: InProcessControlPlane;
  let t: Team;
  let admin: Account;
  let member: Account;
  let viewer: Account;

  beforeAll(async () => {
    cp = await start();
    t = await team(cp, "owner@example.com", "Acme");
    admin = await t.join("admin@example.com", "admin");
    member = await t.join("member@example.com", "member");
    viewer = await t.join("viewer@example.com", "viewer");
  });
  afterAll(() => cp?.close());

  const as = (a: Account, role: Parameters<typeof personIn>[2]) => personIn(t.workspaceId, a, role);
  const codeOf = async (call: Promise<unknown>) => (await rejectionOf(call)).code;

  describe("workspaces", () => {
    test("a new workspace has its maker as owner; every account lists its personal workspace first, then by name", async () => {
      const me = await cp.account("lister@example.com");
      await createWorkspace(cp.deps, me.id, { name: "  Zeta  " });
      await createWorkspace(cp.deps, me.id, { name: "Alpha" });
      const mine = await listMyWorkspaces(cp.deps, me.id);
      expect(mine.map((w) => [w.name, w.personal, w.role])).toEqual([["Personal", true, "owner"], ["Alpha", false, "owner"], ["Zeta", false, "owner"]]);
      expect(mine[0]!.id).toBe(me.id);
    });

    test("an account owns at most 20 shared workspaces; its personal one and those it only joined do not count", async () => {
      const me = await cp.account("collector@example.com");
      for (let i = 0; i < MAX_OWNED_WORKSPACES; i++) await createWorkspace(cp.deps, me.id, { name: `W${i}` });
      const p = await rejectionOf(createWorkspace(cp.deps, me.id, { name: "one too many" }));
      expect([p.status, p.code]).toEqual([400, "invalid_input"]);
      expect((await listMyWorkspaces(cp.deps, me.id)).length).toBe(MAX_OWNED_WORKSPACES + 1);
      // Another account is not held back by this one's workspaces.
      expect((await createWorkspace(cp.deps, (await cp.account("other-maker@example.com")).id, { name: "Fine" })).name).toBe("Fine");
    });

    test("a name must be 1-80 characters, not blank, and nothing else may be sent", async () => {
      for (const body of [{}, { name: "" }, { name: "   " }, { name: "x".repeat(81) }, { name: 3 }, { name: "ok", extra: 1 }, null, []]) {
        expect(await codeOf(createWorkspace(cp.deps, t.owner.id, body))).toBe("invalid_input");
      }
    });

    test("admins rename; members and viewers may not", async () => {
      expect((await updateWorkspace(cp.deps, as(admin, "admin"), { name: "Acme Inc" })).name).toBe("Acme Inc");
      for (const [a, role] of [[member, "member"], [viewer, "viewer"]] as const) {
        const p = await rejectionOf(updateWorkspace(cp.deps, as(a, role), { name: "Nope" }));
        expect([p.status, p.code, p.detail]).toEqual([403, "forbidden_role", `Changing the workspace needs the admin role or higher in this workspace; you are a ${role}`]);
      }
      expect((await getWorkspace(cp.deps, t.ownerCaller)).name).toBe("Acme Inc");
    });

    test("only an owner deletes a workspace, and never a personal one", async () => {
      const other = await team(cp, "deleter@example.com", "Doomed");
      const adm = await other.join("doomed-admin@example.com", "admin");
      expect(await codeOf(deleteWorkspace(cp.deps, personIn(other.workspaceId, adm, "admin")))).toBe("forbidden_role");
      expect(await codeOf(deleteWorkspace(cp.deps, personIn(other.owner.id, other.owner, "owner")))).toBe("personal_workspace");
      await deleteWorkspace(cp.deps, other.ownerCaller);
      expect((await listMyWorkspaces(cp.deps, adm.id)).map((w) => w.name)).toEqual(["Personal"]);
      expect(await codeOf(deleteWorkspace(cp.deps, other.ownerCaller))).toBe("not_found");
    });
  });

  describe("switching a session", () => {
    const sessionOf = async (a: Account): Promise<Session> => {
      const s: Session = { idHash: `h-${crypto.randomUUID()}`, accountId: a.id, workspaceId: null, csrfToken: "c", createdAt: START_TIME, expiresAt: START_TIME + DAY };
      await cp.deps.store.createSession(s);
      return s;
    };

    test("to a workspace of the account's: its caller acts there with the role read now", async () => {
      const s = await sessionOf(member);
      expect(await sessionCaller(cp.deps, s)).toMatchObject({ workspaceId: member.id, role: "owner" });
      await switchWorkspace(cp.deps, s, t.workspaceId);
      const switched = (await cp.deps.store.getSession(s.idHash))!;
      expect(await sessionCaller(cp.deps, switched)).toMatchObject({ workspaceId: t.workspaceId, accountId: member.id, role: "member", scopes: ["links:read", "links:write", "stats:read"] });
      await switchWorkspace(cp.deps, switched, member.id);
      expect((await cp.deps.store.getSession(s.idHash))!.workspaceId).toBeNull();
    });

    test("not to a workspace the account does not belong to, nor an unknown one: not_found alike", async () => {
      const s = await sessionOf(await cp.account("outsider@example.com"));
      for (const id of [t.workspaceId, "ws_nope", member.id, 42]) expect(await codeOf(switchWorkspace(cp.deps, s, id))).toBe("not_found");
    });

    test("a session whose membership is gone acts for its personal workspace", async () => {
      const leaver = await t.join("session-leaver@example.com", "member");
      const s = await sessionOf(leaver);
      await switchWorkspace(cp.deps, s, t.workspaceId);
      await leaveWorkspace(cp.deps, as(leaver, "member"));
      const after = (await cp.deps.store.getSession(s.idHash))!;
      expect(await sessionCaller(cp.deps, after)).toMatchObject({ workspaceId: leaver.id, role: "owner" });
      // Even a session still naming the workspace (read before the removal) falls back.
      expect(await sessionCaller(cp.deps, { ...after, workspaceId: t.workspaceId })).toMatchObject({ workspaceId: leaver.id, role: "owner" });
    });
  });

  describe("members and roles", () => {
    test("everyone sees the members with their emails and roles", async () => {
      const { members } = await listMembers(cp.deps, as(viewer, "viewer"));
      expect(members.filter((m) => ["owner@example.com", "admin@example.com", "member@example.com", "viewer@example.com"].includes(m.email!)).map((m) => [m.email, m.role]).sort())
        .toEqual([["admin@example.com", "admin"], ["member@example.com", "member"], ["owner@example.com", "owner"], ["viewer@example.com", "viewer"]]);
    });

    test("admins change roles below owner; members may not", async () => {
      const p = await t.join("promoted@example.com", "viewer");
      expect((await changeMemberRole(cp.deps, as(admin, "admin"), p.id, { role: "admin" })).role).toBe("admin");
      expect(await codeOf(changeMemberRole(cp.deps, as(member, "member"), p.id, { role: "viewer" }))).toBe("forbidden_role");
      for (const body of [{}, { role: "boss" }, { role: "viewer", x: 1 }, "viewer"]) expect(await codeOf(changeMemberRole(cp.deps, as(admin, "admin"), p.id, body))).toBe("invalid_input");
      expect(await codeOf(changeMemberRole(cp.deps, as(admin, "admin"), "nobody", { role: "viewer" }))).toBe("not_found");
    });

    test("only owners make or unmake owners", async () => {
      const p = await t.join("would-be-owner@example.com", "member");
      expect(await codeOf(changeMemberRole(cp.deps, as(admin, "admin"), p.id, { role: "owner" }))).toBe("forbidden_role");
      expect((await changeMemberRole(cp.deps, t.ownerCaller, p.id, { role: "owner" })).role).toBe("owner");
      expect(await codeOf(changeMemberRole(cp.deps, as(admin, "admin"), p.id, { role: "member" }))).toBe("forbidden_role");
      expect(await codeOf(removeMember(cp.deps, as(admin, "admin"), p.id))).toBe("forbidden_role");
      expect((await changeMemberRole(cp.deps, t.ownerCaller, p.id, { role: "member" })).role).toBe("member");
    });

    test("the last owner can neither be demoted nor leave; with a second owner, they can", async () => {
      const solo = await team(cp, "solo@example.com", "Solo");
      expect(await codeOf(changeMemberRole(cp.deps, solo.ownerCaller, solo.owner.id, { role: "admin" }))).toBe("last_owner");
      expect(await codeOf(leaveWorkspace(cp.deps, solo.ownerCaller))).toBe("last_owner");
      const second = await solo.join("second@example.com", "member");
      await changeMemberRole(cp.deps, solo.ownerCaller, second.id, { role: "owner" });
      await changeMemberRole(cp.deps, solo.ownerCaller, solo.owner.id, { role: "admin" });
      await leaveWorkspace(cp.deps, personIn(solo.workspaceId, solo.owner, "admin"));
      expect((await listMembers(cp.deps, personIn(solo.workspaceId, second, "owner"))).members.map((m) => [m.email, m.role])).toEqual([["second@example.com", "owner"]]);
    });

    /** A workspace with two owners: its maker and `b`. */
    async function twoOwners(tag: string) {
      const duo = await team(cp, `${tag}-a@example.com`, tag);
      const b = await duo.join(`${tag}-b@example.com`, "member");
      await changeMemberRole(cp.deps, duo.ownerCaller, b.id, { role: "owner" });
      return { duo, bCaller: personIn(duo.workspaceId, b, "owner") };
    }
    const refusalCodes = (outcomes: PromiseSettledResult<unknown>[]) =>
      outcomes.filter((o) => o.status === "rejected").map((o) => ((o as PromiseRejectedResult).reason as { code: string }).code);

    test("two owners demoting each other at once leave the workspace an owner", async () => {
      const { duo, bCaller } = await twoOwners("demoting");
      const outcomes = await Promise.allSettled([
        changeMemberRole(cp.deps, duo.ownerCaller, duo.owner.id, { role: "admin" }),
        changeMemberRole(cp.deps, bCaller, bCaller.accountId, { role: "admin" }),
      ]);
      const owners = (await listMembers(cp.deps, bCaller)).members.filter((m) => m.role === "owner");
      expect(owners.length).toBeGreaterThan(0);
      expect(refusalCodes(outcomes)).toContain("last_owner");
    });

    test("two owners leaving at once leave the workspace an owner", async () => {
      const { duo, bCaller } = await twoOwners("leaving");
      const outcomes = await Promise.allSettled([leaveWorkspace(cp.deps, duo.ownerCaller), leaveWorkspace(cp.deps, bCaller)]);
      const { members } = await listMembers(cp.deps, { ...bCaller, accountId: "reader" });
      // One leaves and the other is refused, or (when both undo at once) both are refused: never none left.
      expect(members.filter((m) => m.role === "owner").length).toBeGreaterThan(0);
      expect(refusalCodes(outcomes)).toContain("last_owner");
    });

    test("a personal workspace keeps its own account as owner", async () => {
      const me = await cp.account("personal@example.com");
      const mine = personIn(me.id, me, "owner");
      const { url } = await createInvitation(cp.deps, mine, { role: "owner" });
      const guest = await cp.account("guest@example.com");
      await acceptInvitation(cp.deps, guest.id, tokenOf(url));
      const guestCaller = personIn(me.id, guest, "owner");
      expect(await codeOf(changeMemberRole(cp.deps, guestCaller, me.id, { role: "admin" }))).toBe("personal_workspace");
      expect(await codeOf(removeMember(cp.deps, guestCaller, me.id))).toBe("personal_workspace");
      expect(await codeOf(leaveWorkspace(cp.deps, mine))).toBe("personal_workspace");
    });

    test("removing a member revokes the keys they made there, and only those", async () => {
      const gone = await t.join("gone@example.com", "member");
      const key = await t.keyOf(gone);
      const kept = await t.keyOf(member);
      expect(await codeOf(removeMember(cp.deps, as(member, "member"), gone.id))).toBe("forbidden_role");
      await removeMember(cp.deps, as(admin, "admin"), gone.id);
      expect((await cp.request("GET", "/api/v1/links", { key })).status).toBe(401);
      expect((await cp.request("GET", "/api/v1/links", { key: kept })).status).toBe(200);
      expect(await codeOf(removeMember(cp.deps, as(admin, "admin"), gone.id))).toBe("not_found");
    });
  });

  describe("invitations", () => {
    test("admins invite (member by default, 7 days); members and viewers may not; only owners invite owners", async () => {
      const inv = await createInvitation(cp.deps, as(admin, "admin"), {});
      expect(inv).toMatchObject({ role: "member", state: "pending", createdBy: admin.id, expiresAt: new Date(cp.clock.now() + 7 * DAY).toISOString(), usedAt: null });
      expect(inv.url).toMatch(/^http:\/\/clink\.test\/dashboard\/invitations\/[A-Za-z0-9]{32}$/);
      expect(await codeOf(createInvitation(cp.deps, as(member, "member"), {}))).toBe("forbidden_role");
      expect(await codeOf(createInvitation(cp.deps, as(admin, "admin"), { role: "owner" }))).toBe("forbidden_role");
      expect((await createInvitation(cp.deps, t.ownerCaller, { role: "owner", expiresInDays: 30 })).role).toBe("owner");
      for (const body of [{ expiresInDays: 0 }, { expiresInDays: 31 }, { expiresInDays: 1.5 }, { role: "boss" }, { other: 1 }, "x"]) {
        expect(await codeOf(createInvitation(cp.deps, as(admin, "admin"), body))).toBe("invalid_input");
      }
      // The token is never stored or listed: only its hash is kept.
      const listed = JSON.stringify(await listInvitations(cp.deps, as(admin, "admin")));
      expect(listed).toContain(inv.id);
      expect(listed).not.toContain(tokenOf(inv.url));
      expect(await codeOf(listInvitations(cp.deps, as(member, "member")))).toBe("forbidden_role");
    });

    test("an invitation is taken once: a second use is invitation_used, whoever asks", async () => {
      const { url } = await createInvitation(cp.deps, t.ownerCaller, { role: "viewer" });
      const a = await cp.account("taker-a@example.com");
      const b = await cp.account("taker-b@example.com");
      expect(await acceptInvitation(cp.deps, a.id, tokenOf(url))).toMatchObject({ id: t.workspaceId, role: "viewer", personal: false });
      expect(await codeOf(acceptInvitation(cp.deps, b.id, tokenOf(url)))).toBe("invitation_used");
      expect(await codeOf(acceptInvitation(cp.deps, a.id, tokenOf(url)))).toBe("invitation_used");
    });

    test("an invitation past its expiry is invitation_expired (410), and listed as expired", async () => {
      const inv = await createInvitation(cp.deps, t.ownerCaller, { expiresInDays: 1 });
      cp.clock.advance(DAY);
      try {
        const p = await rejectionOf(acceptInvitation(cp.deps, (await cp.account("late@example.com")).id, tokenOf(inv.url)));
        expect([p.status, p.code]).toEqual([410, "invitation_expired"]);
        expect((await listInvitations(cp.deps, t.ownerCaller)).invitations.find((i) => i.id === inv.id)?.state).toBe("expired");
      } finally {
        cp.clock.advance(-DAY);
      }
    });

    test("a revoked invitation is invitation_revoked; revoking needs admin and an invitation of this workspace", async () => {
      const inv = await createInvitation(cp.deps, t.ownerCaller, {});
      expect(await codeOf(revokeInvitation(cp.deps, as(member, "member"), inv.id))).toBe("forbidden_role");
      const elsewhere = await team(cp, "elsewhere@example.com", "Elsewhere");
      expect(await codeOf(revokeInvitation(cp.deps, elsewhere.ownerCaller, inv.id))).toBe("not_found");
      await revokeInvitation(cp.deps, as(admin, "admin"), inv.id);
      const p = await rejectionOf(acceptInvitation(cp.deps, (await cp.account("revoked@example.com")).id, tokenOf(inv.url)));
      expect([p.status, p.code]).toEqual([410, "invitation_revoked"]);
      expect(await codeOf(revokeInvitation(cp.deps, as(admin, "admin"), "inv_unknown"))).toBe("not_found");
    });

    test("a member cannot take an invitation to their own workspace (already_member), which stays usable", async () => {
      const { url } = await createInvitation(cp.deps, t.ownerCaller, {});
      expect(await codeOf(acceptInvitation(cp.deps, member.id, tokenOf(url)))).toBe("already_member");
      expect((await acceptInvitation(cp.deps, (await cp.account("after-refusal@example.com")).id, tokenOf(url))).id).toBe(t.workspaceId);
    });

    test("a workspace holds at most 100 pending invitations; revoking one makes room", async () => {
      const busy = await team(cp, "busy@example.com", "Busy");
      const made = [];
      for (let i = 0; i < MAX_PENDING_INVITATIONS; i++) made.push(await createInvitation(cp.deps, busy.ownerCaller, {}));
      const p = await rejectionOf(createInvitation(cp.deps, busy.ownerCaller, {}));
      expect([p.code, p.detail]).toEqual(["invalid_input", "This workspace has 100 pending invitations; revoke some first"]);
      await revokeInvitation(cp.deps, busy.ownerCaller, made[0]!.id);
      expect((await createInvitation(cp.deps, busy.ownerCaller, {})).state).toBe("pending");
    });

    test("a token that is unknown or malformed is not_found", async () => {
      for (const token of ["A".repeat(32), "short", "", 7, null, `${"a".repeat(31)}!`]) expect(await codeOf(acceptInvitation(cp.deps, member.id, token))).toBe("not_found");
    });
  });

  describe("keys in a workspace", () => {
    test("every member makes keys; admins see and revoke everyone's, others only their own", async () => {
      const mine = await createApiKey(cp.deps, as(viewer, "viewer"), "viewer's");
      const theirs = await createApiKey(cp.deps, as(admin, "admin"), "admin's");
      expect(mine.view.createdBy).toBe(viewer.id);
      const seenBy = async (a: Account, role: Parameters<typeof personIn>[2]) => (await listApiKeys(cp.deps, as(a, role))).map((k) => k.id);
      expect(await seenBy(viewer, "viewer")).toContain(mine.view.id);
      expect(await seenBy(viewer, "viewer")).not.toContain(theirs.view.id);
      expect(await seenBy(admin, "admin")).toEqual(expect.arrayContaining([mine.view.id, theirs.view.id]));
      expect(await codeOf(cp.auth.revoke(as(viewer, "viewer"), theirs.view.id))).toBe("not_found");
      expect((await cp.request("GET", "/api/v1/links", { key: theirs.key })).status).toBe(200);
      expect((await cp.auth.revoke(as(admin, "admin"), mine.view.id)).revokedAt).not.toBeNull();
      expect((await cp.request("GET", "/api/v1/links", { key: mine.key })).status).toBe(401);
      expect((await cp.auth.revoke(as(viewer, "viewer"), (await createApiKey(cp.deps, as(viewer, "viewer"), "again")).view.id)).revokedAt).not.toBeNull();
    });

    test("another workspace's key is not_found to an admin here", async () => {
      const elsewhere = await team(cp, "keys-elsewhere@example.com", "Keys elsewhere");
      const key = await createApiKey(cp.deps, elsewhere.ownerCaller, "theirs");
      expect(await codeOf(cp.auth.revoke(t.ownerCaller, key.view.id))).toBe("not_found");
    });
  });
}

/**
 * The WorkspaceStore contract, run against SQLite and Postgres (workspaces-sqlite/postgres.test.ts): every account
 * comes with its personal workspace, members and their roles, a removed member's keys revoked, invitations taken
 * once (also by two at the same instant) and refused with the reason, and a deleted workspace takes everything it
 * holds with it and nothing of another's.
 */
import { describe, expect, test } from "bun:test";
import type { DomainRecord } from "../../shared/domain.ts";
import type { ApiKeyRecord, InvitationRecord, Session, Store, WebhookEndpoint, WorkspaceRecord } from "../../shared/ports.ts";
import type { ImportJob } from "../../shared/ports/imports.ts";
import { click, linkFor, storeContext, T0, uid } from "./store-harness.ts";

const HOUR = 3_600_000;

export function runWorkspaceContract(name: string, make: () => Promise<Store>, cleanup?: () => Promise<void>) {
  describe(`WorkspaceStore contract: ${name}`, () => {
    const ctx = storeContext(make, cleanup);
    const s = () => ctx.store;

    const workspace = (over: Partial<WorkspaceRecord> = {}): WorkspaceRecord => ({ id: uid(), name: "Acme", personalOf: null, defaultDomain: null, createdAt: T0, ...over });
    /** A shared workspace owned by a fresh account: its id and its owner's. */
    async function team(name = "Acme") {
      const owner = await ctx.newAccount();
      const w = workspace({ name });
      expect(await s().createWorkspace(w, owner)).toBe(true);
      return { w, owner };
    }
    const keyOf = (workspaceId: string, createdBy: string, over: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
      id: uid(), accountId: workspaceId, createdBy, name: "ci", keyHash: `hash-${uid()}`, prefix: "ck_AbC1", createdAt: T0,
      lastUsedAt: null, revokedAt: null, scopes: null, ...over,
    });
    const invitation = (workspaceId: string, createdBy: string, over: Partial<InvitationRecord> = {}): InvitationRecord => ({
      id: uid(), workspaceId, tokenHash: `inv-${uid()}`, role: "member", createdBy, createdAt: T0, expiresAt: T0 + HOUR, usedAt: null,
      usedBy: null, revokedAt: null, ...over,
    });
    const session = (accountId: string): Session => ({
      idHash: uid(), accountId, workspaceId: null, csrfToken: "c", createdAt: T0, expiresAt: T0 + 24 * HOUR,
    });

    test("every new account has its personal workspace (its own id) and owns it", async () => {
      const a = await ctx.newAccount();
      const personal: WorkspaceRecord = { id: a, name: "Personal", personalOf: a, defaultDomain: null, createdAt: T0 };
      expect(await s().getWorkspace(a)).toEqual(personal);
      expect(await s().listMemberships(a)).toEqual([{ workspace: personal, role: "owner" }]);
      expect(await s().getMember(a, a)).toEqual({ workspaceId: a, accountId: a, role: "owner", createdAt: T0 });
      expect(await s().listMembers(a)).toEqual([{ workspaceId: a, accountId: a, role: "owner", createdAt: T0, email: `${a}@example.com` }]);
      // An email taken: neither a second account nor a workspace is written.
      const again = uid();
      expect(await s().createAccount({ id: again, email: `${a}@example.com`, passwordHash: "h", createdAt: T0 })).toBe(false);
      expect(await s().getWorkspace(again)).toBeNull();
    });

    test("a workspace is made with its owner, once per id; renamed; listed personal first, then by name", async () => {
      const a = await ctx.newAccount();
      const zeta = workspace({ name: "Zeta" });
      const beta = workspace({ name: "Beta", createdAt: T0 + 1 });
      expect(await s().createWorkspace(zeta, a)).toBe(true);
      expect(await s().createWorkspace(beta, a)).toBe(true);
      expect(await s().createWorkspace({ ...zeta, name: "Other" }, await ctx.newAccount())).toBe(false);
      expect(await s().getWorkspace(zeta.id)).toEqual(zeta);
      expect(await s().listMembers(zeta.id)).toEqual([{ workspaceId: zeta.id, accountId: a, role: "owner", createdAt: T0, email: `${a}@example.com` }]);
      expect((await s().listMemberships(a)).map((m) => [m.workspace.name, m.role])).toEqual([["Personal", "owner"], ["Beta", "owner"], ["Zeta", "owner"]]);
      expect(await s().renameWorkspace(zeta.id, "Alpha")).toBe(true);
      expect(await s().renameWorkspace(uid(), "Nobody")).toBe(false);
      expect((await s().listMemberships(a)).map((m) => m.workspace.name)).toEqual(["Personal", "Alpha", "Beta"]);
      expect(await s().getWorkspace(uid())).toBeNull();
    });

    test("a workspace's default domain is null until set, set by hostname, cleared with null; listed with it", async () => {
      const a = await ctx.newAccount();
      const w = workspace();
      expect(await s().createWorkspace(w, a)).toBe(true);
      expect((await s().getWorkspace(w.id))?.defaultDomain).toBeNull();
      expect(await s().setDefaultDomain(w.id, "go.acme.example")).toBe(true);
      expect(await s().getWorkspace(w.id)).toEqual({ ...w, defaultDomain: "go.acme.example" });
      expect((await s().listMemberships(a)).find((m) => m.workspace.id === w.id)?.workspace.defaultDomain).toBe("go.acme.example");
      expect((await s().getWorkspace(a))?.defaultDomain).toBeNull(); // the personal one is its own
      expect(await s().setDefaultDomain(w.id, null)).toBe(true);
      expect((await s().getWorkspace(w.id))?.defaultDomain).toBeNull();
      expect(await s().setDefaultDomain(uid(), "go.acme.example")).toBe(false);
    });

    test("a member's role changes; a non-member's does not; members are listed by when they joined", async () => {
      const { w, owner } = await team();
      const m = await ctx.newAccount();
      const outsider = await ctx.newAccount();
      await s().createInvitation(invitation(w.id, owner, { tokenHash: `t-${m}`, role: "viewer" }));
      expect(await s().acceptInvitation(`t-${m}`, m, T0 + 5)).toMatchObject({ ok: true });
      expect(await s().setMemberRole(w.id, m, "admin")).toBe(true);
      expect(await s().getMember(w.id, m)).toEqual({ workspaceId: w.id, accountId: m, role: "admin", createdAt: T0 + 5 });
      expect(await s().setMemberRole(w.id, outsider, "owner")).toBe(false);
      expect(await s().getMember(w.id, outsider)).toBeNull();
      expect((await s().listMembers(w.id)).map((r) => [r.accountId, r.role, r.email])).toEqual([[owner, "owner", `${owner}@example.com`], [m, "admin", `${m}@example.com`]]);
      expect((await s().listMemberships(m)).map((r) => [r.workspace.id, r.role])).toEqual([[m, "owner"], [w.id, "admin"]]);
    });

    test("removing a member revokes the keys they made there, and only those; their sessions there fall back", async () => {
      const { w, owner } = await team();
      const m = await ctx.newAccount();
      await s().createInvitation(invitation(w.id, owner, { tokenHash: `t-${m}` }));
      await s().acceptInvitation(`t-${m}`, m, T0);
      const theirs = keyOf(w.id, m);
      const revokedBefore = keyOf(w.id, m, { revokedAt: T0 - 1 });
      const owners = keyOf(w.id, owner);
      const personal = keyOf(m, m);
      for (const k of [theirs, revokedBefore, owners, personal]) await s().createApiKey(k);
      const there = session(m);
      await s().createSession(there);
      expect(await s().setSessionWorkspace(there.idHash, w.id)).toBe(true);

      expect(await s().removeMember(w.id, m, T0 + 9)).toEqual({ removed: true, revokedKeyHashes: [theirs.keyHash] });
      expect(await s().getMember(w.id, m)).toBeNull();
      expect((await s().findApiKeyByHash(theirs.keyHash))?.revokedAt).toBe(T0 + 9);
      expect((await s().findApiKeyByHash(revokedBefore.keyHash))?.revokedAt).toBe(T0 - 1);
      expect(await s().findApiKeyByHash(owners.keyHash)).toEqual(owners);
      expect(await s().findApiKeyByHash(personal.keyHash)).toEqual(personal);
      expect((await s().getSession(there.idHash))?.workspaceId).toBeNull();
      expect((await s().listMemberships(m)).map((r) => r.workspace.id)).toEqual([m]);
      expect(await s().removeMember(w.id, m, T0 + 10)).toEqual({ removed: false, revokedKeyHashes: [] });
    });

    test("a session switches workspace; an unknown session does not", async () => {
      const { w, owner } = await team();
      const sess = session(owner);
      await s().createSession(sess);
      expect(await s().getSession(sess.idHash)).toEqual(sess);
      expect(await s().setSessionWorkspace(sess.idHash, w.id)).toBe(true);
      expect(await s().getSession(sess.idHash)).toEqual({ ...sess, workspaceId: w.id });
      expect(await s().setSessionWorkspace(sess.idHash, null)).toBe(true);
      expect((await s().getSession(sess.idHash))?.workspaceId).toBeNull();
      expect(await s().setSessionWorkspace(uid(), w.id)).toBe(false);
    });

    test("invitations are listed newest first and revoked once; a used one is not revoked", async () => {
      const { w, owner } = await team();
      const older = invitation(w.id, owner);
      const newer = invitation(w.id, owner, { createdAt: T0 + 1, role: "admin" });
      await s().createInvitation(older);
      await s().createInvitation(newer);
      expect(await s().listInvitations(w.id)).toEqual([newer, older]);
      expect(await s().revokeInvitation(uid(), older.id, T0 + 2)).toBe(false); // another workspace's id
      expect(await s().revokeInvitation(w.id, older.id, T0 + 2)).toBe(true);
      expect(await s().revokeInvitation(w.id, older.id, T0 + 3)).toBe(true);
      expect(await s().acceptInvitation(newer.tokenHash, await ctx.newAccount(), T0 + 2)).toMatchObject({ ok: true });
      expect(await s().revokeInvitation(w.id, newer.id, T0 + 3)).toBe(false);
      const [n, o] = await s().listInvitations(w.id);
      expect(o).toEqual({ ...older, revokedAt: T0 + 2 });
      expect(n?.revokedAt).toBeNull();
      expect(await s().listInvitations(uid())).toEqual([]);
    });

    test("taking an invitation: the member added with its role, then refused as used, unknown, expired, revoked or already a member", async () => {
      const { w, owner } = await team();
      const a = await ctx.newAccount();
      const inv = invitation(w.id, owner, { role: "viewer" });
      await s().createInvitation(inv);
      expect(await s().findInvitation(inv.tokenHash)).toEqual(inv);
      expect(await s().acceptInvitation(inv.tokenHash, a, T0 + 5)).toEqual({ ok: true, invitation: { ...inv, usedAt: T0 + 5, usedBy: a } });
      expect(await s().findInvitation(inv.tokenHash)).toEqual({ ...inv, usedAt: T0 + 5, usedBy: a });
      expect(await s().findInvitation(`nope-${uid()}`)).toBeNull();
      expect(await s().getMember(w.id, a)).toEqual({ workspaceId: w.id, accountId: a, role: "viewer", createdAt: T0 + 5 });
      expect((await s().listInvitations(w.id))[0]).toEqual({ ...inv, usedAt: T0 + 5, usedBy: a });
      const b = await ctx.newAccount();
      expect(await s().acceptInvitation(inv.tokenHash, b, T0 + 6)).toEqual({ ok: false, reason: "used" });
      expect(await s().acceptInvitation(`nope-${uid()}`, b, T0)).toEqual({ ok: false, reason: "unknown" });

      const expiring = invitation(w.id, owner, { expiresAt: T0 + 10 });
      await s().createInvitation(expiring);
      expect(await s().acceptInvitation(expiring.tokenHash, b, T0 + 10)).toEqual({ ok: false, reason: "expired" });
      const revoked = invitation(w.id, owner);
      await s().createInvitation(revoked);
      await s().revokeInvitation(w.id, revoked.id, T0 + 1);
      expect(await s().acceptInvitation(revoked.tokenHash, b, T0 + 2)).toEqual({ ok: false, reason: "revoked" });
      const second = invitation(w.id, owner, { role: "admin" });
      await s().createInvitation(second);
      expect(await s().acceptInvitation(second.tokenHash, a, T0 + 7)).toEqual({ ok: false, reason: "already_member" });
      // Nothing written by a refusal: the invitation is still open, the role unchanged.
      expect((await s().listInvitations(w.id)).find((i) => i.id === second.id)).toEqual(second);
      expect((await s().getMember(w.id, a))?.role).toBe("viewer");
      expect(await s().getMember(w.id, b)).toBeNull();
    });

    test("takers of one invitation at the same instant: one joins, every other is refused as used", async () => {
      const { w, owner } = await team();
      const inv = invitation(w.id, owner);
      await s().createInvitation(inv);
      const takers = await Promise.all(Array.from({ length: 6 }, () => ctx.newAccount()));
      // A second store (its own connections), both already connected, so the takers really overlap where the store allows it.
      const stores = [s(), await ctx.open()];
      await Promise.all(stores.flatMap((x) => takers.map((t) => x.getMember(w.id, t))));
      const results = await Promise.all(takers.map((t, i) => stores[i % 2]!.acceptInvitation(inv.tokenHash, t, T0)));
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok)).toEqual(Array(5).fill({ ok: false, reason: "used" }));
      const members = (await s().listMembers(w.id)).map((m) => m.accountId);
      expect(members).toHaveLength(2);
      expect(members.filter((m) => takers.includes(m))).toHaveLength(1);
    });

    test("deleting a workspace deletes everything it holds, and nothing of another workspace", async () => {
      const { w, owner } = await team();
      const member = await ctx.newAccount();
      await s().createInvitation(invitation(w.id, owner, { tokenHash: `t-${member}` }));
      await s().acceptInvitation(`t-${member}`, member, T0);
      const held = await populate(s(), w.id, owner);
      const kept = await populate(s(), owner, owner); // the owner's personal workspace
      const sess = session(member);
      await s().createSession(sess);
      await s().setSessionWorkspace(sess.idHash, w.id);
      expect(await ctx.clicksOf(held.link.id)).toBe(1);
      const audit = (workspaceId: string) => ({
        id: uid(), workspaceId, at: T0, actorAccountId: owner, actorKeyId: null, actorGrantId: null, action: "link.created", targetType: "link",
        targetId: uid(), detail: {},
      });
      await s().appendAudit([audit(w.id), audit(owner)]);

      expect(await s().deleteWorkspace(w.id)).toBe(true);
      expect(await s().getWorkspace(w.id)).toBeNull();
      expect(await s().getLinkById(held.link.id)).toBeNull();
      expect(await ctx.clicksOf(held.link.id)).toBe(0);
      expect(await s().getDomain(held.domain.id)).toBeNull();
      expect(await s().findApiKeyByHash(held.key.keyHash)).toBeNull();
      expect(await s().listWebhookEndpoints(w.id)).toEqual([]);
      expect((await s().listWebhookDeliveries(w.id, held.endpoint.id, 10)).deliveries).toEqual([]);
      expect(await s().listImportJobs(w.id, 10)).toEqual([]);
      expect(await s().listMembers(w.id)).toEqual([]);
      expect(await s().listInvitations(w.id)).toEqual([]);
      expect((await s().listMemberships(member)).map((m) => m.workspace.id)).toEqual([member]);
      expect((await s().getSession(sess.idHash))?.workspaceId).toBeNull();
      expect(await s().listAudit(w.id, { limit: 10 })).toEqual([]);
      expect(await s().listAudit(owner, { limit: 10 })).toHaveLength(1);

      expect(await s().getLinkById(kept.link.id)).toEqual({ ...kept.link, hits: 1 });
      expect(await ctx.clicksOf(kept.link.id)).toBe(1);
      expect(await s().getDomain(kept.domain.id)).toEqual(kept.domain);
      expect(await s().findApiKeyByHash(kept.key.keyHash)).toEqual(kept.key);
      expect(await s().listWebhookEndpoints(owner)).toEqual([kept.endpoint]);
      expect((await s().listWebhookDeliveries(owner, kept.endpoint.id, 10)).deliveries).toHaveLength(1);
      expect(await s().listImportJobs(owner, 10)).toEqual([kept.job]);
      expect(await s().listMemberships(owner)).toHaveLength(1);
      expect(await s().deleteWorkspace(w.id)).toBe(false);
    });
  });
}

/** One of everything a workspace holds, written into `workspaceId`: a link with a click, a domain, a key, a webhook endpoint, an import job. */
async function populate(store: Store, workspaceId: string, by: string) {
  const link = linkFor(workspaceId);
  expect(await store.insertLinks([link])).toEqual([true]);
  await store.recordClicks([click(link.id)]);
  const domain: DomainRecord = {
    id: uid(), accountId: workspaceId, hostname: `go${uid().slice(0, 8)}.example.com`, method: "dns", token: `clink-${uid()}`, state: "pending",
    checkedAt: null, checkOk: null, checkResult: null, verifiedAt: null, rootRedirect: null, notFoundRedirect: null, createdAt: T0, updatedAt: T0,
  };
  expect(await store.createDomain(domain)).toBe(true);
  const key: ApiKeyRecord = {
    id: uid(), accountId: workspaceId, createdBy: by, name: "ci", keyHash: `hash-${uid()}`, prefix: "ck_AbC1", createdAt: T0,
    lastUsedAt: null, revokedAt: null, scopes: null,
  };
  await store.createApiKey(key);
  const endpoint: WebhookEndpoint = {
    id: uid(), accountId: workspaceId, url: "https://hooks.example.com/in", secret: "whsec_c2VjcmV0", events: ["link.created"], active: true,
    createdAt: T0, updatedAt: T0,
  };
  await store.createWebhookEndpoint(endpoint);
  const event = { id: uid(), type: "link.created" as const, accountId: workspaceId, linkId: link.id, payload: "{}", at: T0, giveUpAt: T0 + HOUR };
  expect(await store.enqueueWebhookEvents([event])).toBe(1);
  const job: ImportJob = {
    id: uid(), accountId: workspaceId, format: "bitly", onConflict: "skip", fileName: null, status: "queued", totalRows: 0, progress: 0,
    counts: { created: 0, skipped: 0, renamed: 0, failed: 0 }, rows: [], error: null, createdAt: T0, updatedAt: T0, finishedAt: null,
  };
  await store.createImportJob(job);
  return { link, domain, key, endpoint, job };
}

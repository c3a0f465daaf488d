/**
 * Workspaces, members and invitations (issue #24, docs/teams.md): one function per operation, called by REST and
 * the dashboard alike. Operations on "the caller's workspace" take a Caller (its role is checked here); what a
 * person does for themselves (make a workspace, list theirs, switch the session, accept an invitation) takes the
 * account. Every membership change is published on MEMBERSHIP_CHANGED_CHANNEL, so every process forgets the callers
 * it cached (keys, access tokens), and a removed member's keys are revoked there too: within a second, in both modes.
 */
import { isOneOf, ROLES, type Role } from "../../shared/enums.ts";
import { AppError, invalidInput } from "../../shared/errors.ts";
import { newId, newToken, sha256Hex } from "../../shared/ids.ts";
import { linkKey } from "../../shared/link.ts";
import {
  DOMAINS_CHANGED_CHANNEL, MEMBERSHIP_CHANGED_CHANNEL, type InvitationRecord, type MemberRecord, type Membership, type Session, type WorkspaceRecord,
} from "../../shared/ports.ts";
import { linkDomainOf, liveDefaultDomain } from "../domains/service.ts";
import { schemaErrors } from "../../shared/validation.ts";
import { recordAudit } from "../audit/service.ts";
import { requireRole } from "../auth/roles.ts";
import type { Caller, Deps } from "../deps.ts";
import { publishKeyRevocations } from "../keys/service.ts";
import { membershipMessage } from "./membership-events.ts";
import {
  INVITATION_DEFAULT_DAYS, InvitationInput, invitationState, RoleInput, toInvitationObject, toMemberObject, toWorkspaceObject, WorkspaceUpdateInput,
  type CreatedInvitation, type InvitationObject, type MemberObject, type WorkspaceObject,
} from "./model.ts";

const DAY_MS = 86_400_000;
/** Invitations waiting to be taken in one workspace: plenty for a team, and a bound on what a key can pile up. */
export const MAX_PENDING_INVITATIONS = 100;
/**
 * Shared workspaces one account may own: enough for any team structure, and a bound on what one account can make
 * the store and every member's switcher carry (no account's use may burden another's).
 */
export const MAX_OWNED_WORKSPACES = 20;
/** Where an invitation's link leads: the dashboard's acceptance page (a signed-in person takes it there). */
export const INVITATION_PATH = "/dashboard/invitations/";
/** An invitation token: 32 base62 characters (shared/ids.ts newToken). */
const TOKEN_SHAPE = /^[A-Za-z0-9]{32}$/;

function objectOf(raw: unknown): Record<string, unknown> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw invalidInput([{ path: "/", message: "must be an object" }]);
  return raw as Record<string, unknown>;
}

/** The fields of a workspace's update (PATCH): `name` trimmed, refused blank; at least one field. */
function updateOf(raw: unknown): { name?: string; defaultDomain?: unknown } {
  const body = objectOf(raw);
  const errors = schemaErrors(WorkspaceUpdateInput, body);
  const name = typeof body.name === "string" ? body.name.trim() : undefined;
  if (!errors.length && name === "") errors.push({ path: "/name", message: "must not be blank" });
  if (errors.length) throw invalidInput(errors);
  return { name, defaultDomain: body.defaultDomain };
}

function nameOf(raw: unknown): string {
  const { name } = updateOf(raw);
  if (name === undefined) throw invalidInput([{ path: "/name", message: "is required" }]);
  return name;
}

/**
 * The hostname a workspace's default domain is set to: null for null, "" or the base host; else a verified domain of
 * the caller's workspace, anything else (unknown, pending, another workspace's) being unknown_domain.
 */
async function defaultDomainOf(deps: Deps, caller: Caller, given: unknown): Promise<string | null> {
  try {
    const hostname = await linkDomainOf(deps, caller, given, "/defaultDomain", deps.config.defaultDomain);
    return hostname === deps.config.defaultDomain ? null : hostname;
  } catch (e) {
    if (!(e instanceof AppError) || e.code !== "invalid_input") throw e;
  }
  const message = "must be a verified domain of this workspace, or null for the base domain";
  throw new AppError("unknown_domain", `defaultDomain: "${String(given).slice(0, 300)}" ${message}`, { errors: [{ path: "/defaultDomain", message }] });
}

/** A membership as the API shows it: its default domain only while live (liveDefaultDomain; one read when one is set). */
async function shown(deps: Deps, m: Membership): Promise<WorkspaceObject> {
  const defaultDomain = await liveDefaultDomain(deps, m.workspace);
  return toWorkspaceObject({ ...m, workspace: { ...m.workspace, defaultDomain } });
}

/** Tells every process that who may act for `workspaceId` changed: cached callers are forgotten (keys/service.ts, oauth/verifier.ts). */
export function membershipChanged(deps: Deps, workspaceId: string, accountId: string): Promise<void> {
  return deps.hot.publish(MEMBERSHIP_CHANGED_CHANNEL, membershipMessage(workspaceId, accountId)).catch(() => {});
}

/** The role of `accountId` in `workspaceId`, or null when not a member (or the workspace is gone). */
export async function roleIn(deps: Deps, workspaceId: string, accountId: string): Promise<Role | null> {
  return (await deps.store.getMember(workspaceId, accountId))?.role ?? null;
}

async function workspaceOf(deps: Deps, caller: Caller): Promise<WorkspaceRecord> {
  const w = await deps.store.getWorkspace(caller.workspaceId);
  if (!w) throw new AppError("not_found", "This workspace no longer exists");
  return w;
}

// --- What a person does for themselves -------------------------------------------------------------------------

/** The workspaces the account belongs to, personal first, then by name, each with the account's role. */
export async function listMyWorkspaces(deps: Deps, accountId: string): Promise<WorkspaceObject[]> {
  return Promise.all((await deps.store.listMemberships(accountId)).map((m) => shown(deps, m)));
}

/** A shared workspace, with the account that makes it as its owner. */
export async function createWorkspace(deps: Deps, accountId: string, raw: unknown): Promise<WorkspaceObject> {
  const name = nameOf(raw);
  const owned = (await deps.store.listMemberships(accountId)).filter((m) => m.role === "owner" && m.workspace.personalOf === null).length;
  if (owned >= MAX_OWNED_WORKSPACES) {
    throw invalidInput([{ path: "/", message: `an account can own at most ${MAX_OWNED_WORKSPACES} shared workspaces` }], `You own ${MAX_OWNED_WORKSPACES} shared workspaces, the most one account can; delete or hand one over first`);
  }
  const w: WorkspaceRecord = { id: `ws_${newId()}`, name, personalOf: null, defaultDomain: null, createdAt: deps.now() };
  if (!(await deps.store.createWorkspace(w, accountId))) throw new AppError("internal", "A new workspace id was taken; try again");
  await recordAudit(deps, { workspaceId: w.id, accountId }, "workspace.created", { type: "workspace", id: w.id }, { name });
  return toWorkspaceObject({ workspace: w, role: "owner" });
}

/**
 * Makes the session act for `workspaceId` (the dashboard's switcher), which the account must belong to; otherwise
 * not_found, as for a workspace that does not exist (no existence leaks). Its own personal workspace is stored as null.
 */
export async function switchWorkspace(deps: Deps, session: Session, workspaceId: unknown): Promise<WorkspaceObject> {
  const id = typeof workspaceId === "string" && workspaceId.length <= 100 ? workspaceId : "";
  const membership = (await deps.store.listMemberships(session.accountId)).find((m) => m.workspace.id === id);
  if (!membership) throw new AppError("not_found", `No workspace "${String(workspaceId).slice(0, 100)}" of yours`);
  await deps.store.setSessionWorkspace(session.idHash, id === session.accountId ? null : id);
  return shown(deps, membership);
}

const REFUSALS = {
  unknown: () => new AppError("not_found", "No such invitation: check the link"),
  expired: () => new AppError("invitation_expired", "This invitation has expired; ask for a new one"),
  used: () => new AppError("invitation_used", "This invitation has already been used; each link works once"),
  revoked: () => new AppError("invitation_revoked", "This invitation was revoked"),
  already_member: () => new AppError("already_member", "You are already a member of this workspace"),
} as const;

/** Takes an invitation (the token of its link) for the signed-in account: single use, before it expires. */
export async function acceptInvitation(deps: Deps, accountId: string, token: unknown): Promise<WorkspaceObject> {
  if (typeof token !== "string" || !TOKEN_SHAPE.test(token)) throw REFUSALS.unknown();
  const r = await deps.store.acceptInvitation(sha256Hex(token), accountId, deps.now());
  if (!r.ok) throw REFUSALS[r.reason]();
  const { invitation } = r;
  await membershipChanged(deps, invitation.workspaceId, accountId);
  const actor = { workspaceId: invitation.workspaceId, accountId };
  await recordAudit(deps, actor, "invitation.accepted", { type: "invitation", id: invitation.id }, { role: invitation.role });
  const membership = (await deps.store.listMemberships(accountId)).find((m) => m.workspace.id === invitation.workspaceId);
  if (!membership) throw REFUSALS.unknown(); // deleted in the instant after it was taken
  return shown(deps, membership);
}

/** What an invitation link offers (the acceptance page, before the Accept button). */
export interface InvitationOffer {
  workspaceName: string;
  role: Role;
  expiresAt: string;
}

/**
 * Names the workspace and role an invitation's token offers, refused as acceptInvitation would refuse it (unknown,
 * expired, used, revoked; already a member when `accountId` is given: null before signing in). Nothing is written.
 */
export async function previewInvitation(deps: Deps, accountId: string | null, token: unknown): Promise<InvitationOffer> {
  if (typeof token !== "string" || !TOKEN_SHAPE.test(token)) throw REFUSALS.unknown();
  const i = await deps.store.findInvitation(sha256Hex(token));
  const w = i ? await deps.store.getWorkspace(i.workspaceId) : null;
  if (!i || !w) throw REFUSALS.unknown();
  const state = invitationState(i, deps.now());
  if (state !== "pending") throw REFUSALS[state]();
  if (accountId !== null && (await deps.store.getMember(w.id, accountId))) throw REFUSALS.already_member();
  return { workspaceName: w.name, role: i.role, expiresAt: new Date(i.expiresAt).toISOString() };
}

// --- The caller's workspace --------------------------------------------------------------------------------------

export async function getWorkspace(deps: Deps, caller: Caller): Promise<WorkspaceObject> {
  return shown(deps, { workspace: await workspaceOf(deps, caller), role: caller.role });
}

/**
 * Renames the workspace and/or sets its default domain (admins and owners): the verified domain of its own that
 * links made without a domain go on, or null for the base domain.
 */
export async function updateWorkspace(deps: Deps, caller: Caller, raw: unknown): Promise<WorkspaceObject> {
  requireRole(caller, "admin", "Changing the workspace");
  const update = updateOf(raw);
  const defaultDomain = update.defaultDomain === undefined ? undefined : await defaultDomainOf(deps, caller, update.defaultDomain);
  const w = await workspaceOf(deps, caller);
  const gone = () => new AppError("not_found", "This workspace no longer exists");
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  if (update.name !== undefined) {
    if (!(await deps.store.renameWorkspace(w.id, update.name))) throw gone();
    changes.name = { from: w.name, to: update.name };
  }
  if (defaultDomain !== undefined) {
    if (!(await deps.store.setDefaultDomain(w.id, defaultDomain))) throw gone();
    changes.defaultDomain = { from: w.defaultDomain, to: defaultDomain };
  }
  await recordAudit(deps, caller, "workspace.updated", { type: "workspace", id: w.id }, changes);
  return shown(deps, { workspace: { ...w, name: update.name ?? w.name, defaultDomain: defaultDomain === undefined ? w.defaultDomain : defaultDomain }, role: caller.role });
}

/**
 * Deletes the caller's workspace and everything in it (owners only; a personal workspace cannot be). Every process
 * forgets its callers, its domains and its cached links, so nothing of it answers afterwards.
 */
export async function deleteWorkspace(deps: Deps, caller: Caller): Promise<void> {
  requireRole(caller, "owner", "Deleting the workspace");
  const w = await workspaceOf(deps, caller);
  if (w.personalOf !== null) throw new AppError("personal_workspace", "A personal workspace cannot be deleted");
  const links = [];
  for (let cursor: string | undefined, more = true; more;) {
    const page = await deps.store.listLinks(w.id, { limit: 500, cursor });
    links.push(...page.links.map((l) => ({ id: l.id, key: linkKey(l.domain, l.slug) })));
    cursor = page.nextCursor ?? undefined;
    more = page.nextCursor !== null;
  }
  if (!(await deps.store.deleteWorkspace(w.id))) throw new AppError("not_found", "This workspace no longer exists");
  await membershipChanged(deps, w.id, "*");
  await deps.hot.publish(DOMAINS_CHANGED_CHANNEL, "changed").catch(() => {});
  for (const l of links) {
    await deps.hot.invalidateLink(l.key).catch(() => {});
    await deps.hot.resetHits(l.id).catch(() => {});
  }
  // The entry is written to the personal workspace of the owner who deleted it: the deleted one's log went with it.
  await recordAudit(deps, { ...caller, workspaceId: caller.accountId }, "workspace.deleted", { type: "workspace", id: w.id }, { name: w.name, links: links.length });
}

// --- Members -----------------------------------------------------------------------------------------------------

export async function listMembers(deps: Deps, caller: Caller): Promise<{ members: MemberObject[] }> {
  const members = await deps.store.listMembers(caller.workspaceId);
  return { members: members.map((m) => toMemberObject(m, m.email)) };
}

async function memberOf(deps: Deps, caller: Caller, accountId: unknown): Promise<MemberRecord> {
  const m = typeof accountId === "string" && accountId.length <= 100 ? await deps.store.getMember(caller.workspaceId, accountId) : null;
  if (!m) throw new AppError("not_found", `No member "${String(accountId).slice(0, 100)}" in this workspace`);
  return m;
}

/** Refuses what would leave the workspace without an owner, or its personal owner out of it. */
async function keepOwner(deps: Deps, w: WorkspaceRecord, target: MemberRecord, what: string): Promise<void> {
  if (w.personalOf === target.accountId) throw new AppError("personal_workspace", `${what}: a personal workspace always keeps its own account as owner`);
  if (target.role !== "owner") return;
  const owners = (await deps.store.listMembers(w.id)).filter((m) => m.role === "owner").length;
  if (owners <= 1) throw new AppError("last_owner", `${what}: this is the workspace's last owner; make another member owner first`);
}

/**
 * Writes a member's role. Two owners demoting (or removing) each other at once both pass keepOwner: one that finds no
 * owner left after its write undoes it (last_owner), so a workspace always keeps one.
 */
async function setRole(deps: Deps, workspaceId: string, target: MemberRecord, role: Role, what: string): Promise<void> {
  if (!(await deps.store.setMemberRole(workspaceId, target.accountId, role))) throw new AppError("not_found", `No member "${target.accountId}" in this workspace`);
  if (target.role === "owner" && role !== "owner" && !(await deps.store.listMembers(workspaceId)).some((m) => m.role === "owner")) {
    await deps.store.setMemberRole(workspaceId, target.accountId, "owner");
    throw new AppError("last_owner", `${what}: this is the workspace's last owner; make another member owner first`);
  }
}

/** Changes a member's role (admins and owners; only owners make or unmake owners; the last owner stays one). */
export async function changeMemberRole(deps: Deps, caller: Caller, accountId: unknown, raw: unknown): Promise<MemberObject> {
  requireRole(caller, "admin", "Changing a member's role");
  const body = objectOf(raw);
  const errors = schemaErrors(RoleInput, body);
  if (errors.length || !isOneOf(ROLES, body.role)) throw invalidInput(errors);
  const role = body.role;
  const [w, target] = [await workspaceOf(deps, caller), await memberOf(deps, caller, accountId)];
  if (target.role === role) return toMemberObject(target, (await deps.store.getAccount(target.accountId))?.email ?? null);
  if (target.role === "owner" || role === "owner") requireRole(caller, "owner", "Making or unmaking an owner");
  if (target.role === "owner") await keepOwner(deps, w, target, "Demoting this owner");
  await setRole(deps, w.id, target, role, "Demoting this owner");
  await membershipChanged(deps, w.id, target.accountId);
  await recordAudit(deps, caller, "member.role_changed", { type: "member", id: target.accountId }, { from: target.role, to: role });
  return toMemberObject({ ...target, role }, (await deps.store.getAccount(target.accountId))?.email ?? null);
}

/**
 * Removes a member (admins and owners; only owners remove owners), or the caller leaves (`accountId` is their own:
 * any role). The last owner cannot leave or be removed. The member's keys in the workspace are revoked and their
 * sessions there fall back to their personal workspace, in every process.
 */
export async function removeMember(deps: Deps, caller: Caller, accountId: unknown): Promise<void> {
  const leaving = accountId === caller.accountId;
  if (!leaving) requireRole(caller, "admin", "Removing a member");
  const [w, target] = [await workspaceOf(deps, caller), await memberOf(deps, caller, accountId)];
  if (!leaving && target.role === "owner") requireRole(caller, "owner", "Removing an owner");
  const what = leaving ? "Leaving" : "Removing this member";
  await keepOwner(deps, w, target, what);
  // An owner stops being one first, so that two owners leaving at once cannot both go (setRole).
  if (target.role === "owner") await setRole(deps, w.id, target, "admin", what);
  const r = await deps.store.removeMember(w.id, target.accountId, deps.now());
  if (!r.removed) throw new AppError("not_found", `No member "${target.accountId}" in this workspace`);
  await publishKeyRevocations(deps, r.revokedKeyHashes);
  await membershipChanged(deps, w.id, target.accountId);
  await recordAudit(deps, caller, "member.removed", { type: "member", id: target.accountId }, { role: target.role, left: leaving, keysRevoked: r.revokedKeyHashes.length });
}

/** The caller leaves its workspace (removeMember of themselves). */
export const leaveWorkspace = (deps: Deps, caller: Caller): Promise<void> => removeMember(deps, caller, caller.accountId);

// --- Invitations -------------------------------------------------------------------------------------------------

/**
 * An invitation by link (admins and owners; only owners invite owners): the link carries a random token, shown in
 * this answer only (its SHA-256 is kept), valid once, for `expiresInDays` (7 unless given, at most 30).
 */
export async function createInvitation(deps: Deps, caller: Caller, raw: unknown): Promise<CreatedInvitation> {
  requireRole(caller, "admin", "Inviting people");
  const body = objectOf(raw ?? {});
  const errors = schemaErrors(InvitationInput, body);
  if (errors.length) throw invalidInput(errors);
  const role = (body.role as Role | undefined) ?? "member";
  if (role === "owner") requireRole(caller, "owner", "Inviting an owner");
  const w = await workspaceOf(deps, caller);
  const now = deps.now();
  const pending = (await deps.store.listInvitations(w.id)).filter((i) => invitationState(i, now) === "pending").length;
  if (pending >= MAX_PENDING_INVITATIONS) {
    throw invalidInput([{ path: "/", message: `a workspace can have at most ${MAX_PENDING_INVITATIONS} pending invitations` }], `This workspace has ${MAX_PENDING_INVITATIONS} pending invitations; revoke some first`);
  }
  const token = newToken();
  const i: InvitationRecord = {
    id: `inv_${newId()}`, workspaceId: w.id, tokenHash: sha256Hex(token), role, createdBy: caller.accountId, createdAt: now,
    expiresAt: now + ((body.expiresInDays as number | undefined) ?? INVITATION_DEFAULT_DAYS) * DAY_MS, usedAt: null, usedBy: null, revokedAt: null,
  };
  await deps.store.createInvitation(i);
  await recordAudit(deps, caller, "invitation.created", { type: "invitation", id: i.id }, { role, expiresAt: new Date(i.expiresAt).toISOString() });
  return { ...toInvitationObject(i, now), url: `${deps.config.baseUrl}${INVITATION_PATH}${token}` };
}

/** The workspace's invitations (admins and owners), newest first, with their state now. */
export async function listInvitations(deps: Deps, caller: Caller): Promise<{ invitations: InvitationObject[] }> {
  requireRole(caller, "admin", "Seeing invitations");
  const now = deps.now();
  return { invitations: (await deps.store.listInvitations(caller.workspaceId)).map((i) => toInvitationObject(i, now)) };
}

/** Revokes a pending invitation (admins and owners); its link stops working. */
export async function revokeInvitation(deps: Deps, caller: Caller, id: unknown): Promise<void> {
  requireRole(caller, "admin", "Revoking an invitation");
  const now = deps.now();
  const pending = typeof id === "string" && (await deps.store.listInvitations(caller.workspaceId)).some((i) => i.id === id && invitationState(i, now) === "pending");
  if (!pending || !(await deps.store.revokeInvitation(caller.workspaceId, id, now))) throw new AppError("not_found", `No pending invitation "${String(id).slice(0, 100)}" in this workspace`);
  await recordAudit(deps, caller, "invitation.revoked", { type: "invitation", id });
}

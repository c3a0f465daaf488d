/**
 * The Members page (issue #24, docs/teams.md): who belongs to the workspace with their role and when they joined;
 * for admins and owners, each member's role changed or the member removed, invitations made by link (role, days
 * valid) and the pending ones revoked. The service decides who may do what (only owners touch owners, the last
 * owner stays); this page offers only what the viewer's role can do and shows a refusal on the page. A new
 * invitation's link is handed to the page after the redirect once, as a new API key is (new-key-handoff.ts).
 */
import { ROLES, type Role } from "../../shared/enums.ts";
import { AppError } from "../../shared/errors.ts";
import { roleAtLeast } from "../auth/roles.ts";
import { INVITATION_DEFAULT_DAYS, INVITATION_MAX_DAYS, type InvitationObject, type MemberObject } from "../workspaces/model.ts";
import { changeMemberRole, createInvitation, getWorkspace, listInvitations, listMembers, removeMember, revokeInvitation } from "../workspaces/service.ts";
import { errorSummary, fieldProblems, invalidAttrs, type FieldRefs, type FormProblem } from "./form-errors.ts";
import { field, htmlResponse, redirect } from "./http.ts";
import { csrfField, esc, flashBox, fmtDate, layout } from "./layout.ts";
import { handOffCookie, takeNewKey, type NewKey } from "./new-key-handoff.ts";
import type { FormCtx, SignedInCtx } from "./session.ts";

/** What each role may do, in a person's words (control/auth/roles.ts decides it). */
export const ROLE_WORDS: Record<Role, string> = {
  viewer: "sees links and analytics",
  member: "also creates and edits links",
  admin: "also manages domains, webhooks, every key and the members",
  owner: "also manages owners and can delete the workspace",
};

const INVITE_FIELDS: FieldRefs = { "/role": { label: "Role", id: "inv-role" }, "/expiresInDays": { label: "Valid for", id: "inv-days" } };

/** The refusals shown on the page as the form's problem (a role rule, a bad field); others are error pages. */
const FORM_REFUSALS = new Set(["invalid_input", "last_owner", "personal_workspace", "forbidden_role"]);

interface MembersView {
  flash?: string | null;
  /** The invitation made just now (its link in `key`), once. */
  created?: NewKey | null;
  error?: FormProblem;
  inviteError?: FormProblem;
  invite?: { role: string; days: string };
}

/** The roles a caller may give: every role for an owner, all but owner for an admin. */
const assignable = (role: Role): readonly Role[] => (role === "owner" ? ROLES : ROLES.filter((r) => r !== "owner"));

const roleOptions = (roles: readonly Role[], chosen: string) =>
  roles.map((r) => `<option value="${r}"${r === chosen ? " selected" : ""}>${r}</option>`).join("");

/** `personal`: the workspace is the viewer's personal one, which cannot be left. */
function memberRow(ctx: SignedInCtx, m: MemberObject, personal: boolean): string {
  const csrf = csrfField(ctx.session.csrfToken);
  const me = m.accountId === ctx.account.id;
  const who = `${esc(m.email ?? "(deleted account)")}${me ? ' <span class="status">you</span>' : ""}`;
  const manage = roleAtLeast(ctx.caller.role, "admin") && !me && (m.role !== "owner" || ctx.caller.role === "owner");
  const path = `/dashboard/members/${encodeURIComponent(m.accountId)}`;
  const selectId = `role-${m.accountId}`;
  const role = manage
    ? `<form method="post" action="${path}/role" class="rolerow">${csrf}<label class="sr-only" for="${esc(selectId)}">Role of ${esc(m.email ?? m.accountId)}</label><select id="${esc(selectId)}" name="role">${roleOptions(assignable(ctx.caller.role), m.role)}</select><button type="submit" class="btn-small">Change</button></form>`
    : m.role;
  const actions = manage
    ? `<form method="post" action="${path}/remove" class="inline" data-confirm="Remove ${esc(m.email ?? m.accountId)} from the workspace? The keys they made in it are revoked.">${csrf}<button type="submit" class="btn-danger btn-small">Remove</button></form>`
    : me && !personal ? `<a href="/dashboard/workspace">Leave…</a>` : "";
  return `<tr><td data-label="Member">${who}</td><td data-label="Role">${role}</td><td data-label="Joined">${fmtDate(m.joinedAt)}</td><td>${actions}</td></tr>`;
}

function inviteForm(ctx: SignedInCtx, v: MembersView): string {
  const errors = v.inviteError?.errors ?? [];
  const role = v.invite?.role ?? "member";
  return `<form method="post" action="/dashboard/members/invitations" class="card" aria-labelledby="invite-title">${csrfField(ctx.session.csrfToken)}
<h2 id="invite-title">Invite someone</h2>${v.inviteError ? errorSummary(v.inviteError, INVITE_FIELDS) : ""}
<p class="muted small">You get a link to send them (no email is sent). It works once, until it expires; they sign in or create an account to accept.</p>
<div class="grid"><div><label for="inv-role">Role</label><select id="inv-role" name="role"${invalidAttrs(errors, "/role", "inv-role")}>${roleOptions(assignable(ctx.caller.role), role)}</select>${fieldProblems(errors, "/role", INVITE_FIELDS["/role"])}</div>
<div><label for="inv-days">Valid for <span class="hint">(days, 1-${INVITATION_MAX_DAYS})</span></label><input id="inv-days" name="expiresInDays" type="number" inputmode="numeric" min="1" max="${INVITATION_MAX_DAYS}" required value="${esc(v.invite?.days ?? String(INVITATION_DEFAULT_DAYS))}"${invalidAttrs(errors, "/expiresInDays", "inv-days")}>${fieldProblems(errors, "/expiresInDays", INVITE_FIELDS["/expiresInDays"])}</div></div>
<p class="small muted">${ROLES.map((r) => `<strong>${r}</strong> ${esc(ROLE_WORDS[r])}`).join("; ")}.</p>
<div class="actions"><button type="submit" class="btn-primary">Create invitation link</button></div></form>`;
}

function invitationRow(ctx: SignedInCtx, i: InvitationObject): string {
  return `<tr><td data-label="Role">${i.role}</td><td data-label="Created">${fmtDate(i.createdAt)}</td><td data-label="Expires">${fmtDate(i.expiresAt)}</td>
<td><form method="post" action="/dashboard/members/invitations/${encodeURIComponent(i.id)}/revoke" class="inline" data-confirm="Revoke this invitation? Its link stops working.">${csrfField(ctx.session.csrfToken)}<button type="submit" class="btn-danger btn-small">Revoke</button></form></td></tr>`;
}

/** The invitation made just now, once: its link to copy. */
function createdBox(created: NewKey): string {
  return `<section class="once" aria-labelledby="new-invite-title">
<h2 id="new-invite-title">Invitation link for a new ${esc(created.name)}</h2>
<p><strong>Copy it now: you will not see it again.</strong> Send it to the person you invite; it works once. If it is lost, revoke it and make another.</p>
<div class="copyrow"><input id="new-invite" class="mono" readonly value="${esc(created.key)}" aria-label="Invitation link">
<button type="button" class="btn-primary" data-copy="${esc(created.key)}">Copy</button></div></section>`;
}

async function membersPage(ctx: SignedInCtx, status: number, v: MembersView, setCookie: string[] = []): Promise<Response> {
  const w = await getWorkspace(ctx.deps, ctx.caller);
  const { members } = await listMembers(ctx.deps, ctx.caller);
  const admin = roleAtLeast(ctx.caller.role, "admin");
  const pending = admin ? (await listInvitations(ctx.deps, ctx.caller)).invitations.filter((i) => i.state === "pending") : [];
  const invitations = !admin ? "" : pending.length
    ? `<h2>Pending invitations</h2><table class="responsive"><thead><tr><th>Role</th><th>Created</th><th>Expires</th><th><span class="sr-only">Actions</span></th></tr></thead><tbody>${pending.map((i) => invitationRow(ctx, i)).join("")}</tbody></table>`
    : `<h2>Pending invitations</h2><p class="muted">No pending invitations.</p>`;
  const body = `<div class="head"><h1>Members of ${esc(w.name)}</h1><a href="/dashboard/workspace">Workspace settings</a></div>
${flashBox(v.flash ?? null)}${v.error ? errorSummary(v.error) : ""}${v.created ? createdBox(v.created) : ""}
${w.personal ? `<p class="muted">This is a personal workspace. To share links with a team apart from your own, <a href="/dashboard/workspaces/new">create a workspace</a> and invite them there.</p>` : ""}
<table class="responsive"><thead><tr><th>Member</th><th>Role</th><th>Joined</th><th><span class="sr-only">Actions</span></th></tr></thead><tbody>${members.map((m) => memberRow(ctx, m, w.personal)).join("")}</tbody></table>
${admin ? inviteForm(ctx, v) + invitations : ""}
${!admin ? `<p class="small muted">Your role: ${ctx.caller.role}. Admins and owners manage the members and invitations.</p>` : ""}`;
  return htmlResponse(status, layout({ title: "Members", body, viewer: ctx.viewer }), { "set-cookie": setCookie });
}

/** The list; right after an invitation was made (and only then), its link, once. */
export async function membersIndex(ctx: SignedInCtx): Promise<Response> {
  const { created, setCookie } = await takeNewKey(ctx, "invitation");
  return membersPage(ctx, 200, { flash: ctx.url.searchParams.get("flash"), created }, setCookie);
}

/** Runs `act`; a refusal that belongs to the page shows it again with the problem on top, anything else is thrown. */
async function onMembers(ctx: SignedInCtx, act: () => Promise<Response>, view: (p: FormProblem) => MembersView = (error) => ({ error })): Promise<Response> {
  try {
    return await act();
  } catch (e) {
    if (!(e instanceof AppError) || !FORM_REFUSALS.has(e.code)) throw e;
    // A role refusal keeps its own 403 page when the viewer could not have seen the form at all (a forged post).
    if (e.code === "forbidden_role" && !roleAtLeast(ctx.caller.role, "admin")) throw e;
    return membersPage(ctx, e.status, view({ detail: e.message, errors: e.errors ?? [] }));
  }
}

export const changeRoleAction = ({ ctx, form }: FormCtx<SignedInCtx>): Promise<Response> =>
  onMembers(ctx, async () => {
    await changeMemberRole(ctx.deps, ctx.caller, ctx.params.accountId, { role: field(form, "role") });
    return redirect("/dashboard/members?flash=role-changed");
  });

export const removeMemberAction = ({ ctx }: FormCtx<SignedInCtx>): Promise<Response> =>
  onMembers(ctx, async () => {
    await removeMember(ctx.deps, ctx.caller, ctx.params.accountId);
    return redirect(ctx.params.accountId === ctx.account.id ? "/dashboard/links?flash=workspace-left" : "/dashboard/members?flash=member-removed");
  });

/** Makes the invitation and redirects to the list, which shows its link once. */
export const createInvitationAction = ({ ctx, form }: FormCtx<SignedInCtx>): Promise<Response> => {
  const invite = { role: field(form, "role"), days: field(form, "expiresInDays") };
  return onMembers(ctx, async () => {
    // A number field posts text: a whole number goes to the service as one, anything else as typed (refused there).
    const days = /^\d{1,3}$/.test(invite.days.trim()) ? Number(invite.days.trim()) : invite.days;
    const made = await createInvitation(ctx.deps, ctx.caller, { role: invite.role, expiresInDays: days });
    return redirect("/dashboard/members", [handOffCookie(ctx, { kind: "invitation", id: made.id, name: made.role, key: made.url })]);
  }, (inviteError) => ({ inviteError, invite }));
};

export const revokeInvitationAction = ({ ctx }: FormCtx<SignedInCtx>): Promise<Response> =>
  onMembers(ctx, async () => {
    await revokeInvitation(ctx.deps, ctx.caller, ctx.params.id);
    return redirect("/dashboard/members?flash=invitation-revoked");
  });

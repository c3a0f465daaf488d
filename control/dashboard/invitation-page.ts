/**
 * Taking an invitation (issue #24): its link, /dashboard/invitations/{token} (INVITATION_PATH), names the workspace
 * and the role offered. Signed out, the page offers to sign in or create an account and come back here (`next`);
 * signed in, an Accept button posts here, the person joins (workspaces/service.ts acceptInvitation) and the session
 * switches to the workspace. A link that no longer works says why in words, with what to do.
 */
import type { Role } from "../../shared/enums.ts";
import { AppError } from "../../shared/errors.ts";
import { acceptInvitation, INVITATION_PATH, previewInvitation, switchWorkspace, type InvitationOffer } from "../workspaces/service.ts";
import { htmlResponse, redirect } from "./http.ts";
import { csrfField, esc, fmtDate, layout, type Viewer } from "./layout.ts";
import { ROLE_WORDS } from "./members-page.ts";
import { signedIn, type FormCtx, type RequestCtx, type SignedInCtx } from "./session.ts";

/** Why a link does not work, as a page: its title, what happened and what to do. */
const REFUSED: Record<string, { status: number; title: string; text: string }> = {
  not_found: { status: 404, title: "Invitation not found", text: "This invitation link is not valid. Check that it was copied whole, or ask the person who invited you for a new one." },
  invitation_expired: { status: 410, title: "Invitation expired", text: "This invitation link has expired. Ask the person who invited you for a new one." },
  invitation_used: { status: 409, title: "Invitation already used", text: "This invitation link has already been used: each link works once. Ask the person who invited you for a new one." },
  invitation_revoked: { status: 410, title: "Invitation revoked", text: "This invitation was withdrawn by the workspace. Ask the person who invited you if you still need access." },
  already_member: { status: 409, title: "Already a member", text: "You already belong to this workspace: choose it in the workspace menu at the top of the page." },
};

const article = (role: Role) => (role === "admin" || role === "owner" ? "an" : "a");

function refusedPage(e: unknown, viewer?: Viewer): Response {
  const r = e instanceof AppError && Object.hasOwn(REFUSED, e.code) ? REFUSED[e.code] : undefined;
  if (!r) throw e;
  const body = `<h1>${esc(r.title)}</h1><p>${esc(r.text)}</p><p><a href="/dashboard">Go to the dashboard</a></p>`;
  return htmlResponse(r.status, layout({ title: r.title, body, viewer, narrow: !viewer }));
}

function offerText(offer: InvitationOffer): string {
  return `<p>You are invited to join <strong>${esc(offer.workspaceName)}</strong> as ${article(offer.role)} <strong>${offer.role}</strong> (${esc(ROLE_WORDS[offer.role])}).</p>
<p class="small muted">The invitation is valid until ${fmtDate(offer.expiresAt)}.</p>`;
}

const tokenOf = (ctx: RequestCtx) => ctx.params.token ?? "";

/** The offer: with an Accept button when signed in, else the way to sign in or sign up and come back. */
export async function invitationPage(ctx: RequestCtx): Promise<Response> {
  const s = await signedIn(ctx);
  const here = `${INVITATION_PATH}${encodeURIComponent(tokenOf(ctx))}`;
  let offer: InvitationOffer;
  try {
    offer = await previewInvitation(ctx.deps, s?.account.id ?? null, tokenOf(ctx));
  } catch (e) {
    return refusedPage(e, s?.viewer);
  }
  const title = `Join ${offer.workspaceName}`;
  const next = encodeURIComponent(here);
  const act = s
    ? `<form method="post" action="${esc(here)}" class="actions">${csrfField(s.session.csrfToken)}<button type="submit" class="btn-primary">Accept and join</button><a href="/dashboard">Not now</a></form>
<p class="small muted">Signed in as ${esc(s.account.email)}. Not you? Sign out from the top of the page, then open the link again.</p>`
    : `<div class="actions"><a class="btn btn-primary" href="/dashboard/signin?next=${next}">Sign in to accept</a><a class="btn" href="/dashboard/signup?next=${next}">Create an account</a></div>`;
  const body = `<h1>${esc(title)}</h1><div class="card">${offerText(offer)}${act}</div>`;
  return htmlResponse(200, layout({ title, body, viewer: s?.viewer, narrow: !s }));
}

/** Accept: the person joins with the invitation's role and acts for the workspace from the next page on. */
export async function acceptInvitationAction({ ctx }: FormCtx<SignedInCtx>): Promise<Response> {
  try {
    const joined = await acceptInvitation(ctx.deps, ctx.account.id, tokenOf(ctx));
    await switchWorkspace(ctx.deps, ctx.session, joined.id);
    return redirect("/dashboard/links?flash=invitation-accepted");
  } catch (e) {
    return refusedPage(e, ctx.viewer);
  }
}

/**
 * The web dashboard at /dashboard (design §6): server-rendered pages over the same service functions as
 * REST and MCP. Every route answers HTML (never problem+json): errors become pages here, once.
 *
 *   GET  /dashboard                      → links or sign-in
 *   GET  /dashboard/signin|signup        POST the same (anonymous CSRF cookie)
 *   POST /dashboard/signout
 *   GET  /dashboard/keys                 POST /dashboard/keys (303; the GET after it shows the key once), POST …/:id/revoke
 *   GET  /dashboard/apps                 connected OAuth applications; POST …/:id/revoke (apps-page.ts)
 *   GET  /dashboard/audit                the workspace's audit log, for admins and owners (audit-page.ts)
 *   GET  /dashboard/authorize            the OAuth consent page; POST the same: allow or deny (control/oauth/consent-page.ts)
 *   GET  /dashboard/links                (q, tag, folder, status, cursor)
 *   GET  /dashboard/links/new            POST /dashboard/links
 *   POST /dashboard/links/bulk           ticked slugs and an action (add-tag, move, pause, archive, delete: confirmed first)
 *   GET  /dashboard/links/export         (format, q, tag, folder, status, state) the API's link export behind the session
 *   GET  /dashboard/links/:slug/stats    (range, from, to, interval, bots, a filter per dimension)  GET …/qr.svg
 *   GET  /dashboard/links/:slug/clicks.csv   (from, to) the link's clicks, the API's export behind the session
 *   GET  /dashboard/analytics            the account overview, same query as a link's stats, also tag/folder filters
 *   GET  /dashboard/analytics/clicks.csv (from, to) every click of the account
 *   GET  /dashboard/links/:slug/edit     POST the same
 *   GET  /dashboard/links/:slug/delete   POST the same
 *   GET  /dashboard/imports              POST the same (multipart upload, 303 to the job)   GET …/:id (control/imports/dashboard.ts)
 *   POST /dashboard/links/:slug/webhook/resume   resumes a paused webhook
 *   GET  /dashboard/webhooks             POST the same (303; the GET after it shows the secret once)
 *   GET  /dashboard/webhooks/:id         the delivery log; POST …/active, …/delete, …/deliveries/:deliveryId/retry
 *   GET  /dashboard/domains              POST the same (add); POST …/:id/verify, …/:id/delete, …/default (domains-page.ts)
 *   POST /dashboard/workspace/switch     the header's switcher; GET /dashboard/workspaces/new, POST /dashboard/workspaces
 *   GET  /dashboard/workspace            settings; POST …/rename, …/delete, …/leave (workspaces-page.ts)
 *   GET  /dashboard/members              POST …/:accountId/role, …/:accountId/remove, …/invitations, …/invitations/:id/revoke
 *   GET  /dashboard/invitations/:token   the invitation's offer, signed in or not; POST the same: accept (invitation-page.ts)
 *
 * Every POST that changes something answers 303 to a page (POST-redirect-GET: a reload repeats nothing); a form
 * that is refused comes back with its problems (form-errors.ts) and nothing done.
 */
import { Elysia } from "elysia";
import { AppError, problemResponse, toAppError } from "../../shared/errors.ts";
import { requireScope } from "../auth/scopes.ts";
import type { Caller, Deps } from "../deps.ts";
import type { KeyAuthenticator } from "../keys/service.ts";
import { INVITATION_PATH } from "../workspaces/service.ts";
import { home, signIn, signInPage, signOut, signUp, signUpPage } from "./auth-pages.ts";
import { createKey, keysIndex, revokeKey } from "./keys-page.ts";
import { appsIndex, revokeApp } from "./apps-page.ts";
import { auditIndex } from "./audit-page.ts";
import { consentDecision, consentPage } from "../oauth/consent-page.ts";
import { errorPage } from "./layout.ts";
import { createLinkAction, deleteLinkAction, deleteLinkPage, editLinkPage, newLinkPage, resumeWebhookAction, updateLinkAction } from "./link-actions.ts";
import { accountClicksCsv, linkClicksCsv } from "./analytics-export.ts";
import { overviewPage } from "./analytics-overview.ts";
import { bulkAction } from "./links-bulk.ts";
import { linksExport, linksIndex } from "./links-page.ts";
import { requestCtx, signedIn, withAnonForm, withSession, withSessionForm, type FormCtx, type RequestCtx, type SignedInCtx } from "./session.ts";
import { serveAsset } from "./static.ts";
import { importJobPage, importsIndex, importUpload } from "../imports/dashboard.ts";
import { createWebhookAction, deleteWebhookAction, retryDeliveryAction, setWebhookActiveAction, webhookPage, webhooksIndex } from "./webhooks-page.ts";
import { qrFile, statsPage } from "./stats-page.ts";
import { addDomainAction, defaultDomainAction, deleteDomainAction, domainsIndex, verifyDomainAction } from "./domains-page.ts";
import { createWorkspaceAction, deleteAction, leaveAction, newWorkspaceForm, renameAction, settingsIndex, switchAction } from "./workspaces-page.ts";
import { changeRoleAction, createInvitationAction, membersIndex, removeMemberAction, revokeInvitationAction } from "./members-page.ts";
import { acceptInvitationAction, invitationPage } from "./invitation-page.ts";

type Handler = (ctx: RequestCtx) => Promise<Response>;

/** What a person sees for an error: the AppError's own words, or nothing internal for a bug. */
async function errorToPage(ctx: RequestCtx, err: unknown): Promise<Response> {
  if (!(err instanceof AppError)) console.error("dashboard error:", err);
  const e = toAppError(err);
  const viewer = (await signedIn(ctx).catch(() => null))?.viewer;
  const headers: Record<string, string> = e.retryAfter !== undefined ? { "retry-after": String(e.retryAfter) } : {};
  switch (e.code) {
    case "not_found":
      return errorPage(404, "Not found", e.message, viewer);
    case "forbidden_role": // the service's refusal of what the person's role in this workspace does not allow
      return errorPage(403, "Not allowed in this workspace", `${e.message}. Ask an admin or owner of the workspace if you need this.`, viewer);
    case "rate_limited":
      return errorPage(429, "Too many requests", e.message, viewer, headers);
    case "unavailable":
      return errorPage(503, "Temporarily unavailable", "Storage is not answering right now. Please try again in a moment.", viewer, headers);
    case "payload_too_large": // a body over its limit is answered the same everywhere
      return problemResponse(e);
    case "internal":
      return errorPage(500, "Something went wrong", "An unexpected error occurred. Please try again.", viewer);
    default:
      return errorPage(e.status, e.code === "invalid_input" ? "Invalid request" : "Request refused", e.message, viewer, headers);
  }
}

/**
 * What changes links needs links:write, as the REST routes ask: a viewer's role does not grant it (403
 * forbidden_role, a page saying so), whatever the form; the link services themselves take any caller.
 */
const writesLinks = (deps: Deps, caller: Caller) => requireScope(caller, "links:write", deps.config.baseUrl, "api");
const linkPage = (deps: Deps, h: (ctx: SignedInCtx) => Promise<Response>) => (ctx: SignedInCtx) => (writesLinks(deps, ctx.caller), h(ctx));
const linkForm = (deps: Deps, h: (f: FormCtx<SignedInCtx>) => Promise<Response>) => (f: FormCtx<SignedInCtx>) => (writesLinks(deps, f.ctx.caller), h(f));

const notFound: Handler = async () => {
  throw new AppError("not_found", "There is no such page in the dashboard.");
};

export function dashboardRoutes(deps: Deps, auth: KeyAuthenticator) {
  const run = (handler: Handler) => async ({ request, params }: { request: Request; params: Record<string, string> }) => {
    const ctx = requestCtx(deps, request, params);
    try {
      return await handler(ctx);
    } catch (err) {
      return errorToPage(ctx, err);
    }
  };
  return new Elysia({ name: "dashboard" })
    .get("/dashboard", run(home))
    .get("/dashboard/static/:file", ({ params }) => serveAsset(params.file))
    .get("/dashboard/signin", run(signInPage))
    .post("/dashboard/signin", run(withAnonForm(signIn)))
    .get("/dashboard/signup", run(signUpPage))
    .post("/dashboard/signup", run(withAnonForm(signUp)))
    .post("/dashboard/signout", run(withSessionForm(signOut)))
    .get("/dashboard/keys", run(withSession(keysIndex)))
    .post("/dashboard/keys", run(withSessionForm(createKey)))
    .post("/dashboard/keys/:id/revoke", run(withSessionForm(revokeKey(auth))))
    .get("/dashboard/apps", run(withSession(appsIndex)))
    .get("/dashboard/audit", run(withSession(auditIndex)))
    .post("/dashboard/apps/:id/revoke", run(withSessionForm(revokeApp)))
    .get("/dashboard/authorize", run(withSession(consentPage)))
    .post("/dashboard/authorize", run(withSessionForm(consentDecision)))
    .get("/dashboard/links", run(withSession(linksIndex)))
    .post("/dashboard/links", run(withSessionForm(linkForm(deps, createLinkAction))))
    .get("/dashboard/links/new", run(withSession(linkPage(deps, newLinkPage))))
    .get("/dashboard/links/export", run(withSession(linksExport)))
    .post("/dashboard/links/bulk", run(withSessionForm(linkForm(deps, bulkAction))))
    .get("/dashboard/links/:slug/stats", run(withSession(statsPage)))
    .get("/dashboard/links/:slug/qr.svg", run(withSession(qrFile)))
    .get("/dashboard/links/:slug/clicks.csv", run(withSession(linkClicksCsv)))
    .get("/dashboard/analytics", run(withSession(overviewPage)))
    .get("/dashboard/analytics/clicks.csv", run(withSession(accountClicksCsv)))
    .get("/dashboard/links/:slug/edit", run(withSession(linkPage(deps, editLinkPage))))
    .post("/dashboard/links/:slug/edit", run(withSessionForm(linkForm(deps, updateLinkAction))))
    .get("/dashboard/links/:slug/delete", run(withSession(linkPage(deps, deleteLinkPage))))
    .post("/dashboard/links/:slug/delete", run(withSessionForm(linkForm(deps, deleteLinkAction))))
    .post("/dashboard/links/:slug/webhook/resume", run(withSessionForm(linkForm(deps, resumeWebhookAction))))
    .get("/dashboard/webhooks", run(withSession(webhooksIndex)))
    .post("/dashboard/webhooks", run(withSessionForm(createWebhookAction)))
    .get("/dashboard/webhooks/:id", run(withSession(webhookPage)))
    .post("/dashboard/webhooks/:id/active", run(withSessionForm(setWebhookActiveAction)))
    .post("/dashboard/webhooks/:id/delete", run(withSessionForm(deleteWebhookAction)))
    .post("/dashboard/webhooks/:id/deliveries/:deliveryId/retry", run(withSessionForm(retryDeliveryAction)))
    .get("/dashboard/domains", run(withSession(domainsIndex)))
    .post("/dashboard/domains", run(withSessionForm(addDomainAction)))
    .post("/dashboard/domains/default", run(withSessionForm(defaultDomainAction)))
    .post("/dashboard/domains/:id/verify", run(withSessionForm(verifyDomainAction)))
    .post("/dashboard/domains/:id/delete", run(withSessionForm(deleteDomainAction)))
    .post("/dashboard/workspace/switch", run(withSessionForm(switchAction)))
    .get("/dashboard/workspaces/new", run(withSession(newWorkspaceForm)))
    .post("/dashboard/workspaces", run(withSessionForm(createWorkspaceAction)))
    .get("/dashboard/workspace", run(withSession(settingsIndex)))
    .post("/dashboard/workspace/rename", run(withSessionForm(renameAction)))
    .post("/dashboard/workspace/delete", run(withSessionForm(deleteAction)))
    .post("/dashboard/workspace/leave", run(withSessionForm(leaveAction)))
    .get("/dashboard/members", run(withSession(membersIndex)))
    .post("/dashboard/members/invitations", run(withSessionForm(createInvitationAction)))
    .post("/dashboard/members/invitations/:id/revoke", run(withSessionForm(revokeInvitationAction)))
    .post("/dashboard/members/:accountId/role", run(withSessionForm(changeRoleAction)))
    .post("/dashboard/members/:accountId/remove", run(withSessionForm(removeMemberAction)))
    .get(`${INVITATION_PATH}:token`, run(invitationPage))
    .post(`${INVITATION_PATH}:token`, run(withSessionForm(acceptInvitationAction)))
    .get("/dashboard/imports", run(withSession(linkPage(deps, importsIndex))))
    .post("/dashboard/imports", run(importUpload))
    .get("/dashboard/imports/:id", run(withSession(importJobPage)))
    .get("/dashboard/*", run(notFound))
    .post("/dashboard/*", run(notFound));
}

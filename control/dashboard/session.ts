/**
 * Who is asking, and may they post this form? Session cookies (accounts/sessions.ts) identify the visitor;
 * every form post must carry the CSRF token of its session (or, before sign-in, of the anonymous CSRF
 * cookie) and, when the browser sends one, an Origin of our own.
 */
import { timingSafeEqual } from "node:crypto";
import { newToken } from "../../shared/ids.ts";
import type { Account, Session } from "../../shared/ports.ts";
import { findSession, SESSION_TTL_MS } from "../accounts/sessions.ts";
import { effectiveScopes } from "../auth/roles.ts";
import { ALL_SCOPES } from "../auth/scopes.ts";
import type { Caller, Deps } from "../deps.ts";
import { listMyWorkspaces, roleIn } from "../workspaces/service.ts";
import { cookie, field, isSecureRequest, parseCookies, readForm, redirect } from "./http.ts";
import { errorPage, type Viewer } from "./layout.ts";

export const SESSION_COOKIE = "clink_session";
/** Double-submit token for the sign-in and sign-up forms, which run before there is a session. */
export const ANON_CSRF_COOKIE = "clink_csrf";
const ANON_CSRF_MAX_AGE = 24 * 3600;

export interface RequestCtx {
  deps: Deps;
  request: Request;
  url: URL;
  params: Record<string, string>;
  cookies: Map<string, string>;
}

export interface SignedInCtx extends RequestCtx {
  session: Session;
  account: Account;
  caller: Caller;
  viewer: Viewer;
}

export interface FormCtx<C extends RequestCtx> {
  ctx: C;
  form: URLSearchParams;
}

export function requestCtx(deps: Deps, request: Request, params: Record<string, string> = {}): RequestCtx {
  return { deps, request, url: new URL(request.url), params, cookies: parseCookies(request.headers.get("cookie")) };
}

export async function signedIn(ctx: RequestCtx): Promise<SignedInCtx | null> {
  const session = await findSession(ctx.deps, ctx.cookies.get(SESSION_COOKIE));
  if (!session) return null;
  const account = await ctx.deps.store.getAccount(session.accountId);
  if (!account) return null;
  const caller = await sessionCaller(ctx.deps, session);
  // The header's switcher: the person's workspaces, with the one acting now (dashboard/layout.ts).
  const workspaces = { currentId: caller.workspaceId, all: await listMyWorkspaces(ctx.deps, account.id) };
  return { ...ctx, session, account, caller, viewer: { email: account.email, csrfToken: session.csrfToken, workspaces } };
}

/**
 * Who a session acts as: its account, in the workspace it switched to (issue #24) with the role read now, so a
 * role change or a removal counts from the next request; a workspace it no longer belongs to falls back to its
 * personal one, where the account is always the owner (workspaces/service.ts never demotes nor removes it).
 */
export async function sessionCaller(deps: Deps, session: Session): Promise<Caller> {
  const chosen = session.workspaceId;
  const role = chosen !== null && chosen !== session.accountId ? await roleIn(deps, chosen, session.accountId) : null;
  const [workspaceId, effective] = role === null ? [session.accountId, "owner" as const] : [chosen!, role];
  return { workspaceId, accountId: session.accountId, role: effective, keyId: null, scopes: effectiveScopes(ALL_SCOPES, effective) };
}

export function sessionCookie(ctx: RequestCtx, token: string): string {
  return cookie(SESSION_COOKIE, token, Math.floor(SESSION_TTL_MS / 1000), isSecureRequest(ctx.deps, ctx.request));
}

export function clearSessionCookie(ctx: RequestCtx): string {
  return cookie(SESSION_COOKIE, "", 0, isSecureRequest(ctx.deps, ctx.request));
}

/** The anonymous CSRF token for this visitor, and the cookie to set when it is new. */
export function anonCsrf(ctx: RequestCtx): { token: string; setCookie: string[] } {
  const existing = ctx.cookies.get(ANON_CSRF_COOKIE);
  if (existing && /^[A-Za-z0-9]{32}$/.test(existing)) return { token: existing, setCookie: [] };
  const token = newToken();
  return { token, setCookie: [cookie(ANON_CSRF_COOKIE, token, ANON_CSRF_MAX_AGE, isSecureRequest(ctx.deps, ctx.request))] };
}

export function tokensMatch(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * A browser's Origin (sent on every cross-site POST) must be ours: the public base URL or the Host the
 * request came to. No Origin at all is allowed (old browsers, curl); the CSRF token still has to match.
 */
export function originAllowed(deps: Deps, request: Request): boolean {
  if (request.headers.get("sec-fetch-site") === "cross-site") return false;
  const origin = request.headers.get("origin");
  if (origin === null) return true;
  if (origin === new URL(deps.config.baseUrl).origin) return true;
  const host = request.headers.get("host");
  return host !== null && (origin === `http://${host}` || origin === `https://${host}`);
}

const forbidden = (viewer?: Viewer) =>
  errorPage(403, "Form refused", "This form could not be verified (it may have expired or come from another site). Reload the page and try again.", viewer);

/** Sends anonymous visitors of a signed-in page to sign in, and back here afterwards. */
export function toSignIn(ctx: RequestCtx): Response {
  const here = ctx.request.method === "GET" ? ctx.url.pathname + ctx.url.search : "/dashboard/links";
  return redirect(`/dashboard/signin?next=${encodeURIComponent(here)}`);
}

type Handler<C> = (ctx: C) => Promise<Response>;

/** A signed-in page. */
export const withSession = (handler: Handler<SignedInCtx>): Handler<RequestCtx> => async (ctx) => {
  const s = await signedIn(ctx);
  return s ? handler(s) : toSignIn(ctx);
};

/** A signed-in form post: the session's CSRF token and our Origin are required. */
export const withSessionForm = (handler: Handler<FormCtx<SignedInCtx>>): Handler<RequestCtx> => async (ctx) => {
  const s = await signedIn(ctx);
  if (!s) return toSignIn(ctx);
  if (!originAllowed(ctx.deps, ctx.request)) return forbidden(s.viewer);
  const form = await readForm(ctx.request);
  if (!tokensMatch(field(form, "_csrf"), s.session.csrfToken)) return forbidden(s.viewer);
  return handler({ ctx: s, form });
};

/** A form posted before sign-in (sign-in, sign-up): the anonymous CSRF cookie and our Origin are required. */
export const withAnonForm = (handler: Handler<FormCtx<RequestCtx>>): Handler<RequestCtx> => async (ctx) => {
  if (!originAllowed(ctx.deps, ctx.request)) return forbidden();
  const form = await readForm(ctx.request);
  if (!tokensMatch(field(form, "_csrf"), ctx.cookies.get(ANON_CSRF_COOKIE))) return forbidden();
  return handler({ ctx, form });
};

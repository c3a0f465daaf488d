/**
 * Sign up, sign in, sign out (design §6). Passwords are checked by accounts/service.ts (Argon2id); sign-in
 * attempts are limited per email and address before any password is verified, so guessing is slow even
 * for the right password.
 */
import { AppError } from "../../shared/errors.ts";
import { addressBucket } from "../../shared/net/ip.ts";
import { createAccount, verifyCredentials } from "../accounts/service.ts";
import { endSession, startSession } from "../accounts/sessions.ts";
import { auditSession } from "../audit/service.ts";
import { clientIp } from "../http/client-ip.ts";
import { field, htmlResponse, redirect, safeNext } from "./http.ts";
import { errorSummary, fieldProblems, invalidAttrs, type FieldRefs, type FormProblem } from "./form-errors.ts";
import { csrfField, esc, flashBox, layout } from "./layout.ts";
import {
  anonCsrf, clearSessionCookie, sessionCookie, signedIn, SESSION_COOKIE, type FormCtx, type RequestCtx, type SignedInCtx,
} from "./session.ts";

/** 10 attempts per 15 minutes for one email from one address; 100 per address across all emails. */
const SIGNIN_PER_EMAIL = 10;
const SIGNIN_PER_ADDRESS = 100;
const SIGNIN_WINDOW_MS = 15 * 60_000;
/** Account creation per address, so one client cannot fill the database. */
const SIGNUP_PER_ADDRESS = 20;
const SIGNUP_WINDOW_MS = 3_600_000;

interface AuthForm {
  kind: "signin" | "signup";
  csrf: string;
  email?: string;
  next?: string;
  error?: FormProblem;
  flash?: string | null;
  signupOpen?: boolean;
}

const FIELDS: FieldRefs = { "/email": { label: "Email", id: "email" }, "/password": { label: "Password", id: "password" } };

/** The `next` page carried between sign-in and sign-up, as a query string ("" when there is none). */
const withNext = (next?: string) => (next ? `?next=${encodeURIComponent(safeNext(next))}` : "");

function authPage(f: AuthForm): string {
  const signin = f.kind === "signin";
  const title = signin ? "Sign in" : "Create an account";
  const errors = f.error?.errors ?? [];
  const body = `<h1>${title}</h1>${flashBox(f.flash ?? null)}
${f.error ? errorSummary(f.error, FIELDS) : ""}
<form method="post" action="/dashboard/${f.kind}" class="card">${csrfField(f.csrf)}
${signin || f.next ? `<input type="hidden" name="next" value="${esc(safeNext(f.next))}">` : ""}
<label for="email">Email</label><input id="email" name="email" type="email" required autocomplete="email" maxlength="254" value="${esc(f.email ?? "")}"${invalidAttrs(errors, "/email", "email")}>${fieldProblems(errors, "/email", FIELDS["/email"])}
<label for="password">Password${signin ? "" : ' <span class="hint">(8-200 characters)</span>'}</label>
<input id="password" name="password" type="password" required maxlength="200" ${signin ? 'autocomplete="current-password"' : 'minlength="8" autocomplete="new-password"'}${invalidAttrs(errors, "/password", "password")}>${fieldProblems(errors, "/password", FIELDS["/password"])}
<div class="actions"><button type="submit" class="btn-primary">${signin ? "Sign in" : "Create account"}</button></div></form>
${signin && !f.signupOpen ? "" : `<p class="muted">${signin ? `No account yet? <a href="/dashboard/signup${withNext(f.next)}">Create one</a>.` : `Already registered? <a href="/dashboard/signin${withNext(f.next)}">Sign in</a>.`}</p>`}`;
  return layout({ title, body, narrow: true });
}

export async function home(ctx: RequestCtx): Promise<Response> {
  return redirect((await signedIn(ctx)) ? "/dashboard/links" : "/dashboard/signin");
}

export async function signInPage(ctx: RequestCtx): Promise<Response> {
  const next = ctx.url.searchParams.get("next") ?? undefined;
  if (await signedIn(ctx)) return redirect(safeNext(next));
  const { token, setCookie } = anonCsrf(ctx);
  const flash = ctx.url.searchParams.get("flash");
  return htmlResponse(200, authPage({ kind: "signin", csrf: token, next, flash, signupOpen: ctx.deps.config.signup === "open" }), { "set-cookie": setCookie });
}

/** Counts one attempt; throws rate_limited (a 429 page) once over either limit. */
async function throttleSignIn(ctx: RequestCtx, email: string): Promise<void> {
  const ip = addressBucket(clientIp(ctx.deps, ctx.request) ?? "unknown");
  const hot = ctx.deps.hot;
  const perEmail = await hot.rateLimit(`signin:${ip}:${email.slice(0, 254)}`, SIGNIN_PER_EMAIL, SIGNIN_WINDOW_MS);
  const perAddress = perEmail.allowed ? await hot.rateLimit(`signin-ip:${ip}`, SIGNIN_PER_ADDRESS, SIGNIN_WINDOW_MS) : perEmail;
  if (perEmail.allowed && perAddress.allowed) return;
  const wait = Math.max(perEmail.resetSeconds, perAddress.resetSeconds);
  throw new AppError("rate_limited", `Too many sign-in attempts. Try again in ${Math.ceil(wait / 60)} minute(s).`, { retryAfter: wait });
}

export async function signIn({ ctx, form }: FormCtx<RequestCtx>): Promise<Response> {
  const email = field(form, "email").trim().toLowerCase();
  const next = field(form, "next");
  await throttleSignIn(ctx, email);
  const account = await verifyCredentials(ctx.deps, email, field(form, "password"));
  if (!account) {
    // A wrong password for an existing account is recorded where its sign-ins are (each team sees someone trying);
    // an unknown email has no workspace to record it in. The answer is the same either way. Attempts are throttled
    // above, so entries come no faster than the sign-in limit lets them.
    const target = await ctx.deps.store.getAccountByEmail(email).catch(() => null);
    if (target) await auditSession(ctx.deps, target.id, "session.sign_in_failed");
    const error = { detail: "Wrong email or password.", errors: [] };
    return htmlResponse(401, authPage({ kind: "signin", csrf: field(form, "_csrf"), email, next, error, signupOpen: ctx.deps.config.signup === "open" }));
  }
  // A fresh token on every sign-in (no session fixation); the previous session of this browser ends.
  await endSession(ctx.deps, ctx.cookies.get(SESSION_COOKIE)).catch(() => {});
  const { token } = await startSession(ctx.deps, account.id);
  await auditSession(ctx.deps, account.id, "session.signed_in");
  return redirect(safeNext(next), [sessionCookie(ctx, token)]);
}

function signupClosed(status: number): Response {
  const body = `<h1>Sign-up is closed</h1><p>This server does not accept new accounts. Ask its administrator for an account (they can create one with <code>npm run create-key -- --email you@example.com</code>), then <a href="/dashboard/signin">sign in</a>.</p>`;
  return htmlResponse(status, layout({ title: "Sign-up is closed", body, narrow: true }));
}

export async function signUpPage(ctx: RequestCtx): Promise<Response> {
  if (ctx.deps.config.signup === "closed") return signupClosed(200);
  if (await signedIn(ctx)) return redirect("/dashboard/links");
  const { token, setCookie } = anonCsrf(ctx);
  return htmlResponse(200, authPage({ kind: "signup", csrf: token, next: ctx.url.searchParams.get("next") ?? undefined }), { "set-cookie": setCookie });
}

export async function signUp({ ctx, form }: FormCtx<RequestCtx>): Promise<Response> {
  if (ctx.deps.config.signup === "closed") return signupClosed(403);
  const ip = addressBucket(clientIp(ctx.deps, ctx.request) ?? "unknown");
  const limit = await ctx.deps.hot.rateLimit(`signup:${ip}`, SIGNUP_PER_ADDRESS, SIGNUP_WINDOW_MS);
  if (!limit.allowed) throw new AppError("rate_limited", "Too many accounts created from your address. Try again later.", { retryAfter: limit.resetSeconds });
  const email = field(form, "email");
  try {
    const account = await createAccount(ctx.deps, email, field(form, "password"));
    const { token } = await startSession(ctx.deps, account.id);
    await auditSession(ctx.deps, account.id, "session.signed_in", { signedUp: true });
    // Sent here from a page that needs an account (an application's consent page): back there.
    return redirect(field(form, "next") ? safeNext(field(form, "next")) : "/dashboard/links?flash=welcome", [sessionCookie(ctx, token)]);
  } catch (e) {
    if (!(e instanceof AppError) || e.code !== "invalid_input") throw e;
    const error = { detail: e.message, errors: e.errors ?? [] };
    return htmlResponse(400, authPage({ kind: "signup", csrf: field(form, "_csrf"), email, error, next: field(form, "next") || undefined }));
  }
}

export async function signOut({ ctx }: FormCtx<SignedInCtx>): Promise<Response> {
  await endSession(ctx.deps, ctx.cookies.get(SESSION_COOKIE));
  await auditSession(ctx.deps, ctx.account.id, "session.signed_out");
  return redirect("/dashboard/signin?flash=signed-out", [clearSessionCookie(ctx)]);
}

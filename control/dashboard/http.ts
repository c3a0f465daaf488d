/**
 * The dashboard's HTTP plumbing: HTML responses with a strict CSP, redirects, cookies and form bodies.
 * No page knowledge here; layout.ts renders, the page modules decide.
 */
import { AppError } from "../../shared/errors.ts";
import { readBodyUpTo } from "../../shared/net/body.ts";
import type { Deps } from "../deps.ts";

/**
 * Scripts and styles only from our own static files (no inline code, no CDN), no framing, forms only to us.
 * Inline SVG (charts, QR codes) needs no exception: it is markup, not script.
 */
export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const PAGE_HEADERS: Record<string, string> = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": CSP,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  // Pages carry account data and CSRF tokens: never cached, never shared.
  "cache-control": "no-store",
};

export function htmlResponse(status: number, html: string, extra: Record<string, string | string[]> = {}): Response {
  const headers = new Headers(PAGE_HEADERS);
  for (const [k, v] of Object.entries(extra)) {
    for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);
  }
  return new Response(html, { status, headers });
}

/** 303 See Other: after a POST the browser follows with a GET, so reloading never re-submits a form. */
export function redirect(location: string, cookies: string[] = []): Response {
  const headers = new Headers({ location, "cache-control": "no-store" });
  for (const c of cookies) headers.append("set-cookie", c);
  return new Response(null, { status: 303, headers });
}

export function parseCookies(header: string | null): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (!out.has(name)) out.set(name, part.slice(eq + 1).trim());
  }
  return out;
}

/** Cookies are HTTP-only, SameSite=Lax, scoped to /dashboard, and Secure whenever the site is reached over https. */
export function cookie(name: string, value: string, maxAgeSeconds: number, secure: boolean): string {
  const parts = [`${name}=${value}`, "Path=/dashboard", "HttpOnly", "SameSite=Lax", `Max-Age=${maxAgeSeconds}`];
  if (secure) parts.push("Secure");
  return parts.join("; ");
}

/** True when the visitor reaches us over https: the public base says so, or the connection (or our proxy) does. */
export function isSecureRequest(deps: Deps, request: Request): boolean {
  if (deps.config.baseUrl.startsWith("https:")) return true;
  if (request.url.startsWith("https:")) return true;
  // A forged header can only make the cookie stricter, so believing it is safe.
  return request.headers.get("x-forwarded-proto")?.split(",")[0].trim().toLowerCase() === "https";
}

/** Forms are small; 1 MiB matches the API's body limit and leaves room for 50 rules. */
const MAX_FORM_BYTES = 1024 * 1024;

/** Reads an application/x-www-form-urlencoded body (what every dashboard form posts). */
export async function readForm(request: Request): Promise<URLSearchParams> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") {
    throw new AppError("unsupported_media_type", "Forms must be posted as application/x-www-form-urlencoded");
  }
  const bytes = await readBodyUpTo(request, MAX_FORM_BYTES);
  if (bytes === null) throw new AppError("payload_too_large", "The form must be at most 1 MiB");
  return new URLSearchParams(new TextDecoder().decode(bytes));
}

/** A single form value as a string ("" when absent); repeated names take the first. */
export const field = (form: URLSearchParams, name: string): string => form.get(name) ?? "";

/** A path inside the dashboard, safe to redirect to after sign-in (no open redirects to other sites). */
export function safeNext(value: string | null | undefined): string {
  if (!value || !/^\/dashboard(?:[/?#]|$)/.test(value) || value.includes("\\") || /[\x00-\x1f]/.test(value)) {
    return "/dashboard/links";
  }
  // Dot segments (/dashboard/../slug) would leave the dashboard once the browser resolves them.
  const resolved = new URL(value, "http://host");
  if (resolved.host !== "host" || !/^\/dashboard(?:\/|$)/.test(resolved.pathname)) return "/dashboard/links";
  return value;
}

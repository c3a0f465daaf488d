/**
 * The few pages the short address answers with. Every value from a link is escaped; a strict CSP
 * and frame-ancestors 'none' keep them inert even if escaping were ever missed.
 */
import { escapeHtml as esc } from "../shared/html.ts";
import type { CompiledLink } from "../shared/link.ts";

const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src https: http: data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const STYLE = "body{font-family:system-ui,sans-serif;max-width:32rem;margin:10vh auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}input,button{font:inherit;padding:.5rem;margin:.25rem 0}button{cursor:pointer}";

export const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

function page(title: string, body: string, head = ""): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>${esc(title)}</title>${head}<style>${STYLE}</style></head><body>${body}</body></html>`;
}

function html(status: number, body: string, extra?: Record<string, string>): Response {
  return new Response(body, { status, headers: extra ? { ...PAGE_HEADERS, ...extra } : PAGE_HEADERS });
}

const NOT_FOUND = page("Link not found", "<h1>Link not found</h1><p>This short link does not exist.</p>");
const GONE: Record<string, string> = {
  archived: page("Link archived", "<h1>This link is no longer available</h1><p>It has been archived by its owner.</p>"),
  expired: page("Link expired", "<h1>This link has expired</h1>"),
  limit: page("Link limit reached", "<h1>This link is no longer available</h1><p>It has reached its click limit.</p>"),
};

// Fixed pages are built once and cloned per request: cloning a finished Response costs less than building one.
const NOT_FOUND_RESPONSE = html(404, NOT_FOUND);
const GONE_RESPONSES: Record<string, Response> = Object.fromEntries(Object.entries(GONE).map(([k, body]) => [k, html(410, body)]));

export const notFoundPage = () => NOT_FOUND_RESPONSE.clone();
export const gonePage = (reason: "archived" | "expired" | "limit") => GONE_RESPONSES[reason]!.clone();
export const unavailablePage = () =>
  html(503, page("Temporarily unavailable", "<h1>Temporarily unavailable</h1><p>Please try again in a moment.</p>"), { "retry-after": "1" });

/** Only GET and HEAD reach a link, and POST a password link's form. */
export const methodNotAllowedPage = () => new Response("Method not allowed", { status: 405, headers: { allow: "GET, HEAD" } });

export function tooEarlyPage(startsAt: number): Response {
  const when = new Date(startsAt).toISOString();
  return html(425, page("Not yet available", `<h1>This link is not active yet</h1><p>It opens at <time datetime="${when}">${when}</time>.</p>`));
}

export function passwordPage(slug: string, opts: { wrong?: boolean; status?: number } = {}): Response {
  const msg = opts.wrong ? `<p role="alert" style="color:#b00">Wrong password, please try again.</p>` : "";
  const body = `<h1>This link is protected</h1><p>Enter the password to continue.</p>${msg}<form method="post" action="/${esc(slug)}"><label>Password<br><input type="password" name="password" required autofocus autocomplete="current-password" maxlength="200"></label><br><button type="submit">Continue</button></form>`;
  return html(opts.status ?? 401, page("Password required", body));
}

export function tooManyAttemptsPage(retryAfter: number): Response {
  return html(429, page("Too many attempts", "<h1>Too many attempts</h1><p>Please wait a moment before trying again.</p>"), { "retry-after": String(retryAfter) });
}

/** The preview card for social crawlers (serveOg): escaped og:/twitter: tags and a plain fallback link. */
export function previewPage(link: CompiledLink, shortUrl: string): Response {
  const og = link.og!;
  const title = og.title ?? link.rawTarget;
  const meta = [
    ["og:title", title],
    ["og:description", og.description],
    ["og:image", og.imageUrl],
    ["og:url", shortUrl],
    ["og:type", "website"],
  ].filter(([, v]) => v) as [string, string][];
  const tw = [
    ["twitter:card", og.imageUrl ? "summary_large_image" : "summary"],
    ["twitter:title", title],
    ["twitter:description", og.description],
    ["twitter:image", og.imageUrl],
  ].filter(([, v]) => v) as [string, string][];
  const head =
    meta.map(([k, v]) => `<meta property="${k}" content="${esc(v)}">`).join("") +
    tw.map(([k, v]) => `<meta name="${k}" content="${esc(v)}">`).join("") +
    (og.description ? `<meta name="description" content="${esc(og.description)}">` : "");
  const body = `<h1>${esc(title)}</h1>${og.description ? `<p>${esc(og.description)}</p>` : ""}<p><a href="${esc(link.target)}">Continue to the destination</a></p>`;
  // The same address redirects people and (with a password) depends on the unlock cookie: no shared cache may
  // keep the card and hand it to a person instead of the counted redirect.
  return html(200, page(title, body, head), { "cache-control": "private, max-age=0", vary: "User-Agent, Cookie" });
}

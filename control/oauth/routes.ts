/**
 * The authorization server's HTTP endpoints (issue #23), beside the API and MCP in the control plane:
 *
 *   GET  /.well-known/oauth-authorization-server        RFC 8414 metadata
 *   GET  /.well-known/oauth-protected-resource[/mcp]    RFC 9728 metadata of /mcp (the bare path answers for MCP)
 *   GET  /.well-known/oauth-protected-resource/api/v1   … of the REST API
 *   POST /oauth/register                                 RFC 7591 dynamic registration (JSON)
 *   GET  /oauth/authorize                                checks the request, then the dashboard's consent page
 *   POST /oauth/token                                    authorization_code, refresh_token (form)
 *   POST /oauth/revoke                                   RFC 7009 (form)
 *
 * Metadata, registration, token and revocation answer any origin (CORS), so browser-based clients work; none of them
 * reads a cookie. OAuth endpoints answer OAuth's JSON errors; anything else under /.well-known and /oauth is a
 * problem+json 404, never the short-link page.
 */
import { Elysia } from "elysia";
import { AppError, problemResponse, toAppError } from "../../shared/errors.ts";
import { addressBucket } from "../../shared/net/ip.ts";
import { readBodyUpTo } from "../../shared/net/body.ts";
import type { Deps } from "../deps.ts";
import { errorPage } from "../dashboard/layout.ts";
import { clientIp } from "../http/client-ip.ts";
import { methodNotAllowed, parseJsonBody } from "../http/errors.ts";
import { checkAuthorizationRequest } from "./authorize.ts";
import { registerClient, registrationResponse } from "./clients.ts";
import { OAuthError } from "./errors.ts";
import { exchangeCode, refresh, revokeToken, type TokenParams } from "./grants.ts";
import { authorizationServerMetadata, protectedResourceMetadata } from "./metadata.ts";

const CORS: Record<string, string> = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, OPTIONS",
  "access-control-allow-headers": "authorization, content-type, mcp-protocol-version",
  "access-control-max-age": "86400",
};
/** Token answers are never cached (RFC 6749 §5.1). */
const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" };
const MAX_FORM_BYTES = 64 * 1024;
/** Registrations per client address and hour: enough for every assistant a person runs, not a table filler. */
const REGISTRATIONS_PER_HOUR = 60;

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...CORS, ...headers } });

/** The OAuth error a client reads in one of our own problems (RFC 6749 §5.2 has no word for storage being down). */
const OAUTH_WORD_FOR: Partial<Record<string, string>> = {
  payload_too_large: "invalid_request", unavailable: "temporarily_unavailable", rate_limited: "temporarily_unavailable",
};

/**
 * OAuth errors as OAuth JSON. Our own (storage down, body too large, too many registrations) stay problem+json, with
 * OAuth's `error` and `error_description` as extension members, so an OAuth client reads them too. All with CORS.
 */
async function oauthEndpoint(work: () => Promise<Response>): Promise<Response> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof OAuthError) return json(e.status, e.toJson(), NO_STORE);
    if (!(e instanceof AppError)) console.error("oauth endpoint error:", e);
    const err = toAppError(e);
    const res = problemResponse(err, { ...CORS, ...NO_STORE });
    const body = { ...(await res.json()), error: OAUTH_WORD_FOR[err.code] ?? "server_error", error_description: err.message };
    return new Response(JSON.stringify(body), { status: res.status, headers: res.headers });
  }
}

/** An application/x-www-form-urlencoded body (RFC 6749 §3.2), each parameter at most once (§3.1). */
async function readTokenForm(request: Request): Promise<TokenParams> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") throw new OAuthError("invalid_request", "Send the parameters as application/x-www-form-urlencoded");
  const bytes = await readBodyUpTo(request, MAX_FORM_BYTES);
  if (bytes === null) throw new AppError("payload_too_large", `The form must be at most ${MAX_FORM_BYTES / 1024} KiB`);
  const form = new URLSearchParams(new TextDecoder().decode(bytes));
  for (const name of new Set(form.keys())) {
    if (form.getAll(name).length > 1) throw new OAuthError("invalid_request", `${name} is given more than once`);
  }
  return (name) => form.get(name);
}

/**
 * The client_id of a public client: in the form, or as the user name of HTTP Basic with an empty password (some
 * clients send it so). A password is a secret, and we issue none: invalid_client.
 */
function clientIdOf(request: Request, p: TokenParams): string {
  const basic = /^Basic\s+(\S+)$/i.exec(request.headers.get("authorization") ?? "");
  if (basic) {
    const [user, secret] = Buffer.from(basic[1], "base64").toString("utf8").split(":");
    if (secret) throw new OAuthError("invalid_client", "This server issues no client secrets: authenticate with client_id and PKCE");
    let id: string;
    try {
      id = decodeURIComponent(user ?? "");
    } catch {
      throw new OAuthError("invalid_client", "The Basic credentials are not URL-encoded as RFC 6749 §2.3.1 asks");
    }
    if (p("client_id") !== null && p("client_id") !== id) throw new OAuthError("invalid_client", "Two different client_ids were sent");
    if (id) return id;
  }
  const id = p("client_id");
  if (!id) throw new OAuthError("invalid_client", "client_id is required");
  return id;
}

async function token(deps: Deps, request: Request): Promise<Response> {
  const p = await readTokenForm(request);
  const clientId = clientIdOf(request, p);
  const grantType = p("grant_type");
  if (grantType === "authorization_code") return json(200, await exchangeCode(deps, clientId, p), NO_STORE);
  if (grantType === "refresh_token") return json(200, await refresh(deps, clientId, p), NO_STORE);
  if (grantType === null) throw new OAuthError("invalid_request", "grant_type is required");
  throw new OAuthError("unsupported_grant_type", "grant_type must be authorization_code or refresh_token");
}

async function revoke(deps: Deps, request: Request): Promise<Response> {
  const p = await readTokenForm(request);
  const clientId = clientIdOf(request, p);
  const value = p("token");
  if (!value) throw new OAuthError("invalid_request", "token is required");
  await revokeToken(deps, clientId, value);
  return new Response(null, { status: 200, headers: { ...CORS, ...NO_STORE } });
}

async function register(deps: Deps, request: Request): Promise<Response> {
  const ip = addressBucket(clientIp(deps, request) ?? "unknown");
  const limit = await deps.hot.rateLimit(`oauth-register:${ip}`, REGISTRATIONS_PER_HOUR, 3_600_000).catch(() => {
    throw new AppError("unavailable", "Rate limiter unavailable", { retryAfter: 1 });
  });
  if (!limit.allowed) throw new AppError("rate_limited", "Too many client registrations from this address; try again later", { retryAfter: limit.resetSeconds });
  let body: unknown;
  try {
    body = await parseJsonBody(request);
  } catch (e) {
    if (e instanceof AppError && e.code !== "payload_too_large") throw new OAuthError("invalid_client_metadata", e.message);
    throw e;
  }
  return json(201, registrationResponse(await registerClient(deps, body)), NO_STORE);
}

/** Checks the request before anyone signs in; a good one goes on to the consent page, under /dashboard (its cookies' path). */
async function authorize(deps: Deps, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const check = await checkAuthorizationRequest(deps, url.searchParams);
  if (check.ok) return new Response(null, { status: 302, headers: { location: `/dashboard/authorize${url.search}`, "cache-control": "no-store" } });
  if ("location" in check) return new Response(null, { status: 302, headers: { location: check.location, "cache-control": "no-store" } });
  return errorPage(400, "This application cannot connect", check.page);
}

const notFound = () => problemResponse(new AppError("not_found", "No such OAuth or well-known resource"), CORS);
const preflight = () => new Response(null, { status: 204, headers: CORS });
/** An endpoint asked with another method: its CORS preflight, or 405 naming the one it answers. */
const only = (allow: string) => ({ request }: { request: Request }) => (request.method === "OPTIONS" ? preflight() : methodNotAllowed(allow));

export function oauthRoutes(deps: Deps) {
  const base = deps.config.baseUrl;
  const mcpMetadata = () => json(200, protectedResourceMetadata(base, "mcp"));
  return new Elysia({ name: "oauth" })
    .get("/.well-known/oauth-authorization-server", () => json(200, authorizationServerMetadata(base)))
    .get("/.well-known/oauth-protected-resource", mcpMetadata)
    .get("/.well-known/oauth-protected-resource/mcp", mcpMetadata)
    .get("/.well-known/oauth-protected-resource/api/v1", () => json(200, protectedResourceMetadata(base, "api")))
    .options("/.well-known/*", preflight)
    .post("/oauth/register", ({ request }) => oauthEndpoint(() => register(deps, request)))
    .get("/oauth/authorize", async ({ request }) => {
      try {
        return await authorize(deps, request);
      } catch (e) {
        if (!(e instanceof AppError)) console.error("oauth authorize error:", e);
        const err = toAppError(e);
        return errorPage(err.status, "This application cannot connect", err.code === "internal" ? "An unexpected error occurred. Please try again." : err.message);
      }
    })
    .post("/oauth/token", ({ request }) => oauthEndpoint(() => token(deps, request)))
    .post("/oauth/revoke", ({ request }) => oauthEndpoint(() => revoke(deps, request)))
    .options("/oauth/*", preflight)
    .all("/oauth/authorize", only("GET"))
    .all("/oauth/token", only("POST"))
    .all("/oauth/register", only("POST"))
    .all("/oauth/revoke", only("POST"))
    .all("/oauth/*", notFound)
    .all("/.well-known/*", notFound);
}

/**
 * The authorization request (OAuth 2.1 §4.1.1 with PKCE, RFC 8707 resource), checked the same way at /oauth/authorize
 * and again when the consent form is posted. Until the client and its redirect URI are known good, a problem is shown
 * to the person on a page of ours (never sent to an unchecked URI: no open redirect); after that, it goes back to the
 * client at its redirect URI, with `state`, as OAuth asks.
 */
import { isOneOf, SCOPES, type Scope } from "../../shared/enums.ts";
import { newId } from "../../shared/ids.ts";
import { resourceUrl, type ProtectedResource } from "../auth/challenge.ts";
import type { Deps } from "../deps.ts";
import { resolveClient, type OAuthClient } from "./clients.ts";
import { OAuthError, type OAuthErrorCode } from "./errors.ts";
import { pointsAtUs, redirectUriMatches, redirectWith } from "./redirect-uris.ts";
import { CODE_TTL_MS, hashOf, isS256Challenge, newAuthorizationCode } from "./tokens.ts";
import { recordAudit } from "../audit/service.ts";

/** The parameters an authorization request carries, as the consent form passes them on. */
export const AUTHORIZE_PARAMS = ["response_type", "client_id", "redirect_uri", "state", "scope", "code_challenge", "code_challenge_method", "resource"] as const;

export interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  state: string | undefined;
  codeChallenge: string;
  scopes: Scope[];
  resource: string;
  resourceKind: ProtectedResource;
}

export type AuthorizeCheck =
  | { ok: true; request: AuthorizationRequest }
  /** The client or redirect URI cannot be trusted: tell the person, send nothing anywhere. */
  | { ok: false; page: string }
  /** A problem the client must hear of, at its (checked) redirect URI. */
  | { ok: false; location: string };

/** The resource a token is asked for: our /mcp or /api/v1 URL (a trailing slash tolerated); null for anything else. */
export function resourceKindOf(baseUrl: string, resource: string): ProtectedResource | null {
  const r = resource.endsWith("/") ? resource.slice(0, -1) : resource;
  for (const kind of ["mcp", "api"] as const) if (r === resourceUrl(baseUrl, kind)) return kind;
  return null;
}

/**
 * The scopes granted for `asked` (space-separated; unknown ones such as offline_access are ignored, RFC 6749 §3.3)
 * within what the client registered; every scope when none is asked. OAuthError invalid_scope when none is left.
 */
export function grantedScopes(asked: string | null, registered: Scope[] | null): Scope[] {
  const allowed = registered ?? [...SCOPES];
  if (asked === null || asked.trim() === "") return allowed;
  const known = asked.split(/\s+/).filter((s): s is Scope => isOneOf(SCOPES, s) && allowed.includes(s));
  if (known.length === 0) throw new OAuthError("invalid_scope", `None of the scopes asked for can be granted; known scopes: ${allowed.join(" ")}`);
  return [...new Set(known)];
}

/**
 * The client and the redirect URI the answer may go to, or the words of a page: until both are known good, nothing
 * is sent anywhere.
 */
async function trustedClient(deps: Deps, params: URLSearchParams): Promise<{ client: OAuthClient; redirectUri: string } | { page: string }> {
  for (const name of ["client_id", "redirect_uri"]) {
    if (params.getAll(name).length > 1) return { page: `The request has more than one ${name}.` };
  }
  const clientId = params.get("client_id");
  if (!clientId) return { page: "The application did not say who it is (no client_id)." };
  let client: OAuthClient;
  try {
    client = await resolveClient(deps, clientId);
  } catch (e) {
    if (e instanceof OAuthError) return { page: e.description };
    throw e;
  }
  const redirectUri = params.get("redirect_uri") ?? (client.redirectUris.length === 1 ? client.redirectUris[0]! : null);
  if (redirectUri === null) return { page: "The application did not say where to return (no redirect_uri), and it registered several." };
  if (!redirectUriMatches(redirectUri, client.redirectUris)) {
    return { page: `The application asked to return to an address it did not register (${redirectUri.slice(0, 200)}). Nothing was sent there.` };
  }
  // A metadata document's redirect URIs (or a loopback port) may still lead back to us: refused the same way.
  if (pointsAtUs(deps.config, redirectUri)) return { page: "The application asked to return to this server itself. Nothing was sent there." };
  return { client, redirectUri };
}

/** Checks an authorization request's parameters (query of GET /oauth/authorize, or the consent form). */
export async function checkAuthorizationRequest(deps: Deps, params: URLSearchParams): Promise<AuthorizeCheck> {
  const trusted = await trustedClient(deps, params);
  if ("page" in trusted) return { ok: false, page: trusted.page };
  const { client, redirectUri } = trusted;
  const state = params.get("state") ?? undefined;
  const fail = (error: OAuthErrorCode, description: string): AuthorizeCheck => ({
    ok: false,
    location: redirectWith(redirectUri, { error, error_description: description, state, iss: deps.config.baseUrl }),
  });
  for (const name of AUTHORIZE_PARAMS) if (params.getAll(name).length > 1) return fail("invalid_request", `${name} is given more than once`);
  if (params.get("response_type") !== "code") return fail("unsupported_response_type", 'response_type must be "code"');
  const challenge = params.get("code_challenge");
  if (!challenge) return fail("invalid_request", "code_challenge is required (PKCE with S256)");
  const method = params.get("code_challenge_method");
  if (method !== "S256") return fail("invalid_request", `code_challenge_method must be S256${method ? ` (${method.slice(0, 20)} is not supported)` : ""}`);
  if (!isS256Challenge(challenge)) return fail("invalid_request", "code_challenge must be 43 base64url characters (an S256 challenge)");
  const resource = params.get("resource") ?? resourceUrl(deps.config.baseUrl, "mcp");
  const resourceKind = resourceKindOf(deps.config.baseUrl, resource);
  if (resourceKind === null) {
    return fail("invalid_target", `resource must be ${resourceUrl(deps.config.baseUrl, "mcp")} or ${resourceUrl(deps.config.baseUrl, "api")}`);
  }
  let scopes: Scope[];
  try {
    scopes = grantedScopes(params.get("scope"), client.scopes);
  } catch (e) {
    if (e instanceof OAuthError) return fail(e.code, e.description);
    throw e;
  }
  return {
    ok: true,
    request: { client, redirectUri, state, codeChallenge: challenge, scopes, resource: resourceUrl(deps.config.baseUrl, resourceKind), resourceKind },
  };
}

/**
 * The scopes this client already holds on the account for the same resource (its grants still in use). A client
 * stepping up after a 403 asks for the one scope it lacked (mcp-remote does); the consent then covers those it had
 * too, so the new token does not lose them and the client does not go back and forth between two scopes.
 */
export async function earlierScopes(deps: Deps, accountId: string, r: AuthorizationRequest): Promise<Scope[]> {
  const grants = await deps.store.listOAuthGrants(accountId, deps.now());
  const held = new Set(grants.filter((g) => g.clientId === r.client.id && g.resource === r.resource).flatMap((g) => g.scopes));
  return SCOPES.filter((s) => held.has(s) && !r.scopes.includes(s));
}

/** What the consent covers: the scopes asked for and those the client already holds, in the vocabulary's order. */
export const withEarlier = (r: AuthorizationRequest, earlier: Scope[]): AuthorizationRequest => ({
  ...r, scopes: SCOPES.filter((s) => r.scopes.includes(s) || earlier.includes(s)),
});

/**
 * The person allowed it: a code for the client, at its redirect URI (with state and iss, RFC 9207). Its tokens act
 * for `workspaceId` (default: the person's personal workspace).
 */
export async function approve(deps: Deps, accountId: string, r: AuthorizationRequest, workspaceId = accountId): Promise<string> {
  const code = newAuthorizationCode();
  const now = deps.now();
  const grantId = newId();
  await deps.store.createAuthorizationCode({
    codeHash: hashOf(code), clientId: r.client.id, clientName: r.client.name, accountId, workspaceId, redirectUri: r.redirectUri,
    codeChallenge: r.codeChallenge, scopes: r.scopes, resource: r.resource, grantId, createdAt: now, expiresAt: now + CODE_TTL_MS, usedAt: null,
  });
  await recordAudit(deps, { workspaceId, accountId }, "oauth.connected", { type: "oauth_grant", id: grantId }, {
    client: r.client.name, clientId: r.client.id, scopes: r.scopes, resource: r.resource,
  });
  return redirectWith(r.redirectUri, { code, state: r.state, iss: deps.config.baseUrl });
}

/** The person said no: access_denied at the client's redirect URI. */
export const deny = (deps: Deps, r: AuthorizationRequest): string =>
  redirectWith(r.redirectUri, { error: "access_denied", error_description: "The account holder denied access", state: r.state, iss: deps.config.baseUrl });

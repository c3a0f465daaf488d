/**
 * The token endpoint's grants (OAuth 2.1 §4.1.3, §4.3), revocation (RFC 7009) and the account holder's view of
 * connected applications: one service function per operation, called by the OAuth routes and the dashboard alike.
 *
 * A grant is one consent exchanged for tokens: the family of its rotating refresh tokens. Anything that smells of a
 * stolen secret revokes the whole family: a code used twice (RFC 6749 §4.1.2), a refresh token used after its
 * rotation (OAuth 2.1 §4.3.1). Revocation reaches every process through HotState pub/sub (verifier.ts listens).
 */
import type { Scope } from "../../shared/enums.ts";
import { AppError } from "../../shared/errors.ts";
import type { OAuthGrantRecord } from "../../shared/ports/oauth.ts";
import type { Deps } from "../deps.ts";
import { grantedScopes, resourceKindOf } from "./authorize.ts";
import { OAuthError } from "./errors.ts";
import { recordAudit } from "../audit/service.ts";
import {
  ACCESS_TOKEN_TTL_MS, hashOf, newAccessToken, newRefreshToken, pkceMatches, REFRESH_TOKEN_TTL_MS,
} from "./tokens.ts";

export const GRANT_REVOKED_CHANNEL = "oauth-grant-revoked";

/** The token endpoint's answer (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** The request's form fields; each given at most once (checked by the route). */
export type TokenParams = (name: string) => string | null;

const invalidGrant = (why: string) => new OAuthError("invalid_grant", why);

/** Expired codes and tokens are deleted by the token endpoint, at most once an hour per process. */
const PRUNE_EVERY_MS = 3_600_000;
/** A code is kept a day past its expiry, so a late second use is still recognised and revokes its grant. */
const CODE_KEPT_MS = 86_400_000;
const lastPruned = new WeakMap<Deps, number>();

function pruneNow(deps: Deps): void {
  const now = deps.now();
  if (now - (lastPruned.get(deps) ?? -Infinity) < PRUNE_EVERY_MS) return;
  lastPruned.set(deps, now);
  deps.store.pruneOAuth(now - CODE_KEPT_MS, now).catch(() => {});
}

/** Listeners in this process, told at once (pub/sub reaches the others, and this one again, a moment later). */
const localListeners = new WeakMap<Deps, Set<(grantId: string) => void>>();

export function onGrantRevoked(deps: Deps, listener: (grantId: string) => void): void {
  let set = localListeners.get(deps);
  if (!set) localListeners.set(deps, (set = new Set()));
  set.add(listener);
  deps.hot.subscribe(GRANT_REVOKED_CHANNEL, listener);
}

/** Revokes a grant (of that account, when given) and tells every process; the grant, or null when unknown or not theirs. */
export async function revokeGrant(deps: Deps, grantId: string, accountId?: string): Promise<OAuthGrantRecord | null> {
  const at = deps.now();
  const grant = await deps.store.revokeOAuthGrant(grantId, at, accountId);
  if (!grant) return null;
  // By the person in the dashboard, or else through the grant: the application itself (RFC 7009), or a replay of its
  // token. A grant revoked before keeps its first revocation time, and its one entry.
  const by = accountId === undefined ? { accountId: grant.accountId, grantId } : { accountId };
  if (grant.revokedAt === at) await recordAudit(deps, { workspaceId: grant.workspaceId, ...by }, "oauth.disconnected", { type: "oauth_grant", id: grantId }, { client: grant.clientName, clientId: grant.clientId });
  for (const l of localListeners.get(deps) ?? []) l(grantId);
  await deps.hot.publish(GRANT_REVOKED_CHANNEL, grantId).catch(() => {});
  return grant;
}

/** A fresh access token and refresh token for a grant, with what the client is told. */
function newTokens(deps: Deps, grantId: string, scopes: Scope[]) {
  const now = deps.now();
  const access = newAccessToken();
  const refresh = newRefreshToken();
  return {
    access: { tokenHash: hashOf(access), grantId, scopes, createdAt: now, expiresAt: now + ACCESS_TOKEN_TTL_MS },
    refresh: { tokenHash: hashOf(refresh), grantId, createdAt: now, expiresAt: now + REFRESH_TOKEN_TTL_MS, usedAt: null },
    response: {
      access_token: access, token_type: "Bearer", expires_in: ACCESS_TOKEN_TTL_MS / 1000, refresh_token: refresh, scope: scopes.join(" "),
    } satisfies TokenResponse,
  };
}

/** A `resource` sent to the token endpoint must be the one the grant is for (RFC 8707 §2.2). */
function checkResource(deps: Deps, asked: string | null, granted: string): void {
  if (asked === null) return;
  const kind = resourceKindOf(deps.config.baseUrl, asked);
  if (kind === null || kind !== resourceKindOf(deps.config.baseUrl, granted)) {
    throw new OAuthError("invalid_target", `This grant is for ${granted}; a token for ${asked.slice(0, 200)} cannot be issued from it`);
  }
}

/** grant_type=authorization_code: the code, once, by the client it was issued to, with its PKCE verifier. */
export async function exchangeCode(deps: Deps, clientId: string, p: TokenParams): Promise<TokenResponse> {
  const code = p("code");
  const verifier = p("code_verifier");
  if (!code) throw new OAuthError("invalid_request", "code is required");
  if (!verifier) throw new OAuthError("invalid_request", "code_verifier is required (PKCE)");
  pruneNow(deps);
  const hash = hashOf(code);
  const record = await deps.store.useAuthorizationCode(hash, deps.now());
  if (!record) {
    const used = await deps.store.findAuthorizationCode(hash);
    // A code presented twice: someone else may hold it. Whatever was issued from it is revoked (RFC 6749 §4.1.2).
    if (used) await revokeGrant(deps, used.grantId);
    throw invalidGrant(used ? "The authorization code was already used; the tokens issued from it are revoked" : "Unknown authorization code");
  }
  if (record.clientId !== clientId) throw invalidGrant("The authorization code was issued to another client");
  if (record.expiresAt <= deps.now()) throw invalidGrant("The authorization code has expired");
  if (p("redirect_uri") !== null && p("redirect_uri") !== record.redirectUri) throw invalidGrant("redirect_uri differs from the authorization request's");
  if (!pkceMatches(verifier, record.codeChallenge)) throw invalidGrant("The PKCE code_verifier does not match the code_challenge");
  checkResource(deps, p("resource"), record.resource);
  const t = newTokens(deps, record.grantId, record.scopes);
  const grant: OAuthGrantRecord = {
    id: record.grantId, accountId: record.accountId, workspaceId: record.workspaceId, clientId, clientName: record.clientName, scopes: record.scopes,
    resource: record.resource, createdAt: deps.now(), lastUsedAt: null, revokedAt: null,
  };
  await deps.store.createOAuthGrant(grant, t.refresh, t.access);
  return t.response;
}

/** grant_type=refresh_token: a new pair for the old refresh token, which is spent; a spent one revokes the family. */
export async function refresh(deps: Deps, clientId: string, p: TokenParams): Promise<TokenResponse> {
  const token = p("refresh_token");
  if (!token) throw new OAuthError("invalid_request", "refresh_token is required");
  pruneNow(deps);
  const found = await deps.store.findRefreshToken(hashOf(token));
  if (!found) throw invalidGrant("Unknown refresh token");
  if (found.grant.clientId !== clientId) throw invalidGrant("The refresh token was issued to another client");
  if (found.grant.revokedAt !== null) throw invalidGrant("The refresh token's grant was revoked");
  if (found.usedAt !== null) {
    await revokeGrant(deps, found.grantId);
    throw invalidGrant("The refresh token was already used; every token of this grant is revoked");
  }
  if (found.expiresAt <= deps.now()) throw invalidGrant("The refresh token has expired");
  checkResource(deps, p("resource"), found.grant.resource);
  // Fewer scopes may be asked for (RFC 6749 §6); never more than the grant's.
  const scopes = p("scope") === null ? found.grant.scopes : grantedScopes(p("scope"), found.grant.scopes);
  const t = newTokens(deps, found.grantId, scopes);
  if (!(await deps.store.rotateRefreshToken(found.tokenHash, deps.now(), t.refresh, t.access))) {
    // Spent between the read and now: a concurrent use of one refresh token is a replay too.
    await revokeGrant(deps, found.grantId);
    throw invalidGrant("The refresh token was already used; every token of this grant is revoked");
  }
  return t.response;
}

/**
 * RFC 7009: revokes the grant of an access or refresh token presented by the client it was issued to (which ends the
 * whole connection: the application must ask again). An unknown token is no error (§2.2).
 */
export async function revokeToken(deps: Deps, clientId: string, token: string): Promise<void> {
  const hash = hashOf(token);
  const access = await deps.store.findAccessToken(hash);
  const grant = access ? { id: access.grantId, clientId: access.clientId } : (await deps.store.findRefreshToken(hash))?.grant;
  if (!grant) return;
  if (grant.clientId !== clientId) throw new OAuthError("invalid_client", "The token was issued to another client");
  await revokeGrant(deps, grant.id);
}

/** A connected application as the account holder sees it: a grant not revoked. */
export type ConnectedApp = Omit<OAuthGrantRecord, "revokedAt" | "accountId">;

export async function listConnectedApps(deps: Deps, accountId: string): Promise<ConnectedApp[]> {
  return (await deps.store.listOAuthGrants(accountId, deps.now())).map(({ revokedAt: _, accountId: __, ...app }) => app);
}

/** The dashboard's revoke: 404 for an unknown grant or another account's (no existence leaks). */
export async function disconnectApp(deps: Deps, accountId: string, grantId: string): Promise<void> {
  if (!(await revokeGrant(deps, grantId, accountId))) throw new AppError("not_found", "No such connected application");
}

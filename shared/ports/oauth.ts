/**
 * The OAuth role of the store (issue #23): registered clients, authorization codes, grants (one per consent
 * exchanged for tokens: the family of its refresh tokens) and access tokens. Codes and tokens are kept by their
 * SHA-256 hash only. A grant revoked is every token issued under it refused; its rows are kept for the record.
 */
import type { Scope } from "../enums.ts";

/** A client registered by RFC 7591 dynamic registration (Client ID Metadata Document clients are not stored). */
export interface OAuthClientRecord {
  /** The client_id handed out at registration. */
  id: string;
  name: string;
  /** Exact redirect URIs (a loopback one matches on any port, RFC 8252 §7.3). */
  redirectUris: string[];
  /** The client's home page, shown on the consent page when given. */
  clientUri: string | null;
  /** The scopes it registered for, or null: any. */
  scopes: Scope[] | null;
  createdAt: number;
}

export interface AuthorizationCodeRecord {
  codeHash: string;
  clientId: string;
  /** What the consent page showed as the client's name, kept on the grant. */
  clientName: string;
  /** The person who consented. */
  accountId: string;
  /** The workspace the consent was given for: its tokens act there, as that person (issue #24). */
  workspaceId: string;
  redirectUri: string;
  /** PKCE S256 code_challenge (base64url of the verifier's SHA-256). */
  codeChallenge: string;
  scopes: Scope[];
  /** RFC 8707 resource the tokens are for: the absolute URL of /mcp or /api/v1. */
  resource: string;
  /** The grant the code's tokens belong to, chosen up front so a reused code can revoke them. */
  grantId: string;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}

export interface OAuthGrantRecord {
  id: string;
  /** The person who consented. */
  accountId: string;
  /** The workspace its tokens act for (its code's). */
  workspaceId: string;
  clientId: string;
  clientName: string;
  scopes: Scope[];
  resource: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

export interface RefreshTokenRecord {
  tokenHash: string;
  grantId: string;
  createdAt: number;
  expiresAt: number;
  /** When it was exchanged for its successor: a second use is a replay, and revokes the grant. */
  usedAt: number | null;
}

export interface AccessTokenRecord {
  tokenHash: string;
  grantId: string;
  /** The grant's scopes, or fewer when a refresh asked for fewer. */
  scopes: Scope[];
  createdAt: number;
  expiresAt: number;
}

/** An access token with its grant's account, resource and revocation, as a request is checked against them. */
export interface AccessTokenLookup extends AccessTokenRecord {
  accountId: string;
  workspaceId: string;
  clientId: string;
  resource: string;
  grantRevokedAt: number | null;
}

/** A refresh token with its grant. */
export interface RefreshTokenLookup extends RefreshTokenRecord {
  grant: OAuthGrantRecord;
}

export interface OAuthStore {
  createOAuthClient(client: OAuthClientRecord): Promise<void>;
  getOAuthClient(id: string): Promise<OAuthClientRecord | null>;

  createAuthorizationCode(code: AuthorizationCodeRecord): Promise<void>;
  /** Marks the code used and returns it when it was unused; null when unknown or used before (one atomic step). */
  useAuthorizationCode(codeHash: string, at: number): Promise<AuthorizationCodeRecord | null>;
  findAuthorizationCode(codeHash: string): Promise<AuthorizationCodeRecord | null>;

  /** The grant with its first refresh and access tokens, in one transaction. */
  createOAuthGrant(grant: OAuthGrantRecord, refresh: RefreshTokenRecord, access: AccessTokenRecord): Promise<void>;
  getOAuthGrant(id: string): Promise<OAuthGrantRecord | null>;
  /** The account's grants still in use at `now` (not revoked, with a refresh token not spent nor expired), newest first. */
  listOAuthGrants(accountId: string, now: number): Promise<OAuthGrantRecord[]>;
  /** Revokes the grant (of that account, when one is given); the grant, or null when unknown or another account's. */
  revokeOAuthGrant(id: string, at: number, accountId?: string): Promise<OAuthGrantRecord | null>;
  touchOAuthGrant(id: string, at: number): Promise<void>;

  findRefreshToken(tokenHash: string): Promise<RefreshTokenLookup | null>;
  /**
   * Marks `oldHash` used and stores its successor and a new access token, in one transaction, only if `oldHash` was
   * unused and its grant not revoked; false otherwise (a concurrent or replayed use: nothing is stored).
   */
  rotateRefreshToken(oldHash: string, at: number, next: RefreshTokenRecord, access: AccessTokenRecord): Promise<boolean>;

  findAccessToken(tokenHash: string): Promise<AccessTokenLookup | null>;

  /**
   * Deletes codes that expired before `codesBefore` and access and refresh tokens that expired before `tokensBefore`
   * (a spent refresh token is kept until then, so a replay is recognised); returns how many rows went.
   */
  pruneOAuth(codesBefore: number, tokensBefore: number): Promise<number>;
}

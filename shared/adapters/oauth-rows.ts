/**
 * What the SQLite and Postgres OAuth adapters share: the tables (SQLite migration 18, Postgres migration 20), written
 * once for both dialects, and rows to records. Scope lists and redirect URIs are stored space-separated (neither
 * may contain a space).
 */
import { isOneOf, SCOPES, type Scope } from "../enums.ts";
import type {
  AccessTokenLookup, AuthorizationCodeRecord, OAuthClientRecord, OAuthGrantRecord, RefreshTokenLookup,
} from "../ports/oauth.ts";

export const scopesOf = (text: string): Scope[] => text.split(" ").filter((s): s is Scope => isOneOf(SCOPES, s));
export const joinScopes = (scopes: readonly Scope[]): string => scopes.join(" ");

export interface ClientRow extends Omit<OAuthClientRecord, "redirectUris" | "scopes"> {
  redirectUris: string;
  scopes: string | null;
}

export const clientOf = (r: ClientRow): OAuthClientRecord => ({
  ...r, redirectUris: r.redirectUris.split(" ").filter(Boolean), scopes: r.scopes === null ? null : scopesOf(r.scopes),
});

type WithScopes<T> = Omit<T, "scopes"> & { scopes: string };

export const codeOf = (r: WithScopes<AuthorizationCodeRecord>): AuthorizationCodeRecord => ({ ...r, scopes: scopesOf(r.scopes) });
export const grantOf = (r: WithScopes<OAuthGrantRecord>): OAuthGrantRecord => ({ ...r, scopes: scopesOf(r.scopes) });
export const accessOf = (r: WithScopes<AccessTokenLookup>): AccessTokenLookup => ({ ...r, scopes: scopesOf(r.scopes) });

/** A joined refresh-token row: the token's columns, then the grant's prefixed `g_`. */
export interface RefreshRow {
  tokenHash: string;
  grantId: string;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
  g_accountId: string;
  g_workspaceId: string;
  g_clientId: string;
  g_clientName: string;
  g_scopes: string;
  g_resource: string;
  g_createdAt: number;
  g_lastUsedAt: number | null;
  g_revokedAt: number | null;
}

export const refreshOf = (r: RefreshRow): RefreshTokenLookup => ({
  tokenHash: r.tokenHash, grantId: r.grantId, createdAt: r.createdAt, expiresAt: r.expiresAt, usedAt: r.usedAt,
  grant: {
    id: r.grantId, accountId: r.g_accountId, workspaceId: r.g_workspaceId, clientId: r.g_clientId, clientName: r.g_clientName, scopes: scopesOf(r.g_scopes),
    resource: r.g_resource, createdAt: r.g_createdAt, lastUsedAt: r.g_lastUsedAt, revokedAt: r.g_revokedAt,
  },
});

/** Column lists, with the aliases the records use (quoted: Postgres folds unquoted names to lower case). */
export const CLIENT_COLUMNS = `id, name, redirect_uris AS "redirectUris", client_uri AS "clientUri", scopes, created_at AS "createdAt"`;
export const CODE_COLUMNS = `code_hash AS "codeHash", client_id AS "clientId", client_name AS "clientName", account_id AS "accountId",
  workspace_id AS "workspaceId", redirect_uri AS "redirectUri", code_challenge AS "codeChallenge", scopes, resource, grant_id AS "grantId", created_at AS "createdAt",
  expires_at AS "expiresAt", used_at AS "usedAt"`;
export const GRANT_COLUMNS = `id, account_id AS "accountId", workspace_id AS "workspaceId", client_id AS "clientId", client_name AS "clientName", scopes, resource,
  created_at AS "createdAt", last_used_at AS "lastUsedAt", revoked_at AS "revokedAt"`;
export const REFRESH_SELECT = `SELECT r.token_hash AS "tokenHash", r.grant_id AS "grantId", r.created_at AS "createdAt",
  r.expires_at AS "expiresAt", r.used_at AS "usedAt", g.account_id AS "g_accountId", g.workspace_id AS "g_workspaceId", g.client_id AS "g_clientId",
  g.client_name AS "g_clientName", g.scopes AS "g_scopes", g.resource AS "g_resource", g.created_at AS "g_createdAt",
  g.last_used_at AS "g_lastUsedAt", g.revoked_at AS "g_revokedAt"
  FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id`;
/** A grant is in use while one of its refresh tokens can still be exchanged. */
export const GRANT_IN_USE = `revoked_at IS NULL AND EXISTS (SELECT 1 FROM oauth_refresh_tokens r
  WHERE r.grant_id = oauth_grants.id AND r.used_at IS NULL AND r.expires_at > $NOW)`;
export const ACCESS_SELECT = `SELECT a.token_hash AS "tokenHash", a.grant_id AS "grantId", a.scopes, a.created_at AS "createdAt",
  a.expires_at AS "expiresAt", g.account_id AS "accountId", g.workspace_id AS "workspaceId", g.client_id AS "clientId", g.resource, g.revoked_at AS "grantRevokedAt"
  FROM oauth_access_tokens a JOIN oauth_grants g ON g.id = a.grant_id`;

/** The tables, for a dialect's text and 64-bit integer types. */
export const oauthDdl = (t: { text: string; bigint: string }) => `
CREATE TABLE oauth_clients (
  id            ${t.text} PRIMARY KEY,
  name          ${t.text} NOT NULL,
  redirect_uris ${t.text} NOT NULL, -- space-separated
  client_uri    ${t.text},
  scopes        ${t.text},          -- space-separated, NULL: any
  created_at    ${t.bigint} NOT NULL
);
-- A grant is one consent exchanged for tokens: the family of its refresh tokens and their access tokens.
CREATE TABLE oauth_grants (
  id           ${t.text} PRIMARY KEY,
  account_id   ${t.text} NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  client_id    ${t.text} NOT NULL,
  client_name  ${t.text} NOT NULL,
  scopes       ${t.text} NOT NULL,
  resource     ${t.text} NOT NULL,
  created_at   ${t.bigint} NOT NULL,
  last_used_at ${t.bigint},
  revoked_at   ${t.bigint}
);
CREATE INDEX oauth_grants_account ON oauth_grants(account_id, created_at);
CREATE TABLE oauth_codes (
  code_hash      ${t.text} PRIMARY KEY,
  client_id      ${t.text} NOT NULL,
  client_name    ${t.text} NOT NULL,
  account_id     ${t.text} NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  redirect_uri   ${t.text} NOT NULL,
  code_challenge ${t.text} NOT NULL,
  scopes         ${t.text} NOT NULL,
  resource       ${t.text} NOT NULL,
  grant_id       ${t.text} NOT NULL, -- the grant its exchange creates (a reused code revokes it)
  created_at     ${t.bigint} NOT NULL,
  expires_at     ${t.bigint} NOT NULL,
  used_at        ${t.bigint}
);
CREATE INDEX oauth_codes_expiry ON oauth_codes(expires_at);
CREATE TABLE oauth_refresh_tokens (
  token_hash ${t.text} PRIMARY KEY,
  grant_id   ${t.text} NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
  created_at ${t.bigint} NOT NULL,
  expires_at ${t.bigint} NOT NULL,
  used_at    ${t.bigint}
);
CREATE INDEX oauth_refresh_tokens_grant ON oauth_refresh_tokens(grant_id);
CREATE INDEX oauth_refresh_tokens_expiry ON oauth_refresh_tokens(expires_at);
CREATE TABLE oauth_access_tokens (
  token_hash ${t.text} PRIMARY KEY,
  grant_id   ${t.text} NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
  scopes     ${t.text} NOT NULL,
  created_at ${t.bigint} NOT NULL,
  expires_at ${t.bigint} NOT NULL
);
CREATE INDEX oauth_access_tokens_grant ON oauth_access_tokens(grant_id);
CREATE INDEX oauth_access_tokens_expiry ON oauth_access_tokens(expires_at);
`;

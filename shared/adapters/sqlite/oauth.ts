/** The OAuth role of the SQLite store (migration 18): clients, codes, grants and their tokens, by hash. */
import type {
  AccessTokenRecord, AuthorizationCodeRecord, OAuthClientRecord, OAuthGrantRecord, OAuthStore, RefreshTokenRecord,
} from "../../ports/oauth.ts";
import {
  ACCESS_SELECT, accessOf, CLIENT_COLUMNS, clientOf, CODE_COLUMNS, codeOf, GRANT_COLUMNS, GRANT_IN_USE, grantOf, joinScopes, oauthDdl, REFRESH_SELECT,
  refreshOf, type ClientRow, type RefreshRow,
} from "../oauth-rows.ts";
import type { SqliteConnection } from "./connection.ts";

/** Migration 18. */
export const OAUTH_SQLITE = oauthDdl({ text: "TEXT", bigint: "INTEGER" });

type Row<T> = Omit<T, "scopes"> & { scopes: string };

export function sqliteOAuth(c: SqliteConnection): OAuthStore {
  const insertRefresh = (r: RefreshTokenRecord) =>
    c.st(`INSERT INTO oauth_refresh_tokens (token_hash, grant_id, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?)`)
      .run(r.tokenHash, r.grantId, r.createdAt, r.expiresAt, r.usedAt);
  const insertAccess = (a: AccessTokenRecord) =>
    c.st(`INSERT INTO oauth_access_tokens (token_hash, grant_id, scopes, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`)
      .run(a.tokenHash, a.grantId, joinScopes(a.scopes), a.createdAt, a.expiresAt);

  return {
    async createOAuthClient(k: OAuthClientRecord): Promise<void> {
      c.st(`INSERT INTO oauth_clients (id, name, redirect_uris, client_uri, scopes, created_at) VALUES (?, ?, ?, ?, ?, ?)`)
        .run(k.id, k.name, k.redirectUris.join(" "), k.clientUri, k.scopes === null ? null : joinScopes(k.scopes), k.createdAt);
    },

    async getOAuthClient(id: string): Promise<OAuthClientRecord | null> {
      const row = c.st<ClientRow>(`SELECT ${CLIENT_COLUMNS} FROM oauth_clients WHERE id = ?`).get(id);
      return row ? clientOf(row) : null;
    },

    async createAuthorizationCode(k: AuthorizationCodeRecord): Promise<void> {
      c.st(
        `INSERT INTO oauth_codes (code_hash, client_id, client_name, account_id, workspace_id, redirect_uri, code_challenge, scopes, resource,
           grant_id, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(k.codeHash, k.clientId, k.clientName, k.accountId, k.workspaceId, k.redirectUri, k.codeChallenge, joinScopes(k.scopes), k.resource, k.grantId,
        k.createdAt, k.expiresAt, k.usedAt);
    },

    async useAuthorizationCode(codeHash: string, at: number): Promise<AuthorizationCodeRecord | null> {
      const row = c.st<Row<AuthorizationCodeRecord>>(
        `UPDATE oauth_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL RETURNING ${CODE_COLUMNS}`,
      ).get(at, codeHash);
      return row ? codeOf(row) : null;
    },

    async findAuthorizationCode(codeHash: string): Promise<AuthorizationCodeRecord | null> {
      const row = c.st<Row<AuthorizationCodeRecord>>(`SELECT ${CODE_COLUMNS} FROM oauth_codes WHERE code_hash = ?`).get(codeHash);
      return row ? codeOf(row) : null;
    },

    async createOAuthGrant(g: OAuthGrantRecord, refresh: RefreshTokenRecord, access: AccessTokenRecord): Promise<void> {
      c.db.transaction(() => {
        c.st(
          `INSERT INTO oauth_grants (id, account_id, workspace_id, client_id, client_name, scopes, resource, created_at, last_used_at, revoked_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(g.id, g.accountId, g.workspaceId, g.clientId, g.clientName, joinScopes(g.scopes), g.resource, g.createdAt, g.lastUsedAt, g.revokedAt);
        insertRefresh(refresh);
        insertAccess(access);
      }).immediate();
    },

    async getOAuthGrant(id: string): Promise<OAuthGrantRecord | null> {
      const row = c.st<Row<OAuthGrantRecord>>(`SELECT ${GRANT_COLUMNS} FROM oauth_grants WHERE id = ?`).get(id);
      return row ? grantOf(row) : null;
    },

    async listOAuthGrants(accountId: string, now: number): Promise<OAuthGrantRecord[]> {
      return c.st<Row<OAuthGrantRecord>>(
        `SELECT ${GRANT_COLUMNS} FROM oauth_grants WHERE account_id = ?1 AND ${GRANT_IN_USE.replace("$NOW", "?2")}
         ORDER BY created_at DESC, id DESC`,
      ).all(accountId, now).map(grantOf);
    },

    async revokeOAuthGrant(id: string, at: number, accountId?: string): Promise<OAuthGrantRecord | null> {
      // Revoking twice keeps the first revocation time.
      const row = c.st<Row<OAuthGrantRecord>>(
        `UPDATE oauth_grants SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND (?3 IS NULL OR account_id = ?3)
         RETURNING ${GRANT_COLUMNS}`,
      ).get(at, id, accountId ?? null);
      return row ? grantOf(row) : null;
    },

    async touchOAuthGrant(id: string, at: number): Promise<void> {
      c.st(`UPDATE oauth_grants SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`).run(at, id, at);
    },

    async findRefreshToken(tokenHash: string) {
      const row = c.st<RefreshRow>(`${REFRESH_SELECT} WHERE r.token_hash = ?`).get(tokenHash);
      return row ? refreshOf(row) : null;
    },

    async rotateRefreshToken(oldHash: string, at: number, next: RefreshTokenRecord, access: AccessTokenRecord): Promise<boolean> {
      return c.db.transaction(() => {
        const used = c.st(
          `UPDATE oauth_refresh_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL
             AND grant_id IN (SELECT id FROM oauth_grants WHERE revoked_at IS NULL)`,
        ).run(at, oldHash);
        if (used.changes !== 1) return false;
        insertRefresh(next);
        insertAccess(access);
        return true;
      }).immediate();
    },

    async findAccessToken(tokenHash: string) {
      const row = c.st<Row<ReturnType<typeof accessOf>>>(`${ACCESS_SELECT} WHERE a.token_hash = ?`).get(tokenHash);
      return row ? accessOf(row) : null;
    },

    async pruneOAuth(codesBefore: number, tokensBefore: number): Promise<number> {
      return c.db.transaction(() =>
        c.st(`DELETE FROM oauth_codes WHERE expires_at < ?`).run(codesBefore).changes +
        c.st(`DELETE FROM oauth_access_tokens WHERE expires_at < ?`).run(tokensBefore).changes +
        c.st(`DELETE FROM oauth_refresh_tokens WHERE expires_at < ?`).run(tokensBefore).changes).immediate();
    },
  };
}

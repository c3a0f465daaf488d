/** The OAuth role of the Postgres store (migration 20): clients, codes, grants and their tokens, by hash. */
import type {
  AccessTokenRecord, AuthorizationCodeRecord, OAuthClientRecord, OAuthGrantRecord, OAuthStore, RefreshTokenRecord,
} from "../../ports/oauth.ts";
import {
  ACCESS_SELECT, accessOf, CLIENT_COLUMNS, clientOf, CODE_COLUMNS, codeOf, GRANT_COLUMNS, GRANT_IN_USE, grantOf, joinScopes, oauthDdl, REFRESH_SELECT,
  refreshOf, type ClientRow, type RefreshRow,
} from "../oauth-rows.ts";
import type { PostgresConnection } from "./connection.ts";

/** Migration 20. */
export const OAUTH_POSTGRES = oauthDdl({ text: "text", bigint: "bigint" });

type Row<T> = Omit<T, "scopes"> & { scopes: string };
type Sql = PostgresConnection["sql"];

const insertRefresh = (sql: Sql, r: RefreshTokenRecord) => sql`
  INSERT INTO oauth_refresh_tokens (token_hash, grant_id, created_at, expires_at, used_at)
  VALUES (${r.tokenHash}, ${r.grantId}, ${r.createdAt}, ${r.expiresAt}, ${r.usedAt})`;
const insertAccess = (sql: Sql, a: AccessTokenRecord) => sql`
  INSERT INTO oauth_access_tokens (token_hash, grant_id, scopes, created_at, expires_at)
  VALUES (${a.tokenHash}, ${a.grantId}, ${joinScopes(a.scopes)}, ${a.createdAt}, ${a.expiresAt})`;

export function postgresOAuth(c: PostgresConnection): OAuthStore {
  const one = <T, R>(rows: readonly T[], map: (row: T) => R): R | null => (rows[0] ? map(rows[0]) : null);
  const unsafe = (text: string) => c.sql.unsafe(text);

  return {
    createOAuthClient(k: OAuthClientRecord): Promise<void> {
      return c.run(async () => {
        await c.sql`
          INSERT INTO oauth_clients (id, name, redirect_uris, client_uri, scopes, created_at)
          VALUES (${k.id}, ${k.name}, ${k.redirectUris.join(" ")}, ${k.clientUri}, ${k.scopes === null ? null : joinScopes(k.scopes)}, ${k.createdAt})`;
      });
    },

    getOAuthClient(id: string) {
      return c.run(async () => one(await c.sql<ClientRow[]>`SELECT ${unsafe(CLIENT_COLUMNS)} FROM oauth_clients WHERE id = ${id}`, clientOf));
    },

    createAuthorizationCode(k: AuthorizationCodeRecord): Promise<void> {
      return c.run(async () => {
        await c.sql`
          INSERT INTO oauth_codes (code_hash, client_id, client_name, account_id, workspace_id, redirect_uri, code_challenge, scopes, resource,
            grant_id, created_at, expires_at, used_at)
          VALUES (${k.codeHash}, ${k.clientId}, ${k.clientName}, ${k.accountId}, ${k.workspaceId}, ${k.redirectUri}, ${k.codeChallenge}, ${joinScopes(k.scopes)},
            ${k.resource}, ${k.grantId}, ${k.createdAt}, ${k.expiresAt}, ${k.usedAt})`;
      });
    },

    useAuthorizationCode(codeHash: string, at: number) {
      return c.run(async () =>
        one(
          await c.sql<Row<AuthorizationCodeRecord>[]>`
            UPDATE oauth_codes SET used_at = ${at} WHERE code_hash = ${codeHash} AND used_at IS NULL
            RETURNING ${unsafe(CODE_COLUMNS)}`,
          codeOf,
        ));
    },

    findAuthorizationCode(codeHash: string) {
      return c.run(async () =>
        one(await c.sql<Row<AuthorizationCodeRecord>[]>`SELECT ${unsafe(CODE_COLUMNS)} FROM oauth_codes WHERE code_hash = ${codeHash}`, codeOf));
    },

    createOAuthGrant(g: OAuthGrantRecord, refresh: RefreshTokenRecord, access: AccessTokenRecord): Promise<void> {
      return c.run(async () => {
        await c.sql.begin(async (tx) => {
          await tx`
            INSERT INTO oauth_grants (id, account_id, workspace_id, client_id, client_name, scopes, resource, created_at, last_used_at, revoked_at)
            VALUES (${g.id}, ${g.accountId}, ${g.workspaceId}, ${g.clientId}, ${g.clientName}, ${joinScopes(g.scopes)}, ${g.resource}, ${g.createdAt},
              ${g.lastUsedAt}, ${g.revokedAt})`;
          await insertRefresh(tx as unknown as Sql, refresh);
          await insertAccess(tx as unknown as Sql, access);
        });
      });
    },

    getOAuthGrant(id: string) {
      return c.run(async () => one(await c.sql<Row<OAuthGrantRecord>[]>`SELECT ${unsafe(GRANT_COLUMNS)} FROM oauth_grants WHERE id = ${id}`, grantOf));
    },

    listOAuthGrants(accountId: string, now: number) {
      const [inUse, afterNow] = GRANT_IN_USE.split("$NOW");
      return c.run(async () =>
        (await c.sql<Row<OAuthGrantRecord>[]>`
          SELECT ${unsafe(GRANT_COLUMNS)} FROM oauth_grants WHERE account_id = ${accountId} AND ${unsafe(inUse!)}${now}${unsafe(afterNow!)}
          ORDER BY created_at DESC, id DESC`).map(grantOf));
    },

    revokeOAuthGrant(id: string, at: number, accountId?: string) {
      // Revoking twice keeps the first revocation time.
      return c.run(async () =>
        one(
          await c.sql<Row<OAuthGrantRecord>[]>`
            UPDATE oauth_grants SET revoked_at = COALESCE(revoked_at, ${at})
            WHERE id = ${id} AND (${accountId ?? null}::text IS NULL OR account_id = ${accountId ?? null})
            RETURNING ${unsafe(GRANT_COLUMNS)}`,
          grantOf,
        ));
    },

    touchOAuthGrant(id: string, at: number): Promise<void> {
      return c.run(async () => {
        await c.sql`UPDATE oauth_grants SET last_used_at = ${at} WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ${at})`;
      });
    },

    findRefreshToken(tokenHash: string) {
      return c.run(async () => one(await c.sql<RefreshRow[]>`${unsafe(REFRESH_SELECT)} WHERE r.token_hash = ${tokenHash}`, refreshOf));
    },

    rotateRefreshToken(oldHash: string, at: number, next: RefreshTokenRecord, access: AccessTokenRecord): Promise<boolean> {
      return c.run(() =>
        c.sql.begin(async (tx) => {
          const used = await tx`
            UPDATE oauth_refresh_tokens SET used_at = ${at} WHERE token_hash = ${oldHash} AND used_at IS NULL
              AND grant_id IN (SELECT id FROM oauth_grants WHERE revoked_at IS NULL)`;
          if (used.count !== 1) return false;
          await insertRefresh(tx as unknown as Sql, next);
          await insertAccess(tx as unknown as Sql, access);
          return true;
        }) as Promise<boolean>);
    },

    findAccessToken(tokenHash: string) {
      return c.run(async () =>
        one(await c.sql<Row<ReturnType<typeof accessOf>>[]>`${unsafe(ACCESS_SELECT)} WHERE a.token_hash = ${tokenHash}`, accessOf));
    },

    pruneOAuth(codesBefore: number, tokensBefore: number): Promise<number> {
      return c.run(async () => {
        const [row] = await c.sql<{ n: number }[]>`
          WITH codes AS (DELETE FROM oauth_codes WHERE expires_at < ${codesBefore} RETURNING 1),
            access AS (DELETE FROM oauth_access_tokens WHERE expires_at < ${tokensBefore} RETURNING 1),
            refresh AS (DELETE FROM oauth_refresh_tokens WHERE expires_at < ${tokensBefore} RETURNING 1)
          SELECT (SELECT count(*) FROM codes) + (SELECT count(*) FROM access) + (SELECT count(*) FROM refresh) AS n`;
        return Number(row?.n ?? 0);
      });
    },
  };
}

/** The API-keys role of the Postgres store. */
import type { ApiKeyRecord, KeyStore } from "../../ports.ts";
import { scopesText, toApiKeyRecord, type ApiKeyRow } from "../key-rows.ts";
import type { PostgresConnection } from "./connection.ts";

export const API_KEY_COLUMNS = `id, account_id AS "accountId", created_by AS "createdBy", name, key_hash AS "keyHash", prefix, created_at AS "createdAt",
  last_used_at AS "lastUsedAt", revoked_at AS "revokedAt", array_to_string(scopes, ' ') AS scopes`;

export function postgresKeys(c: PostgresConnection): KeyStore {
  const one = (row: ApiKeyRow | undefined) => (row ? toApiKeyRecord(row) : null);
  return {
    createApiKey(k: ApiKeyRecord): Promise<void> {
      return c.run(async () => {
        await c.sql`
          INSERT INTO api_keys (id, account_id, created_by, name, key_hash, prefix, created_at, last_used_at, revoked_at, scopes)
          VALUES (${k.id}, ${k.accountId}, ${k.createdBy}, ${k.name}, ${k.keyHash}, ${k.prefix}, ${k.createdAt},
                  ${k.lastUsedAt}, ${k.revokedAt}, string_to_array(${scopesText(k)}::text, ' '))`;
      });
    },

    findApiKeyByHash(keyHash: string): Promise<ApiKeyRecord | null> {
      return c.run(async () => {
        const [row] = await c.sql<ApiKeyRow[]>`
          SELECT ${c.sql.unsafe(API_KEY_COLUMNS)} FROM api_keys WHERE key_hash = ${keyHash}`;
        return one(row);
      });
    },

    listApiKeys(accountId: string): Promise<ApiKeyRecord[]> {
      return c.run(async () => {
        const rows = await c.sql<ApiKeyRow[]>`
          SELECT ${c.sql.unsafe(API_KEY_COLUMNS)} FROM api_keys
          WHERE account_id = ${accountId} ORDER BY created_at DESC, id DESC`;
        return rows.map(toApiKeyRecord);
      });
    },

    revokeApiKey(accountId: string, id: string, at: number): Promise<ApiKeyRecord | null> {
      return c.run(async () => {
        // Revoking twice keeps the first revocation time.
        const [row] = await c.sql<ApiKeyRow[]>`
          UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ${at})
          WHERE id = ${id} AND account_id = ${accountId}
          RETURNING ${c.sql.unsafe(API_KEY_COLUMNS)}`;
        return one(row);
      });
    },

    touchApiKey(id: string, at: number): Promise<void> {
      return c.run(async () => {
        // Concurrent requests may finish out of order: last-used time only moves forward.
        await c.sql`
          UPDATE api_keys SET last_used_at = ${at}
          WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ${at})`;
      });
    },
  };
}

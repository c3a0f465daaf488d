/** The API-keys role of the SQLite store. */
import type { ApiKeyRecord, KeyStore } from "../../ports.ts";
import type { SqliteConnection } from "./connection.ts";

export const API_KEY_COLUMNS = `id, account_id AS accountId, name, key_hash AS keyHash, prefix, created_at AS createdAt,
  last_used_at AS lastUsedAt, revoked_at AS revokedAt`;

export function sqliteKeys(c: SqliteConnection): KeyStore {
  return {
    async createApiKey(k: ApiKeyRecord): Promise<void> {
      c.st(
        `INSERT INTO api_keys (id, account_id, name, key_hash, prefix, created_at, last_used_at, revoked_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(k.id, k.accountId, k.name, k.keyHash, k.prefix, k.createdAt, k.lastUsedAt, k.revokedAt);
    },

    async findApiKeyByHash(keyHash: string): Promise<ApiKeyRecord | null> {
      return c.st<ApiKeyRecord>(`SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE key_hash = ?`).get(keyHash) ?? null;
    },

    async listApiKeys(accountId: string): Promise<ApiKeyRecord[]> {
      return c.st<ApiKeyRecord>(
        `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE account_id = ? ORDER BY created_at DESC, id DESC`,
      ).all(accountId);
    },

    async revokeApiKey(accountId: string, id: string, at: number): Promise<ApiKeyRecord | null> {
      // Revoking twice keeps the first revocation time.
      return (
        c.st<ApiKeyRecord>(
          `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND account_id = ?
           RETURNING ${API_KEY_COLUMNS}`,
        ).get(at, id, accountId) ?? null
      );
    },

    async touchApiKey(id: string, at: number): Promise<void> {
      // Concurrent requests may finish out of order: last-used time only moves forward.
      c.st(`UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`).run(
        at,
        id,
        at,
      );
    },
  };
}

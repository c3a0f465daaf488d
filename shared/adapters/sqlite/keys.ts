/** The API-keys role of the SQLite store. */
import type { ApiKeyRecord, KeyStore } from "../../ports.ts";
import { scopesText, toApiKeyRecord, type ApiKeyRow } from "../key-rows.ts";
import type { SqliteConnection } from "./connection.ts";

export const API_KEY_COLUMNS = `id, account_id AS accountId, created_by AS createdBy, name, key_hash AS keyHash, prefix, created_at AS createdAt,
  last_used_at AS lastUsedAt, revoked_at AS revokedAt, scopes`;

export function sqliteKeys(c: SqliteConnection): KeyStore {
  const one = (row: ApiKeyRow | null | undefined) => (row ? toApiKeyRecord(row) : null);
  return {
    async createApiKey(k: ApiKeyRecord): Promise<void> {
      c.st(
        `INSERT INTO api_keys (id, account_id, created_by, name, key_hash, prefix, created_at, last_used_at, revoked_at, scopes)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(k.id, k.accountId, k.createdBy, k.name, k.keyHash, k.prefix, k.createdAt, k.lastUsedAt, k.revokedAt, scopesText(k));
    },

    async findApiKeyByHash(keyHash: string): Promise<ApiKeyRecord | null> {
      return one(c.st<ApiKeyRow>(`SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE key_hash = ?`).get(keyHash));
    },

    async listApiKeys(accountId: string): Promise<ApiKeyRecord[]> {
      return c.st<ApiKeyRow>(
        `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE account_id = ? ORDER BY created_at DESC, id DESC`,
      ).all(accountId).map(toApiKeyRecord);
    },

    async revokeApiKey(accountId: string, id: string, at: number): Promise<ApiKeyRecord | null> {
      // Revoking twice keeps the first revocation time.
      return one(
        c.st<ApiKeyRow>(
          `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND account_id = ?
           RETURNING ${API_KEY_COLUMNS}`,
        ).get(at, id, accountId),
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

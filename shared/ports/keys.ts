/** The API-keys role of the store: keys are kept by their hash only. */
import type { Scope } from "../enums.ts";

export interface ApiKeyRecord {
  id: string;
  /** The workspace the key acts for (its owner column, ADR 0011). */
  accountId: string;
  /** The account that made it: a member removed from the workspace has their keys there revoked. */
  createdBy: string;
  name: string;
  /** SHA-256 hex of the full key; the key itself is shown once and never stored. */
  keyHash: string;
  /** Display prefix, e.g. "ck_AbC1". */
  prefix: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
  /**
   * What the key may do (issue #23), as it was created; null for a key made before keys had scopes, which keeps
   * every scope (control/keys/service.ts reads it so). Stores keep the order given and drop names they do not know.
   */
  scopes: readonly Scope[] | null;
}

export interface KeyStore {
  createApiKey(key: ApiKeyRecord): Promise<void>;
  findApiKeyByHash(keyHash: string): Promise<ApiKeyRecord | null>;
  listApiKeys(accountId: string): Promise<ApiKeyRecord[]>;
  /** Returns the revoked key, or null when it is unknown or another account's. */
  revokeApiKey(accountId: string, id: string, at: number): Promise<ApiKeyRecord | null>;
  touchApiKey(id: string, at: number): Promise<void>;
}

/**
 * An API key's row as both SQL stores select it: the scopes as one space-separated text (as OAuth writes them),
 * NULL for a key made before scopes. SQLite stores that text; Postgres a text[] it joins and splits in SQL.
 */
import { isOneOf, SCOPES } from "../enums.ts";
import type { ApiKeyRecord } from "../ports.ts";

export type ApiKeyRow = Omit<ApiKeyRecord, "scopes"> & { scopes: string | null };

/** The record of a row; a scope this version does not know (written by a newer one) is dropped, never granted. */
export const toApiKeyRecord = (row: ApiKeyRow): ApiKeyRecord => ({
  ...row,
  scopes: row.scopes === null ? null : row.scopes.split(" ").filter((s) => isOneOf(SCOPES, s)),
});

/**
 * A record's scopes as the row's text. A key of an export file written before scopes has no `scopes` at all: like
 * every key of that time, it keeps every scope (NULL).
 */
/** Who made a key: a key of an export file written before workspaces has no `createdBy`; its account made it. */
export const keyCreator = (k: Pick<ApiKeyRecord, "accountId" | "createdBy">): string => k.createdBy ?? k.accountId;

export const scopesText = (k: Pick<ApiKeyRecord, "scopes">): string | null => (k.scopes == null ? null : k.scopes.join(" "));

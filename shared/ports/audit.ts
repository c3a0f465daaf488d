/**
 * The audit-log role of the store (issue #24): who did what and when in a workspace (link, key, domain and member
 * changes; sign-ins), kept a year by default. Entries are appended and read newest first; nothing updates them.
 */

export interface AuditEntry {
  id: string;
  workspaceId: string;
  at: number;
  /** Who: the account, and the key or OAuth grant it came with (null: the dashboard session or the system). */
  actorAccountId: string | null;
  actorKeyId: string | null;
  /** What, as `<subject>.<verb>`: link.created, key.revoked, domain.verified, member.removed, session.signed_in… */
  action: string;
  /** On what: its kind and id (a link's slug is in `detail`); null for workspace-wide actions. */
  targetType: string | null;
  targetId: string | null;
  /** A small JSON object: what changed (field names, never secrets or passwords). */
  detail: Record<string, unknown>;
}

export interface AuditQuery {
  /** Newest first; entries at or before `before` (an entry id cursor), at most `limit`. */
  limit: number;
  cursor?: string;
  action?: string;
  actorAccountId?: string;
  from?: number;
  to?: number;
}

export interface AuditStore {
  appendAudit(entries: AuditEntry[]): Promise<void>;
  listAudit(workspaceId: string, query: AuditQuery): Promise<{ entries: AuditEntry[]; nextCursor: string | null }>;
  /** Deletes entries older than `before`, at most `max`; returns how many. */
  pruneAudit(before: number, max: number): Promise<number>;
}

/**
 * The audit-log role of the store (issue #24): who did what and when in a workspace (link, key, domain and member
 * changes; sign-ins), kept a year by default (AUDIT_RETENTION_DAYS). Entries are appended and read newest first;
 * nothing updates them. control/audit/service.ts builds and records them.
 */

export interface AuditEntry {
  id: string;
  workspaceId: string;
  at: number;
  /** Who: the account (null: the system), and the API key or OAuth grant it came with (both null: a dashboard session). */
  actorAccountId: string | null;
  actorKeyId: string | null;
  actorGrantId: string | null;
  /** What, as `<subject>.<verb>`: link.created, key.revoked, domain.verified, member.removed, session.signed_in… */
  action: string;
  /** On what: its kind and id (a link's slug is in `detail`); null for workspace-wide actions. */
  targetType: string | null;
  targetId: string | null;
  /** A small JSON object: what changed (field names, never secrets or passwords). */
  detail: Record<string, unknown>;
}

/** An entry as read back: with the actor's email when the account still exists. */
export interface ListedAuditEntry extends AuditEntry {
  actorEmail: string | null;
}

/** Where a page ends: the last entry shown; the next page starts strictly after it (older, or as old with a lower id). */
export interface AuditPosition {
  at: number;
  id: string;
}

export interface AuditQuery {
  /** Newest first (by `at`, then `id`), at most `limit`. */
  limit: number;
  after?: AuditPosition;
  action?: string;
  actorAccountId?: string;
  /** Inclusive bounds on `at` (epoch ms). */
  from?: number;
  to?: number;
}

export interface AuditStore {
  appendAudit(entries: readonly AuditEntry[]): Promise<void>;
  listAudit(workspaceId: string, query: AuditQuery): Promise<ListedAuditEntry[]>;
  /** Deletes entries older than `before` (every workspace's), the oldest first, at most `max`; returns how many. */
  pruneAudit(before: number, max: number): Promise<number>;
}

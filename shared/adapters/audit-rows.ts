/** What both SQL stores share for the audit log (issue #24): the table, its columns, and a row as an entry. */
import type { AuditEntry, ListedAuditEntry } from "../ports/audit.ts";

/** The table in each store's types: SQLite migration 22, Postgres migration 24. */
export function auditDdl(t: { text: string; bigint: string; bytewise: string; clustered: string }): string {
  return `
-- No foreign keys: an entry outlives the key, link or member it names (and the account, whose email is then unknown).
-- Keyed by what a page reads, a workspace's entries by time then id (SQLite stores the rows in that order): one
-- B-tree fewer to write per entry than an id key with a (workspace, time) index; audit_log_at serves the prune.
CREATE TABLE audit_log (
  workspace_id     ${t.text} NOT NULL,
  at               ${t.bigint} NOT NULL,
  id               ${t.text}${t.bytewise} NOT NULL, -- pages end on (at, id), compared byte by byte in both stores
  actor_account_id ${t.text},
  actor_key_id     ${t.text},
  actor_grant_id   ${t.text},
  action           ${t.text} NOT NULL,
  target_type      ${t.text},
  target_id        ${t.text},
  detail           ${t.text} NOT NULL, -- JSON object
  PRIMARY KEY (workspace_id, at, id)
)${t.clustered};
CREATE INDEX audit_log_at ON audit_log(at);
`;
}

/** Column list for SELECT over `audit_log a LEFT JOIN accounts u`, with the entry's names (quoted for Postgres). */
export const auditColumns = (q: (name: string) => string) =>
  [
    ["a.id", "id"], ["a.workspace_id", "workspaceId"], ["a.at", "at"], ["a.actor_account_id", "actorAccountId"],
    ["a.actor_key_id", "actorKeyId"], ["a.actor_grant_id", "actorGrantId"], ["a.action", "action"],
    ["a.target_type", "targetType"], ["a.target_id", "targetId"], ["a.detail", "detail"], ["u.email", "actorEmail"],
  ].map(([col, name]) => `${col} AS ${q(name)}`).join(", ");

/** A row read with auditColumns: detail is stored as JSON text. */
export function toListedAuditEntry(row: Omit<ListedAuditEntry, "detail"> & { detail: string }): ListedAuditEntry {
  return { ...row, detail: JSON.parse(row.detail) as Record<string, unknown> };
}

/** The values of an insert, in the order of the table's columns. */
export const auditValues = (e: AuditEntry) =>
  [e.id, e.workspaceId, e.at, e.actorAccountId, e.actorKeyId, e.actorGrantId, e.action, e.targetType, e.targetId, JSON.stringify(e.detail)] as const;

/** The audit-log role of the SQLite store (migration 22). */
import type { AuditEntry, AuditQuery, AuditStore, ListedAuditEntry } from "../../ports/audit.ts";
import { auditColumns, auditDdl, auditValues, toListedAuditEntry } from "../audit-rows.ts";
import type { SqliteConnection } from "./connection.ts";

/** Migration 22. */
export const AUDIT_SQLITE = auditDdl({ text: "TEXT", bigint: "INTEGER", bytewise: "", clustered: " WITHOUT ROWID" });

const SELECT = `SELECT ${auditColumns((n) => n)} FROM audit_log a LEFT JOIN accounts u ON u.id = a.actor_account_id`;
type Row = Omit<ListedAuditEntry, "detail"> & { detail: string };

/** The WHERE clause for the filters a query sets, and its values: one prepared statement per combination (32 at most). */
function where(workspaceId: string, q: AuditQuery): { clause: string; values: (string | number)[] } {
  const parts = ["a.workspace_id = ?"];
  const values: (string | number)[] = [workspaceId];
  if (q.after) parts.push("(a.at, a.id) < (?, ?)"), values.push(q.after.at, q.after.id);
  if (q.from !== undefined) parts.push("a.at >= ?"), values.push(q.from);
  if (q.to !== undefined) parts.push("a.at <= ?"), values.push(q.to);
  if (q.action !== undefined) parts.push("a.action = ?"), values.push(q.action);
  if (q.actorAccountId !== undefined) parts.push("a.actor_account_id = ?"), values.push(q.actorAccountId);
  return { clause: parts.join(" AND "), values };
}

export function sqliteAudit(c: SqliteConnection): AuditStore {
  const append = c.db.transaction((entries: readonly AuditEntry[]) => {
    const insert = c.st(`INSERT INTO audit_log (id, workspace_id, at, actor_account_id, actor_key_id, actor_grant_id, action, target_type, target_id, detail)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    for (const e of entries) insert.run(...auditValues(e));
  });

  return {
    async appendAudit(entries: readonly AuditEntry[]): Promise<void> {
      if (entries.length > 0) append.immediate(entries);
    },

    async listAudit(workspaceId: string, q: AuditQuery): Promise<ListedAuditEntry[]> {
      const { clause, values } = where(workspaceId, q);
      return c.st<Row>(`${SELECT} WHERE ${clause} ORDER BY a.at DESC, a.id DESC LIMIT ?`).all(...values, q.limit).map(toListedAuditEntry);
    },

    async pruneAudit(before: number, max: number): Promise<number> {
      return c.st(`DELETE FROM audit_log WHERE (workspace_id, at, id) IN (SELECT workspace_id, at, id FROM audit_log WHERE at < ? ORDER BY at LIMIT ?)`).run(before, max).changes;
    },
  };
}

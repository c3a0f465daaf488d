/** The audit-log role of the Postgres store (migration 24). */
import type { AuditEntry, AuditQuery, AuditStore, ListedAuditEntry } from "../../ports/audit.ts";
import { auditColumns, auditDdl, auditValues, toListedAuditEntry } from "../audit-rows.ts";
import type { PostgresConnection } from "./connection.ts";

/** Migration 24. */
export const AUDIT_POSTGRES = auditDdl({ text: "text", bigint: "bigint", bytewise: ' COLLATE "C"', clustered: "" });

const COLUMNS = auditColumns((n) => `"${n}"`);
type Row = Omit<ListedAuditEntry, "detail"> & { detail: string };

export function postgresAudit(c: PostgresConnection): AuditStore {
  const { sql } = c;
  const cols = sql.unsafe(COLUMNS);
  const empty = sql``;
  return {
    appendAudit(entries: readonly AuditEntry[]): Promise<void> {
      if (entries.length === 0) return Promise.resolve();
      const columns = entries.map(auditValues);
      const col = (i: number) => columns.map((v) => v[i]);
      return c.run(async () => {
        await sql`
          INSERT INTO audit_log (id, workspace_id, at, actor_account_id, actor_key_id, actor_grant_id, action, target_type, target_id, detail)
          SELECT * FROM unnest(${col(0)}::text[], ${col(1)}::text[], ${col(2)}::bigint[], ${col(3)}::text[], ${col(4)}::text[],
            ${col(5)}::text[], ${col(6)}::text[], ${col(7)}::text[], ${col(8)}::text[], ${col(9)}::text[])`;
      });
    },

    listAudit(workspaceId: string, q: AuditQuery): Promise<ListedAuditEntry[]> {
      return c.run(async () => {
        const rows = await sql<Row[]>`
          SELECT ${cols} FROM audit_log a LEFT JOIN accounts u ON u.id = a.actor_account_id
          WHERE a.workspace_id = ${workspaceId}
            ${q.after ? sql`AND (a.at, a.id) < (${q.after.at}, ${q.after.id})` : empty}
            ${q.from !== undefined ? sql`AND a.at >= ${q.from}` : empty}
            ${q.to !== undefined ? sql`AND a.at <= ${q.to}` : empty}
            ${q.action !== undefined ? sql`AND a.action = ${q.action}` : empty}
            ${q.actorAccountId !== undefined ? sql`AND a.actor_account_id = ${q.actorAccountId}` : empty}
          ORDER BY a.at DESC, a.id DESC LIMIT ${q.limit}`;
        return rows.map(toListedAuditEntry);
      });
    },

    pruneAudit(before: number, max: number): Promise<number> {
      return c.run(async () => {
        const { count } = await sql`DELETE FROM audit_log WHERE (workspace_id, at, id) IN (SELECT workspace_id, at, id FROM audit_log WHERE at < ${before} ORDER BY at LIMIT ${max})`;
        return count;
      });
    },
  };
}

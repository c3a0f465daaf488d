/** The workspaces role of the SQLite store (migration 21, ADR 0011): workspaces, their members, invitations. */
import type { Database } from "bun:sqlite";
import type { Role } from "../../enums.ts";
import type { ExportRecord } from "../../ports/admin.ts";
import type { InvitationRecord, MemberListing, MemberRecord, Membership, WorkspaceRecord, WorkspaceStore } from "../../ports/workspaces.ts";
import {
  INVITATION_COLUMNS, INVITATION_INSERT, invitationRefusal, invitationValues, MEMBER_COLUMNS, memberListingSql, membershipOrder, WORKSPACE_COLUMNS,
  WORKSPACE_OWNED_TABLES, workspacesDdl,
} from "../workspace-rows.ts";
import type { SqliteConnection } from "./connection.ts";

/** Migration 21: the tables and personal workspaces (SQL), then the owner columns pointed at workspaces (ownersToWorkspaces). */
export const WORKSPACES_SQLITE = workspacesDdl({ text: "TEXT", bigint: "INTEGER" });

/**
 * Points each workspace-owned table's `account_id` at workspaces(id) instead of accounts(id): a shared workspace's
 * id is no account's. SQLite cannot alter a constraint, so each table is made again from its stored definition,
 * rows copied, its indexes and triggers recreated (SQLite's documented procedure: foreign keys are off while
 * migrations run, applySqliteMigrations, so dropping the old table cascades nowhere). Every row's owner is an
 * account id, which is its personal workspace's id: the check after each table finds nothing orphaned.
 */
export function ownersToWorkspaces(db: Database): void {
  for (const table of WORKSPACE_OWNED_TABLES) {
    const def = db.query<{ sql: string }, [string]>(`SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?`).get(table)!.sql;
    const dependents = db
      .query<{ sql: string }, [string]>(`SELECT sql FROM sqlite_schema WHERE tbl_name = ? AND type IN ('index', 'trigger') AND sql IS NOT NULL`)
      .all(table);
    const fresh = def
      .replace(/^CREATE TABLE\s+("?)\w+\1/, `CREATE TABLE ${table}_v21`)
      .replace(/REFERENCES\s+"?accounts"?\s*\(id\)/, "REFERENCES workspaces(id)");
    if (!fresh.includes("REFERENCES workspaces(id)")) throw new Error(`migration 21: ${table} has no owner column to point at workspaces`);
    db.run(fresh);
    db.run(`INSERT INTO ${table}_v21 SELECT * FROM ${table}`);
    db.run(`DROP TABLE ${table}`);
    db.run(`ALTER TABLE ${table}_v21 RENAME TO ${table}`);
    for (const d of dependents) db.run(d.sql);
    if (db.query(`PRAGMA foreign_key_check(${table})`).all().length > 0) throw new Error(`migration 21: ${table} has rows of no workspace`);
  }
}

const WORKSPACE_SELECT = `SELECT ${WORKSPACE_COLUMNS} FROM workspaces`;
const MEMBER_SELECT = `SELECT ${MEMBER_COLUMNS} FROM workspace_members`;
const INVITATION_SELECT = `SELECT ${INVITATION_COLUMNS} FROM workspace_invitations`;

/** Writes a workspace and its owner's membership in the caller's transaction; false if the id is taken. */
export function insertWorkspace(c: SqliteConnection, w: WorkspaceRecord, owner: string): boolean {
  const made = c.st(`INSERT INTO workspaces (id, name, personal_of, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`)
    .run(w.id, w.name, w.personalOf, w.createdAt).changes === 1;
  if (made) {
    c.st(`INSERT INTO workspace_members (workspace_id, account_id, role, created_at) VALUES (?, ?, 'owner', ?)`).run(w.id, owner, w.createdAt);
  }
  return made;
}

export function sqliteWorkspaces(c: SqliteConnection): WorkspaceStore {
  const create = c.db.transaction(insertWorkspace.bind(null, c));

  const removeMember = c.db.transaction((workspaceId: string, accountId: string, at: number) => {
    const removed = c.st(`DELETE FROM workspace_members WHERE workspace_id = ? AND account_id = ?`).run(workspaceId, accountId).changes === 1;
    if (!removed) return { removed, revokedKeyHashes: [] };
    const revoked = c.st<{ keyHash: string }>(
      `UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND created_by = ? AND revoked_at IS NULL RETURNING key_hash AS keyHash`,
    ).all(at, workspaceId, accountId);
    // A session acting for this workspace falls back to its account's personal one.
    c.st(`UPDATE sessions SET workspace_id = NULL WHERE account_id = ? AND workspace_id = ?`).run(accountId, workspaceId);
    return { removed, revokedKeyHashes: revoked.map((r) => r.keyHash) };
  });

  const accept = c.db.transaction((tokenHash: string, accountId: string, now: number) => {
    const i = c.st<InvitationRecord>(`${INVITATION_SELECT} WHERE token_hash = ?`).get(tokenHash);
    const member = i ? c.st(`SELECT 1 FROM workspace_members WHERE workspace_id = ? AND account_id = ?`).get(i.workspaceId, accountId) !== null : false;
    const reason = invitationRefusal(i, now, member);
    if (reason || !i) return { ok: false as const, reason: reason ?? "unknown" };
    c.st(`UPDATE workspace_invitations SET used_at = ?, used_by = ? WHERE id = ?`).run(now, accountId, i.id);
    c.st(`INSERT INTO workspace_members (workspace_id, account_id, role, created_at) VALUES (?, ?, ?, ?)`).run(i.workspaceId, accountId, i.role, now);
    return { ok: true as const, invitation: { ...i, usedAt: now, usedBy: accountId } };
  });

  return {
    async createWorkspace(w: WorkspaceRecord, owner: string): Promise<boolean> {
      return create.immediate(w, owner);
    },

    async getWorkspace(id: string): Promise<WorkspaceRecord | null> {
      return c.st<WorkspaceRecord>(`${WORKSPACE_SELECT} WHERE id = ?`).get(id) ?? null;
    },

    async renameWorkspace(id: string, name: string): Promise<boolean> {
      return c.st(`UPDATE workspaces SET name = ? WHERE id = ?`).run(name, id).changes === 1;
    },

    async setDefaultDomain(id: string, hostname: string | null): Promise<boolean> {
      return c.st(`UPDATE workspaces SET default_domain = ? WHERE id = ?`).run(hostname, id).changes === 1;
    },

    async deleteWorkspace(id: string): Promise<boolean> {
      return c.db.transaction(() => {
        // Its audit log names it without a foreign key (appends stay a plain insert); everything else it holds names
        // it by one ON DELETE CASCADE (links and their click data through them, keys, domains, import jobs, webhook
        // endpoints and their deliveries, members, invitations, OAuth grants).
        c.st(`DELETE FROM audit_log WHERE workspace_id = ?`).run(id);
        return c.st(`DELETE FROM workspaces WHERE id = ?`).run(id).changes === 1;
      }).immediate();
    },

    async listMemberships(accountId: string): Promise<Membership[]> {
      return c.st<WorkspaceRecord & { role: Role }>(
        `SELECT w.id, w.name, w.personal_of AS personalOf, w.default_domain AS defaultDomain, w.created_at AS createdAt, m.role
         FROM workspace_members m JOIN workspaces w ON w.id = m.workspace_id WHERE m.account_id = ? ORDER BY ${membershipOrder()}`,
      ).all(accountId).map(({ role, ...workspace }) => ({ workspace, role }));
    },

    async getMember(workspaceId: string, accountId: string): Promise<MemberRecord | null> {
      return c.st<MemberRecord>(`${MEMBER_SELECT} WHERE workspace_id = ? AND account_id = ?`).get(workspaceId, accountId) ?? null;
    },

    async listMembers(workspaceId: string): Promise<MemberListing[]> {
      return c.st<MemberListing>(memberListingSql("?")).all(workspaceId);
    },

    async setMemberRole(workspaceId: string, accountId: string, role: Role): Promise<boolean> {
      return c.st(`UPDATE workspace_members SET role = ? WHERE workspace_id = ? AND account_id = ?`).run(role, workspaceId, accountId).changes === 1;
    },

    async removeMember(workspaceId: string, accountId: string, at: number) {
      return removeMember.immediate(workspaceId, accountId, at);
    },

    async createInvitation(i: InvitationRecord): Promise<void> {
      c.st(`${INVITATION_INSERT} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(...invitationValues(i));
    },

    async listInvitations(workspaceId: string): Promise<InvitationRecord[]> {
      return c.st<InvitationRecord>(`${INVITATION_SELECT} WHERE workspace_id = ? ORDER BY created_at DESC, id DESC`).all(workspaceId);
    },

    async revokeInvitation(workspaceId: string, id: string, at: number): Promise<boolean> {
      // Revoking twice keeps the first time; a used invitation is spent, not revoked.
      return c.st(
        `UPDATE workspace_invitations SET revoked_at = COALESCE(revoked_at, ?) WHERE workspace_id = ? AND id = ? AND used_at IS NULL`,
      ).run(at, workspaceId, id).changes === 1;
    },

    async findInvitation(tokenHash: string): Promise<InvitationRecord | null> {
      return c.st<InvitationRecord>(`${INVITATION_SELECT} WHERE token_hash = ?`).get(tokenHash) ?? null;
    },

    async acceptInvitation(tokenHash: string, accountId: string, now: number) {
      return accept.immediate(tokenHash, accountId, now);
    },
  };
}

/** Every workspace, then every membership, as export records (`npm run export`), read on `db` inside the export's snapshot. */
export function* workspaceExportRecords(db: Database): Iterable<ExportRecord> {
  for (const w of db.query<WorkspaceRecord, []>(`${WORKSPACE_SELECT} ORDER BY created_at, id`).iterate()) yield { type: "workspace", data: w };
  for (const m of db.query<MemberRecord, []>(`${MEMBER_SELECT} ORDER BY workspace_id, created_at, account_id`).iterate()) yield { type: "member", data: m };
}

/**
 * Writes imported workspaces and members in the caller's transaction, counting what was written. A shared
 * workspace whose id exists is skipped; a personal one (made with its account) only takes the record's name. A
 * member whose workspace or account is missing, or who is one already, is skipped.
 */
export function importWorkspaceRecords(c: SqliteConnection, workspaces: readonly WorkspaceRecord[], members: readonly MemberRecord[]) {
  const shared = c.st(`INSERT INTO workspaces (id, name, personal_of, default_domain, created_at) VALUES (?, ?, NULL, ?, ?) ON CONFLICT DO NOTHING`);
  const personal = c.st(
    `UPDATE workspaces SET name = ?, default_domain = ? WHERE id = ? AND personal_of = ? AND (name <> ? OR default_domain IS NOT ?)`,
  );
  const member = c.st(
    `INSERT INTO workspace_members (workspace_id, account_id, role, created_at) SELECT ?, ?, ?, ?
     WHERE EXISTS (SELECT 1 FROM workspaces WHERE id = ?) AND EXISTS (SELECT 1 FROM accounts WHERE id = ?) ON CONFLICT DO NOTHING`,
  );
  const n = { workspaces: 0, members: 0 };
  for (const w of workspaces) {
    // A file from before default domains has none: the base domain.
    const dd = w.defaultDomain ?? null;
    n.workspaces += w.personalOf === null ? shared.run(w.id, w.name, dd, w.createdAt).changes : personal.run(w.name, dd, w.id, w.personalOf, w.name, dd).changes;
  }
  for (const m of members) n.members += member.run(m.workspaceId, m.accountId, m.role, m.createdAt, m.workspaceId, m.accountId).changes;
  return n;
}

/** The workspaces role of the Postgres store (migration 23, ADR 0011): workspaces, their members, invitations. */
import type postgres from "postgres";
import type { Role } from "../../enums.ts";
import type { ExportRecord } from "../../ports/admin.ts";
import type { InvitationRecord, InvitationRefusal, MemberListing, MemberRecord, Membership, WorkspaceRecord, WorkspaceStore } from "../../ports/workspaces.ts";
import {
  INVITATION_COLUMNS, INVITATION_INSERT, invitationRefusal, invitationValues, MEMBER_COLUMNS, memberListingSql, membershipOrder, WORKSPACE_COLUMNS,
  WORKSPACE_OWNED_TABLES, workspacesDdl,
} from "../workspace-rows.ts";
import type { PostgresConnection } from "./connection.ts";

/**
 * Migration 23: the tables and personal workspaces, then each workspace-owned table's `account_id` points at
 * workspaces(id) instead of accounts(id) (a shared workspace's id is no account's). Its constraint is found by what it
 * references, not by name; the new one is checked against every row (each owner is an account id, which is its
 * personal workspace's id).
 */
export const WORKSPACES_POSTGRES = `${workspacesDdl({ text: "text", bigint: "bigint" })}
DO $$
DECLARE t text; c text;
BEGIN
  FOREACH t IN ARRAY ARRAY[${WORKSPACE_OWNED_TABLES.map((t) => `'${t}'`).join(", ")}] LOOP
    FOR c IN SELECT conname FROM pg_constraint WHERE conrelid = t::regclass AND confrelid = 'accounts'::regclass AND contype = 'f' LOOP
      EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', t, c);
    END LOOP;
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I FOREIGN KEY (account_id) REFERENCES workspaces(id) ON DELETE CASCADE', t, t || '_workspace_fkey');
  END LOOP;
END $$;
`;

type Tx = postgres.TransactionSql;

/** Writes a workspace and its owner's membership on `tx`; false if the id is taken. */
export async function insertWorkspace(tx: Tx, w: WorkspaceRecord, owner: string): Promise<boolean> {
  const { count } = await tx`
    INSERT INTO workspaces (id, name, personal_of, created_at) VALUES (${w.id}, ${w.name}, ${w.personalOf}, ${w.createdAt})
    ON CONFLICT DO NOTHING`;
  if (count === 1) {
    await tx`INSERT INTO workspace_members (workspace_id, account_id, role, created_at) VALUES (${w.id}, ${owner}, 'owner', ${w.createdAt})`;
  }
  return count === 1;
}

/** Thrown inside acceptInvitation's transaction to undo it: the account became a member meanwhile. */
class AlreadyMember extends Error {}

export function postgresWorkspaces(c: PostgresConnection): WorkspaceStore {
  const { sql } = c;
  const workspaceCols = sql.unsafe(WORKSPACE_COLUMNS);
  const memberCols = sql.unsafe(MEMBER_COLUMNS);
  const invitationCols = sql.unsafe(INVITATION_COLUMNS);

  return {
    createWorkspace(w: WorkspaceRecord, owner: string): Promise<boolean> {
      return c.run(() => sql.begin((tx) => insertWorkspace(tx, w, owner)));
    },

    getWorkspace(id: string): Promise<WorkspaceRecord | null> {
      return c.run(async () => (await sql<WorkspaceRecord[]>`SELECT ${workspaceCols} FROM workspaces WHERE id = ${id}`)[0] ?? null);
    },

    renameWorkspace(id: string, name: string): Promise<boolean> {
      return c.run(async () => (await sql`UPDATE workspaces SET name = ${name} WHERE id = ${id}`).count === 1);
    },

    setDefaultDomain(id: string, hostname: string | null): Promise<boolean> {
      return c.run(async () => (await sql`UPDATE workspaces SET default_domain = ${hostname} WHERE id = ${id}`).count === 1);
    },

    deleteWorkspace(id: string): Promise<boolean> {
      return c.run(() =>
        sql.begin(async (tx) => {
          // Its audit log names it without a foreign key (appends stay a plain insert); everything else it holds names
          // it by one ON DELETE CASCADE (links and their click data through them, keys, domains, import jobs, webhook
          // endpoints and their deliveries, members, invitations, OAuth grants).
          await tx`DELETE FROM audit_log WHERE workspace_id = ${id}`;
          return (await tx`DELETE FROM workspaces WHERE id = ${id}`).count === 1;
        }));
    },

    listMemberships(accountId: string): Promise<Membership[]> {
      return c.run(async () => {
        const rows = await sql<(WorkspaceRecord & { role: Role })[]>`
          SELECT w.id, w.name, w.personal_of AS "personalOf", w.default_domain AS "defaultDomain", w.created_at AS "createdAt", m.role
          FROM workspace_members m JOIN workspaces w ON w.id = m.workspace_id
          WHERE m.account_id = ${accountId} ORDER BY ${sql.unsafe(membershipOrder(` COLLATE "C"`))}`;
        return rows.map(({ role, ...workspace }) => ({ workspace, role }));
      });
    },

    getMember(workspaceId: string, accountId: string): Promise<MemberRecord | null> {
      return c.run(async () =>
        (await sql<MemberRecord[]>`SELECT ${memberCols} FROM workspace_members WHERE workspace_id = ${workspaceId} AND account_id = ${accountId}`)[0] ?? null);
    },

    listMembers(workspaceId: string): Promise<MemberListing[]> {
      return c.run(async () => [...(await sql.unsafe<MemberListing[]>(memberListingSql("$1", ` COLLATE "C"`), [workspaceId]))]);
    },

    setMemberRole(workspaceId: string, accountId: string, role: Role): Promise<boolean> {
      return c.run(async () =>
        (await sql`UPDATE workspace_members SET role = ${role} WHERE workspace_id = ${workspaceId} AND account_id = ${accountId}`).count === 1);
    },

    removeMember(workspaceId: string, accountId: string, at: number) {
      return c.run(() =>
        sql.begin(async (tx) => {
          const { count } = await tx`DELETE FROM workspace_members WHERE workspace_id = ${workspaceId} AND account_id = ${accountId}`;
          if (count !== 1) return { removed: false, revokedKeyHashes: [] };
          const revoked = await tx<{ keyHash: string }[]>`
            UPDATE api_keys SET revoked_at = ${at} WHERE account_id = ${workspaceId} AND created_by = ${accountId} AND revoked_at IS NULL
            RETURNING key_hash AS "keyHash"`;
          // A session acting for this workspace falls back to its account's personal one.
          await tx`UPDATE sessions SET workspace_id = NULL WHERE account_id = ${accountId} AND workspace_id = ${workspaceId}`;
          return { removed: true, revokedKeyHashes: revoked.map((r) => r.keyHash) };
        }));
    },

    createInvitation(i: InvitationRecord): Promise<void> {
      return c.run(async () => {
        const [id, workspaceId, tokenHash, role, createdBy, createdAt, expiresAt, usedAt, usedBy, revokedAt] = invitationValues(i);
        await sql`${sql.unsafe(INVITATION_INSERT)} VALUES (${id}, ${workspaceId}, ${tokenHash}, ${role}, ${createdBy}, ${createdAt},
          ${expiresAt}, ${usedAt}, ${usedBy}, ${revokedAt})`;
      });
    },

    listInvitations(workspaceId: string): Promise<InvitationRecord[]> {
      return c.run(async () => [
        ...(await sql<InvitationRecord[]>`
          SELECT ${invitationCols} FROM workspace_invitations WHERE workspace_id = ${workspaceId} ORDER BY created_at DESC, id COLLATE "C" DESC`),
      ]);
    },

    revokeInvitation(workspaceId: string, id: string, at: number): Promise<boolean> {
      // Revoking twice keeps the first time; a used invitation is spent, not revoked.
      return c.run(async () =>
        (await sql`
          UPDATE workspace_invitations SET revoked_at = COALESCE(revoked_at, ${at})
          WHERE workspace_id = ${workspaceId} AND id = ${id} AND used_at IS NULL`).count === 1);
    },

    findInvitation(tokenHash: string): Promise<InvitationRecord | null> {
      return c.run(async () => (await sql<InvitationRecord[]>`SELECT ${invitationCols} FROM workspace_invitations WHERE token_hash = ${tokenHash}`)[0] ?? null);
    },

    acceptInvitation(tokenHash: string, accountId: string, now: number) {
      type Taken = { ok: true; invitation: InvitationRecord } | { ok: false; reason: InvitationRefusal };
      return c.run(async (): Promise<Taken> => {
        try {
          return await sql.begin(async (tx): Promise<Taken> => {
            // The row lock makes a second taker wait, then read it used.
            const [i] = await tx<InvitationRecord[]>`SELECT ${invitationCols} FROM workspace_invitations WHERE token_hash = ${tokenHash} FOR UPDATE`;
            const member = i
              ? (await tx`SELECT 1 FROM workspace_members WHERE workspace_id = ${i.workspaceId} AND account_id = ${accountId}`).length > 0
              : false;
            const reason = invitationRefusal(i ?? null, now, member);
            if (reason || !i) return { ok: false, reason: reason ?? "unknown" };
            await tx`UPDATE workspace_invitations SET used_at = ${now}, used_by = ${accountId} WHERE id = ${i.id}`;
            // Another invitation to the same workspace taken at the same instant: this one is undone.
            const { count } = await tx`
              INSERT INTO workspace_members (workspace_id, account_id, role, created_at) VALUES (${i.workspaceId}, ${accountId}, ${i.role}, ${now})
              ON CONFLICT DO NOTHING`;
            if (count !== 1) throw new AlreadyMember();
            return { ok: true, invitation: { ...i, usedAt: now, usedBy: accountId } };
          });
        } catch (err) {
          if (err instanceof AlreadyMember) return { ok: false, reason: "already_member" };
          throw err;
        }
      });
    },
  };
}

/** Every workspace, then every membership, as export records (`npm run export`), read on `tx` (the export's snapshot). */
export async function* workspaceExportRecords(tx: postgres.ReservedSql): AsyncIterable<ExportRecord> {
  for (const w of await tx<WorkspaceRecord[]>`SELECT ${tx.unsafe(WORKSPACE_COLUMNS)} FROM workspaces ORDER BY created_at, id COLLATE "C"`) {
    yield { type: "workspace", data: w };
  }
  const members = await tx<MemberRecord[]>`
    SELECT ${tx.unsafe(MEMBER_COLUMNS)} FROM workspace_members ORDER BY workspace_id COLLATE "C", created_at, account_id COLLATE "C"`;
  for (const m of members) yield { type: "member", data: m };
}

/**
 * Writes imported workspaces and members on `tx` (the import's transaction), counting what was written. A shared
 * workspace whose id exists is skipped; a personal one (made with its account) only takes the record's name. A
 * member whose workspace or account is missing, or who is one already, is skipped.
 */
export async function importWorkspaceRecords(tx: Tx, workspaces: readonly WorkspaceRecord[], members: readonly MemberRecord[]) {
  const n = { workspaces: 0, members: 0 };
  for (const w of workspaces) {
    // A file from before default domains has none: the base domain.
    const dd = w.defaultDomain ?? null;
    n.workspaces += (w.personalOf === null
      ? await tx`INSERT INTO workspaces (id, name, personal_of, default_domain, created_at) VALUES (${w.id}, ${w.name}, NULL, ${dd}, ${w.createdAt}) ON CONFLICT DO NOTHING`
      : await tx`UPDATE workspaces SET name = ${w.name}, default_domain = ${dd}
                 WHERE id = ${w.id} AND personal_of = ${w.personalOf} AND (name <> ${w.name} OR default_domain IS DISTINCT FROM ${dd})`).count;
  }
  for (const m of members) {
    n.members += (await tx`
      INSERT INTO workspace_members (workspace_id, account_id, role, created_at) SELECT ${m.workspaceId}, ${m.accountId}, ${m.role}, ${m.createdAt}
      WHERE EXISTS (SELECT 1 FROM workspaces WHERE id = ${m.workspaceId}) AND EXISTS (SELECT 1 FROM accounts WHERE id = ${m.accountId})
      ON CONFLICT DO NOTHING`).count;
  }
  return n;
}

/** The accounts-and-sessions role of the SQLite store. */
import type { Account, AccountStore, Session } from "../../ports.ts";
import { personalWorkspace } from "../workspace-rows.ts";
import type { SqliteConnection } from "./connection.ts";
import { insertWorkspace } from "./workspaces.ts";

export const ACCOUNT_SELECT = `SELECT id, email, password_hash AS passwordHash, created_at AS createdAt FROM accounts`;
const SESSION_SELECT = `SELECT id_hash AS idHash, account_id AS accountId, workspace_id AS workspaceId, csrf_token AS csrfToken,
  created_at AS createdAt, expires_at AS expiresAt FROM sessions`;

export function sqliteAccounts(c: SqliteConnection): AccountStore {
  const create = c.db.transaction((a: Account): boolean => {
    const res = c.st(
      `INSERT INTO accounts (id, email, password_hash, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (email) DO NOTHING`,
    ).run(a.id, a.email.toLowerCase(), a.passwordHash, a.createdAt);
    if (res.changes !== 1) return false;
    // Only a shared workspace made with this account's id could be in the way: nothing is written then.
    if (!insertWorkspace(c, personalWorkspace(a.id, a.createdAt), a.id)) throw new Error(`a workspace already has the id ${a.id}`);
    return true;
  });
  return {
    async createAccount(a: Account): Promise<boolean> {
      return create.immediate(a);
    },

    async getAccountByEmail(email: string): Promise<Account | null> {
      return c.st<Account>(`${ACCOUNT_SELECT} WHERE email = ?`).get(email.toLowerCase()) ?? null;
    },

    async getAccount(id: string): Promise<Account | null> {
      return c.st<Account>(`${ACCOUNT_SELECT} WHERE id = ?`).get(id) ?? null;
    },

    async createSession(s: Session): Promise<void> {
      c.st(
        `INSERT INTO sessions (id_hash, account_id, workspace_id, csrf_token, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
      ).run(s.idHash, s.accountId, s.workspaceId, s.csrfToken, s.createdAt, s.expiresAt);
    },

    async setSessionWorkspace(idHash: string, workspaceId: string | null): Promise<boolean> {
      return c.st(`UPDATE sessions SET workspace_id = ? WHERE id_hash = ?`).run(workspaceId, idHash).changes === 1;
    },

    async getSession(idHash: string): Promise<Session | null> {
      return c.st<Session>(`${SESSION_SELECT} WHERE id_hash = ?`).get(idHash) ?? null;
    },

    async deleteSession(idHash: string): Promise<void> {
      c.st(`DELETE FROM sessions WHERE id_hash = ?`).run(idHash);
    },

    async deleteExpiredSessions(now: number): Promise<number> {
      return c.st(`DELETE FROM sessions WHERE expires_at <= ?`).run(now).changes;
    },
  };
}

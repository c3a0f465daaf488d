/** The accounts-and-sessions role of the SQLite store. */
import type { Account, AccountStore, Session } from "../../ports.ts";
import type { SqliteConnection } from "./connection.ts";

export const ACCOUNT_SELECT = `SELECT id, email, password_hash AS passwordHash, created_at AS createdAt FROM accounts`;
const SESSION_SELECT = `SELECT id_hash AS idHash, account_id AS accountId, csrf_token AS csrfToken,
  created_at AS createdAt, expires_at AS expiresAt FROM sessions`;

export function sqliteAccounts(c: SqliteConnection): AccountStore {
  return {
    async createAccount(a: Account): Promise<boolean> {
      const res = c.st(
        `INSERT INTO accounts (id, email, password_hash, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (email) DO NOTHING`,
      ).run(a.id, a.email.toLowerCase(), a.passwordHash, a.createdAt);
      return res.changes === 1;
    },

    async getAccountByEmail(email: string): Promise<Account | null> {
      return c.st<Account>(`${ACCOUNT_SELECT} WHERE email = ?`).get(email.toLowerCase()) ?? null;
    },

    async getAccount(id: string): Promise<Account | null> {
      return c.st<Account>(`${ACCOUNT_SELECT} WHERE id = ?`).get(id) ?? null;
    },

    async createSession(s: Session): Promise<void> {
      c.st(
        `INSERT INTO sessions (id_hash, account_id, csrf_token, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
      ).run(s.idHash, s.accountId, s.csrfToken, s.createdAt, s.expiresAt);
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

/** The accounts-and-sessions role of the Postgres store. */
import type { Account, AccountStore, Session } from "../../ports.ts";
import { personalWorkspace } from "../workspace-rows.ts";
import type { PostgresConnection } from "./connection.ts";
import { insertWorkspace } from "./workspaces.ts";

export function postgresAccounts(c: PostgresConnection): AccountStore {
  return {
    createAccount(a: Account): Promise<boolean> {
      return c.run(() =>
        c.sql.begin(async (tx) => {
          const res = await tx`
            INSERT INTO accounts (id, email, password_hash, created_at)
            VALUES (${a.id}, ${a.email.toLowerCase()}, ${a.passwordHash}, ${a.createdAt})
            ON CONFLICT (email) DO NOTHING`;
          if (res.count !== 1) return false;
          // Only a shared workspace made with this account's id could be in the way: nothing is written then.
          if (!(await insertWorkspace(tx, personalWorkspace(a.id, a.createdAt), a.id))) throw new Error(`a workspace already has the id ${a.id}`);
          return true;
        }));
    },

    getAccountByEmail(email: string): Promise<Account | null> {
      return c.run(async () => {
        const [row] = await c.sql<Account[]>`
          SELECT id, email, password_hash AS "passwordHash", created_at AS "createdAt"
          FROM accounts WHERE email = ${email.toLowerCase()}`;
        return row ?? null;
      });
    },

    getAccount(id: string): Promise<Account | null> {
      return c.run(async () => {
        const [row] = await c.sql<Account[]>`
          SELECT id, email, password_hash AS "passwordHash", created_at AS "createdAt" FROM accounts WHERE id = ${id}`;
        return row ?? null;
      });
    },

    createSession(s: Session): Promise<void> {
      return c.run(async () => {
        await c.sql`
          INSERT INTO sessions (id_hash, account_id, workspace_id, csrf_token, created_at, expires_at)
          VALUES (${s.idHash}, ${s.accountId}, ${s.workspaceId}, ${s.csrfToken}, ${s.createdAt}, ${s.expiresAt})`;
      });
    },

    setSessionWorkspace(idHash: string, workspaceId: string | null): Promise<boolean> {
      return c.run(async () => (await c.sql`UPDATE sessions SET workspace_id = ${workspaceId} WHERE id_hash = ${idHash}`).count === 1);
    },

    getSession(idHash: string): Promise<Session | null> {
      return c.run(async () => {
        const [row] = await c.sql<Session[]>`
          SELECT id_hash AS "idHash", account_id AS "accountId", workspace_id AS "workspaceId", csrf_token AS "csrfToken",
                 created_at AS "createdAt", expires_at AS "expiresAt"
          FROM sessions WHERE id_hash = ${idHash}`;
        return row ?? null;
      });
    },

    deleteSession(idHash: string): Promise<void> {
      return c.run(async () => {
        await c.sql`DELETE FROM sessions WHERE id_hash = ${idHash}`;
      });
    },

    deleteExpiredSessions(now: number): Promise<number> {
      return c.run(async () => (await c.sql`DELETE FROM sessions WHERE expires_at <= ${now}`).count);
    },
  };
}

/** The accounts-and-sessions role of the store: who can sign in, and the dashboard sessions they hold. */

export interface Account {
  id: string;
  email: string;
  passwordHash: string;
  createdAt: number;
}

export interface Session {
  /** SHA-256 of the session token; the token itself is only in the visitor's cookie. */
  idHash: string;
  accountId: string;
  /** The workspace the session acts for (the dashboard's switcher); null: its account's personal workspace. */
  workspaceId: string | null;
  csrfToken: string;
  createdAt: number;
  expiresAt: number;
}

export interface AccountStore {
  /**
   * The account with its personal workspace (id = the account's id) and its owner membership, in one transaction;
   * false: email already registered (nothing written).
   */
  createAccount(account: Account): Promise<boolean>;
  getAccountByEmail(email: string): Promise<Account | null>;
  getAccount(id: string): Promise<Account | null>;

  createSession(session: Session): Promise<void>;
  getSession(idHash: string): Promise<Session | null>;
  /** Switches the session to a workspace (null: the personal one); false when the session is unknown. */
  setSessionWorkspace(idHash: string, workspaceId: string | null): Promise<boolean>;
  deleteSession(idHash: string): Promise<void>;
  /** Removes every session expired at `now`; returns how many. */
  deleteExpiredSessions(now: number): Promise<number>;
}

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
  csrfToken: string;
  createdAt: number;
  expiresAt: number;
}

export interface AccountStore {
  createAccount(account: Account): Promise<boolean>; // false: email already registered
  getAccountByEmail(email: string): Promise<Account | null>;
  getAccount(id: string): Promise<Account | null>;

  createSession(session: Session): Promise<void>;
  getSession(idHash: string): Promise<Session | null>;
  deleteSession(idHash: string): Promise<void>;
  /** Removes every session expired at `now`; returns how many. */
  deleteExpiredSessions(now: number): Promise<number>;
}

/**
 * Dashboard sessions (design §6): a random token lives only in the visitor's cookie; the store keeps its
 * SHA-256, the account, a per-session CSRF token and an expiry. Signing out deletes the row, so a stolen
 * cookie stops working at once.
 */
import { newToken, sha256Hex } from "../../shared/ids.ts";
import type { Session } from "../../shared/ports.ts";
import type { Deps } from "../deps.ts";

/** Sessions last two weeks from sign-in; long enough for a tool people open daily, short enough to age out. */
export const SESSION_TTL_MS = 14 * 24 * 3_600_000;

const TOKEN_SHAPE = /^[A-Za-z0-9]{32}$/;

export interface StartedSession {
  /** Goes into the cookie; never stored. */
  token: string;
  session: Session;
}

export async function startSession(deps: Deps, accountId: string): Promise<StartedSession> {
  const token = newToken();
  const now = deps.now();
  const session: Session = {
    idHash: sha256Hex(token),
    accountId,
    workspaceId: null,
    csrfToken: newToken(),
    createdAt: now,
    expiresAt: now + SESSION_TTL_MS,
  };
  await deps.store.createSession(session);
  return { token, session };
}

/** The live session for a cookie token, or null (malformed, unknown, revoked or expired; expired rows are removed). */
export async function findSession(deps: Deps, token: string | null | undefined): Promise<Session | null> {
  if (!token || !TOKEN_SHAPE.test(token)) return null;
  const idHash = sha256Hex(token);
  const session = await deps.store.getSession(idHash);
  if (!session) return null;
  if (session.expiresAt <= deps.now()) {
    await deps.store.deleteSession(idHash).catch(() => {});
    return null;
  }
  return session;
}

/** How often expired sessions are removed: a session nobody presents again would otherwise stay forever. */
export const SESSION_PURGE_INTERVAL_MS = 3_600_000;

/** Removes every expired session (at start and hourly, from the control plane); returns how many. */
export function purgeExpiredSessions(deps: Deps): Promise<number> {
  return deps.store.deleteExpiredSessions(deps.now());
}

/** Revokes the session behind a cookie token; unknown tokens are ignored. */
export async function endSession(deps: Deps, token: string | null | undefined): Promise<void> {
  if (!token || !TOKEN_SHAPE.test(token)) return;
  await deps.store.deleteSession(sha256Hex(token));
}

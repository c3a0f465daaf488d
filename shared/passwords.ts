/** Passwords (accounts and protected links) are stored only as Argon2id hashes (design §3.2, §6). */
import { FairLimiter } from "./limiter.ts";

/**
 * Argon2id is deliberately costly. A bulk create may carry 500 passwords, and hashing them all at once filled
 * Bun's thread pool: a visitor's password check waited seconds behind them. Two hashes at a time leave room for
 * the checks (which are not queued here) and for everything else. The two slots are shared fairly among the
 * accounts with hashes waiting, so one account's bulk delays that account, not the next one's single create (it
 * waited 36 s behind a 500-password bulk when the queue was one line for everybody).
 */
const hashing = new FairLimiter(2);

/** The owner of hashes made before an account exists (sign-up): all sign-ups share one turn among the accounts. */
export const SIGN_UP = "sign-up";

/** Hashes a password as work of `owner`: the account whose link or login it protects, or SIGN_UP. */
export const hashPassword = (owner: string, password: string): Promise<string> =>
  hashing.run(owner, () => Bun.password.hash(password, { algorithm: "argon2id" }));

/** Hashes running and waiting in this process, all owners together (for tests and metrics). */
export const hashingLoad = (): { active: number; queued: number } => ({ active: hashing.active, queued: hashing.queued });

/** Passwords (accounts and protected links) are stored only as Argon2id hashes (design §3.2, §6). */
import { Limiter } from "./limiter.ts";

/**
 * Argon2id is deliberately costly. A bulk create may carry 500 passwords, and hashing them all at once filled
 * Bun's thread pool: a visitor's password check waited seconds behind them. Two hashes at a time leave room for
 * the checks (which are not queued here) and for everything else.
 */
const hashing = new Limiter(2);

export const hashPassword = (password: string): Promise<string> =>
  hashing.run(() => Bun.password.hash(password, { algorithm: "argon2id" }));

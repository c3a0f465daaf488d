/** Passwords (accounts and protected links) are stored only as Argon2id hashes (design §3.2, §6). */
export const hashPassword = (password: string): Promise<string> => Bun.password.hash(password, { algorithm: "argon2id" });

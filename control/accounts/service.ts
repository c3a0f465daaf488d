/** Accounts: sign-up with email and password (Argon2id). Sessions for the dashboard build on this. */
import { AppError, invalidInput } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import { SIGN_UP, hashPassword } from "../../shared/passwords.ts";
import type { Account } from "../../shared/ports.ts";
import type { Deps } from "../deps.ts";

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}\.[^\s@]{2,63}$/;

export function normaliseEmail(email: unknown): string {
  if (typeof email !== "string" || !EMAIL.test(email.trim())) throw invalidInput([{ path: "/email", message: "must be an email address" }]);
  return email.trim().toLowerCase();
}

export function checkPassword(password: unknown): string {
  if (typeof password !== "string" || password.length < 8 || password.length > 200) {
    throw invalidInput([{ path: "/password", message: "must be 8-200 characters" }]);
  }
  return password;
}

/** Creates an account; slug_taken-style conflicts surface as invalid_input on the email field. */
export async function createAccount(deps: Deps, emailRaw: unknown, passwordRaw: unknown): Promise<Account> {
  const email = normaliseEmail(emailRaw);
  const password = checkPassword(passwordRaw);
  const account: Account = {
    id: newId(),
    email,
    passwordHash: await hashPassword(SIGN_UP, password),
    createdAt: deps.now(),
  };
  if (!(await deps.store.createAccount(account))) {
    throw new AppError("invalid_input", "An account with this email already exists", { errors: [{ path: "/email", message: "is already registered" }] });
  }
  return account;
}

/** The account for these credentials, or null. Runs a hash even for unknown emails so timing does not tell. */
export async function verifyCredentials(deps: Deps, emailRaw: unknown, password: unknown): Promise<Account | null> {
  const email = typeof emailRaw === "string" ? emailRaw.trim().toLowerCase() : "";
  const account = email ? await deps.store.getAccountByEmail(email) : null;
  const hash = account?.passwordHash ?? (await dummyHash());
  const ok = typeof password === "string" && password.length <= 200 && (await Bun.password.verify(password, hash));
  return ok && account ? account : null;
}

/**
 * The hash an unknown email is checked against, made on the first sign-in that needs it rather than when the module
 * loads: an Argon2id hash at import cost every process (the redirector, create-key, export) about 100 ms of CPU at
 * start, whether or not anyone ever signs in there.
 */
let dummy: Promise<string> | undefined;
const dummyHash = (): Promise<string> => (dummy ??= hashPassword(SIGN_UP, "not-a-real-password"));

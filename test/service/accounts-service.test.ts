/**
 * control/accounts/service.ts and sessions.ts called directly: email and password rules, Argon2id at the product's
 * cost, duplicate emails, credential checks, and dashboard sessions expiring and purged on the test clock.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { checkPassword, createAccount, normaliseEmail, verifyCredentials } from "../../control/accounts/service.ts";
import { endSession, findSession, purgeExpiredSessions, SESSION_TTL_MS, startSession } from "../../control/accounts/sessions.ts";
import { AppError } from "../../shared/errors.ts";
import { rejectionOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

let cp: InProcessControlPlane;

beforeAll(async () => {
  cp = await startControlPlane();
});
afterAll(() => cp?.close());

/** The AppError a synchronous check throws, as a problem object. */
function thrownBy(check: () => unknown) {
  try {
    check();
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    return (e as AppError).toProblem();
  }
  throw new Error("expected the check to throw");
}

describe("email and password rules", () => {
  test("normaliseEmail trims and lower-cases an address", () => {
    expect(normaliseEmail("  Ann.Lee+x@Example.COM ")).toBe("ann.lee+x@example.com");
  });

  test("normaliseEmail refuses what is no address at /email", () => {
    for (const email of ["", "ann", "ann@", "@example.com", "ann@example", "a b@example.com", `${"a".repeat(65)}@example.com`, 7, null]) {
      expect(thrownBy(() => normaliseEmail(email))).toMatchObject({ code: "invalid_input", errors: [{ path: "/email", message: "must be an email address" }] });
    }
  });

  test("checkPassword takes 8 to 200 characters and refuses anything else at /password", () => {
    expect([checkPassword("12345678"), checkPassword("p".repeat(200))]).toEqual(["12345678", "p".repeat(200)]);
    for (const password of ["1234567", "p".repeat(201), 12345678, undefined]) {
      expect(thrownBy(() => checkPassword(password))).toMatchObject({ code: "invalid_input", errors: [{ path: "/password", message: "must be 8-200 characters" }] });
    }
  });
});

describe("createAccount and verifyCredentials", () => {
  test("an account is stored with its normalised email, an Argon2id hash and the clock's time; the same email in another case is refused", async () => {
    const account = await createAccount(cp.deps, " Carol@Example.com ", "carol-password");
    expect([account.email, account.createdAt, account.passwordHash.startsWith("$argon2id$")]).toEqual(["carol@example.com", cp.clock.now(), true]);
    expect(await cp.deps.store.getAccount(account.id)).toEqual(account);
    const problem = await rejectionOf(createAccount(cp.deps, "CAROL@example.com", "another-password"));
    expect([problem.code, problem.detail, problem.errors]).toEqual(["invalid_input", "An account with this email already exists", [{ path: "/email", message: "is already registered" }]]);
  });

  test("verifyCredentials answers the account only for the right password; unknown emails and odd input give null", async () => {
    const account = await cp.account("dave@example.com");
    const password = "password-of-dave@example.com";
    expect((await verifyCredentials(cp.deps, " DAVE@example.com ", password))?.id).toBe(account.id);
    const refused = [
      await verifyCredentials(cp.deps, "dave@example.com", "wrong-password"),
      await verifyCredentials(cp.deps, "nobody@example.com", password),
      await verifyCredentials(cp.deps, "dave@example.com", `${password}${"x".repeat(200)}`),
      await verifyCredentials(cp.deps, "dave@example.com", 12345678),
      await verifyCredentials(cp.deps, 42, password),
    ];
    expect(refused).toEqual([null, null, null, null, null]);
  });
});

describe("sessions", () => {
  test("a session is found until two weeks after it started, then removed when looked up", async () => {
    const { id } = await cp.account("sessions@example.com");
    const { token, session } = await startSession(cp.deps, id);
    expect([session.accountId, session.expiresAt - session.createdAt, token]).toEqual([id, SESSION_TTL_MS, expect.stringMatching(/^[A-Za-z0-9]{32}$/)]);
    cp.clock.advance(SESSION_TTL_MS - 1);
    expect(await findSession(cp.deps, token)).toEqual(session);
    cp.clock.advance(1);
    expect(await findSession(cp.deps, token)).toBeNull();
    expect(await cp.deps.store.getSession(session.idHash)).toBeNull();
  });

  test("purgeExpiredSessions removes expired sessions nobody presents, and keeps live ones", async () => {
    const { id } = await cp.account("purge@example.com");
    const aged = await startSession(cp.deps, id);
    cp.clock.advance(SESSION_TTL_MS / 2);
    const live = await startSession(cp.deps, id);
    cp.clock.advance(SESSION_TTL_MS / 2);
    expect(await purgeExpiredSessions(cp.deps)).toBe(1);
    expect([await cp.deps.store.getSession(aged.session.idHash), (await cp.deps.store.getSession(live.session.idHash))?.idHash]).toEqual([null, live.session.idHash]);
  });

  test("endSession ends that session only; malformed and unknown tokens are ignored", async () => {
    const { id } = await cp.account("end@example.com");
    const [one, two] = [await startSession(cp.deps, id), await startSession(cp.deps, id)];
    for (const token of [undefined, "", "short", "x".repeat(32)]) await endSession(cp.deps, token);
    await endSession(cp.deps, one.token);
    expect([await findSession(cp.deps, one.token), (await findSession(cp.deps, two.token))?.idHash]).toEqual([null, two.session.idHash]);
    expect(await findSession(cp.deps, "not a token")).toBeNull();
  });
});

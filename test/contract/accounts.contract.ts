/** Store contract, accounts-and-sessions role (AccountStore). */
import { beforeAll, describe, expect, test } from "bun:test";
import type { Store } from "../../shared/ports.ts";
import { HOUR, type StoreContext, T0, uid } from "./store-harness.ts";

export function runAccountContract(ctx: StoreContext): void {
  let store: Store;
  beforeAll(() => {
    store = ctx.store;
  });
  const { newAccount } = ctx;

  describe("accounts", () => {
    test("an account reads back by id and by email in any letter case; the email is stored lower-cased", async () => {
      const id = uid();
      const email = `Mixed.Case+${id}@Example.COM`;
      expect(await store.createAccount({ id, email, passwordHash: "argon", createdAt: T0 })).toBe(true);
      const expected = { id, email: email.toLowerCase(), passwordHash: "argon", createdAt: T0 };
      expect(await store.getAccount(id)).toEqual(expected);
      expect(await store.getAccountByEmail(email)).toEqual(expected);
      expect(await store.getAccountByEmail(email.toUpperCase())).toEqual(expected);
    });

    test("createAccount returns false for an email already registered, whatever its case, and keeps the first", async () => {
      const email = `dup-${uid()}@example.com`;
      const first = { id: uid(), email, passwordHash: "first", createdAt: T0 };
      expect(await store.createAccount(first)).toBe(true);
      expect(await store.createAccount({ id: uid(), email: email.toUpperCase(), passwordHash: "x", createdAt: T0 })).toBe(
        false,
      );
      expect(await store.getAccountByEmail(email)).toEqual(first);
    });

    test("unknown accounts read as null", async () => {
      expect(await store.getAccount(uid())).toBeNull();
      expect(await store.getAccountByEmail(`nobody-${uid()}@example.com`)).toBeNull();
    });
  });

  describe("sessions", () => {
    test("a session is created, read by its hash and deleted", async () => {
      const accountId = await newAccount();
      const session = { idHash: uid(), accountId, workspaceId: null, csrfToken: "csrf-1", createdAt: T0, expiresAt: T0 + 7 * 24 * HOUR };
      await store.createSession(session);
      expect(await store.getSession(session.idHash)).toEqual(session);
      await store.deleteSession(session.idHash);
      expect(await store.getSession(session.idHash)).toBeNull();
      await store.deleteSession(session.idHash); // deleting again is harmless
    });

    test("expired sessions are removed in one sweep; live ones stay", async () => {
      const accountId = await newAccount();
      const at = (expiresAt: number) => ({ idHash: uid(), accountId, workspaceId: null, csrfToken: "c", createdAt: T0, expiresAt });
      const [gone, edge, live] = [at(T0 - HOUR), at(T0), at(T0 + HOUR)];
      for (const s of [gone, edge, live]) await store.createSession(s);
      expect(await store.deleteExpiredSessions(T0)).toBeGreaterThanOrEqual(2); // other tests' sessions may expire too
      expect(await store.getSession(gone.idHash)).toBeNull();
      expect(await store.getSession(edge.idHash)).toBeNull();
      expect(await store.getSession(live.idHash)).toEqual(live);
      expect(await store.deleteExpiredSessions(T0)).toBe(0);
    });

    test("an unknown session reads as null", async () => {
      expect(await store.getSession(uid())).toBeNull();
    });
  });
}

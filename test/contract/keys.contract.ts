/** Store contract, API-keys role (KeyStore). */
import { beforeAll, describe, expect, test } from "bun:test";
import type { ApiKeyRecord, Store } from "../../shared/ports.ts";
import { type StoreContext, T0, uid } from "./store-harness.ts";

export function runKeyContract(ctx: StoreContext): void {
  let store: Store;
  beforeAll(() => {
    store = ctx.store;
  });
  const { newAccount } = ctx;

  describe("API keys", () => {
    const keyFor = (accountId: string, over: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
      id: uid(),
      accountId,
      createdBy: accountId,
      name: "ci",
      keyHash: uid().replace(/-/g, "").repeat(2),
      prefix: "ck_AbC1",
      createdAt: T0,
      lastUsedAt: null,
      revokedAt: null,
      scopes: ["links:read", "stats:read"],
      ...over,
    });

    test("a key is found by its hash with every field", async () => {
      const key = keyFor(await newAccount(), { name: "deploy bot", lastUsedAt: T0 + 5, revokedAt: null });
      await store.createApiKey(key);
      expect(await store.findApiKeyByHash(key.keyHash)).toEqual(key);
      expect(await store.findApiKeyByHash("0".repeat(64))).toBeNull();
    });

    test("scopes are kept as given, in their order; none recorded (a key from before scopes) stays null, and an empty list stays empty", async () => {
      const accountId = await newAccount();
      const cases = [["stats:read", "links:read"], ["webhooks:manage"], ["links:read", "links:write", "stats:read", "webhooks:manage"], null, []] as const;
      const keys = cases.map((scopes, i) => keyFor(accountId, { scopes, createdAt: T0 + i }));
      for (const k of keys) await store.createApiKey(k);
      for (const k of keys) expect((await store.findApiKeyByHash(k.keyHash))?.scopes).toEqual(k.scopes);
      expect((await store.listApiKeys(accountId)).map((k) => k.scopes)).toEqual(keys.map((k) => k.scopes).reverse());
      expect((await store.revokeApiKey(accountId, keys[0].id, T0 + 9))?.scopes).toEqual(["stats:read", "links:read"]);
    });

    test("a key of an export file written before scopes (no scopes field) is imported keeping every scope (null)", async () => {
      const { scopes: _, ...old } = keyFor(await newAccount());
      expect((await store.importRecords([{ type: "apiKey", data: old as ApiKeyRecord }])).apiKey).toEqual({ inserted: 1, skipped: 0 });
      expect(await store.findApiKeyByHash(old.keyHash)).toEqual({ ...old, scopes: null });
    });

    test("listApiKeys lists only the account's keys, newest first, revoked ones included", async () => {
      const mine = await newAccount();
      const theirs = await newAccount();
      const older = keyFor(mine, { createdAt: T0 });
      const newer = keyFor(mine, { createdAt: T0 + 1000, revokedAt: T0 + 2000 });
      await store.createApiKey(older);
      await store.createApiKey(newer);
      await store.createApiKey(keyFor(theirs));
      expect(await store.listApiKeys(mine)).toEqual([newer, older]);
      expect(await store.listApiKeys(uid())).toEqual([]);
    });

    test("touchApiKey records the last use and never moves it backwards", async () => {
      const key = keyFor(await newAccount());
      await store.createApiKey(key);
      await store.touchApiKey(key.id, T0 + 10_000);
      expect((await store.findApiKeyByHash(key.keyHash))?.lastUsedAt).toBe(T0 + 10_000);
      await store.touchApiKey(key.id, T0 + 5_000);
      expect((await store.findApiKeyByHash(key.keyHash))?.lastUsedAt).toBe(T0 + 10_000);
      await store.touchApiKey(uid(), T0); // unknown key: nothing happens
    });

    test("revokeApiKey revokes only the owner's key, keeps the first revocation time, and the key stays findable", async () => {
      const owner = await newAccount();
      const stranger = await newAccount();
      const key = keyFor(owner);
      await store.createApiKey(key);

      expect(await store.revokeApiKey(stranger, key.id, T0 + 1)).toBeNull();
      expect((await store.findApiKeyByHash(key.keyHash))?.revokedAt).toBeNull();

      expect(await store.revokeApiKey(owner, key.id, T0 + 2)).toEqual({ ...key, revokedAt: T0 + 2 });
      expect(await store.revokeApiKey(owner, key.id, T0 + 3)).toEqual({ ...key, revokedAt: T0 + 2 });
      // The caller decides what a revoked key means, so lookups still return it.
      expect(await store.findApiKeyByHash(key.keyHash)).toEqual({ ...key, revokedAt: T0 + 2 });
      expect(await store.revokeApiKey(owner, uid(), T0)).toBeNull();
    });
  });
}

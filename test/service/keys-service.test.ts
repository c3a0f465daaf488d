/**
 * control/keys/service.ts called directly: keys stored as hashes and shown once, name rules, and the
 * KeyAuthenticator's cache, last-used times and revocation (also heard by a second authenticator, as another
 * process would hear it), all on the test clock.
 */
import { SCOPES } from "../../shared/enums.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApiKey, KeyAuthenticator, listApiKeys } from "../../control/keys/service.ts";
import { newApiKey, sha256Hex } from "../../shared/ids.ts";
import { rejectionOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

let cp: InProcessControlPlane;
let accountId: string;

beforeAll(async () => {
  cp = await startControlPlane();
  accountId = (await cp.account("keys@example.com")).id;
});
afterAll(() => cp?.close());

describe("createApiKey and listApiKeys", () => {
  test("a ck_ key of 38 base62 characters is returned once; the store holds only its SHA-256 and a 7-character prefix", async () => {
    const { key, view } = await createApiKey(cp.deps, accountId, "  laptop  ");
    expect(key).toMatch(/^ck_[A-Za-z0-9]{38}$/);
    const iso = new Date(cp.clock.now()).toISOString();
    expect(view).toEqual({ id: view.id, name: "laptop", prefix: key.slice(0, 7), createdAt: iso, lastUsedAt: null, revokedAt: null, scopes: [...SCOPES], createdBy: accountId });
    const record = await cp.deps.store.findApiKeyByHash(sha256Hex(key));
    expect(record).toMatchObject({ id: view.id, accountId, createdBy: accountId, keyHash: sha256Hex(key), prefix: key.slice(0, 7) });
    expect(JSON.stringify(await cp.deps.store.listApiKeys(accountId))).not.toContain(key.slice(7));
  });

  test("a name that is empty, blank, over 80 characters or not a string is refused at /name", async () => {
    for (const name of ["", "   ", "n".repeat(81), 42, null]) {
      expect(await rejectionOf(createApiKey(cp.deps, accountId, name))).toMatchObject({ code: "invalid_input", errors: [{ path: "/name", message: "must be 1-80 characters" }] });
    }
    expect((await createApiKey(cp.deps, accountId, "n".repeat(80))).view.name).toHaveLength(80);
  });

  test("listApiKeys shows one account's keys only", async () => {
    const other = await cp.account("other-keys@example.com");
    await createApiKey(cp.deps, other.id, "theirs");
    expect((await listApiKeys(cp.deps, other.id)).map((k) => k.name)).toEqual(["theirs"]);
    expect((await listApiKeys(cp.deps, accountId)).map((k) => k.name)).not.toContain("theirs");
  });
});

describe("KeyAuthenticator", () => {
  test("turns a Bearer header into the caller and records the last use at the clock's time", async () => {
    const { key, view } = await createApiKey(cp.deps, accountId, "auth");
    expect(await cp.auth.authenticate(`Bearer ${key}`)).toEqual({ workspaceId: accountId, accountId, role: "owner", keyId: view.id, scopes: SCOPES });
    expect((await cp.deps.store.findApiKeyByHash(sha256Hex(key)))!.lastUsedAt).toBe(cp.clock.now());
  });

  test("missing, malformed (a typo fails the checksum) and unknown keys throw unauthorized, each with its own detail", async () => {
    const details = [];
    const { key } = await createApiKey(cp.deps, accountId, "typo");
    const typo = key.slice(0, -1) + (key.endsWith("x") ? "y" : "x");
    for (const header of [undefined, "", "Basic abc", "Bearer ck_short", `Bearer ${typo}`, `Bearer ${newApiKey()}`]) {
      const problem = await rejectionOf(cp.auth.authenticate(header));
      details.push([problem.code, problem.detail]);
    }
    expect(details).toEqual([
      ["unauthorized", "Send an API key as Authorization: Bearer ck_…"],
      ["unauthorized", "Send an API key as Authorization: Bearer ck_…"],
      ["unauthorized", "Send an API key as Authorization: Bearer ck_…"],
      ["unauthorized", "The API key is malformed"],
      ["unauthorized", "The API key is malformed"],
      ["unauthorized", "The API key is unknown or revoked"],
    ]);
  });

  test("a key revoked in the store alone (no notice) is still accepted from the cache for 30 seconds, then refused", async () => {
    const { key, view } = await createApiKey(cp.deps, accountId, "cached");
    await cp.auth.authenticate(`Bearer ${key}`);
    await cp.deps.store.revokeApiKey(accountId, view.id, cp.clock.now());
    cp.clock.advance(30_000 - 1);
    expect((await cp.auth.authenticate(`Bearer ${key}`)).keyId).toBe(view.id);
    cp.clock.advance(1);
    expect((await rejectionOf(cp.auth.authenticate(`Bearer ${key}`))).detail).toBe("The API key is unknown or revoked");
  });

  test("a cached use does not write the last-used time; the next read from the store does", async () => {
    const { key } = await createApiKey(cp.deps, accountId, "touch");
    const first = cp.clock.now();
    await cp.auth.authenticate(`Bearer ${key}`);
    cp.clock.advance(10_000);
    await cp.auth.authenticate(`Bearer ${key}`);
    expect((await cp.deps.store.findApiKeyByHash(sha256Hex(key)))!.lastUsedAt).toBe(first);
    cp.clock.advance(30_000);
    await cp.auth.authenticate(`Bearer ${key}`);
    expect((await cp.deps.store.findApiKeyByHash(sha256Hex(key)))!.lastUsedAt).toBe(cp.clock.now());
  });

  test("revoke refuses the key at once here and in another authenticator on the same HotState (another process)", async () => {
    const elsewhere = new KeyAuthenticator(cp.deps);
    const { key, view } = await createApiKey(cp.deps, accountId, "revoked");
    await cp.auth.authenticate(`Bearer ${key}`);
    await elsewhere.authenticate(`Bearer ${key}`);
    const revoked = await cp.auth.revoke(accountId, view.id);
    const now = new Date(cp.clock.now()).toISOString();
    expect(revoked).toEqual({ ...view, lastUsedAt: now, revokedAt: now });
    for (const auth of [cp.auth, elsewhere]) expect((await rejectionOf(auth.authenticate(`Bearer ${key}`))).code).toBe("unauthorized");
  });

  test("revoking another account's key, or an unknown id, is not_found and the key keeps working", async () => {
    const other = await cp.account("victim@example.com");
    const { key, view } = await createApiKey(cp.deps, other.id, "victim");
    expect((await rejectionOf(cp.auth.revoke(accountId, view.id))).code).toBe("not_found");
    expect((await rejectionOf(cp.auth.revoke(accountId, "no-such-id"))).code).toBe("not_found");
    expect((await cp.auth.authenticate(`Bearer ${key}`)).accountId).toBe(other.id);
  });
});

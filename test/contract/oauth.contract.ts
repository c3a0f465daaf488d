/**
 * The OAuthStore contract, run against SQLite and Postgres (oauth-sqlite/postgres.test.ts): clients round-trip,
 * codes are used once, grants carry their tokens, revocation is per account and reaches the tokens' lookups,
 * refresh-token rotation happens once per token and never on a revoked grant.
 */
import { describe, expect, test } from "bun:test";
import type { AccessTokenRecord, AuthorizationCodeRecord, OAuthGrantRecord, RefreshTokenRecord } from "../../shared/ports/oauth.ts";
import type { Store } from "../../shared/ports.ts";
import { storeContext, T0, uid } from "./store-harness.ts";

const hash = () => uid().replace(/-/g, "").repeat(2);
const MCP = "https://sho.rt/mcp";

export function runOAuthContract(name: string, make: () => Promise<Store>, cleanup?: () => Promise<void>) {
  describe(`OAuthStore contract: ${name}`, () => {
    const ctx = storeContext(make, cleanup);

    const grantFor = (accountId: string, over: Partial<OAuthGrantRecord> = {}): OAuthGrantRecord => ({
      id: uid(), accountId, workspaceId: accountId, clientId: "clid_x", clientName: "Assistant “α”", scopes: ["links:read", "stats:read"], resource: MCP,
      createdAt: T0, lastUsedAt: null, revokedAt: null, ...over,
    });
    const refreshOf = (grantId: string, over: Partial<RefreshTokenRecord> = {}): RefreshTokenRecord => ({
      tokenHash: hash(), grantId, createdAt: T0, expiresAt: T0 + 1000, usedAt: null, ...over,
    });
    const accessOf = (grantId: string, over: Partial<AccessTokenRecord> = {}): AccessTokenRecord => ({
      tokenHash: hash(), grantId, scopes: ["links:read"], createdAt: T0, expiresAt: T0 + 100, ...over,
    });
    async function newGrant(accountId?: string, over: Partial<OAuthGrantRecord> = {}) {
      const grant = grantFor(accountId ?? (await ctx.newAccount()), over);
      const refresh = refreshOf(grant.id);
      const access = accessOf(grant.id);
      await ctx.store.createOAuthGrant(grant, refresh, access);
      return { grant, refresh, access };
    }

    test("a registered client round-trips; an unknown one is null", async () => {
      const client = { id: `clid_${uid()}`, name: "Cursor", redirectUris: ["http://127.0.0.1/cb", "cursor.app:/cb"], clientUri: "https://cursor.example", scopes: null, createdAt: T0 };
      await ctx.store.createOAuthClient(client);
      expect(await ctx.store.getOAuthClient(client.id)).toEqual(client);
      const scoped = { ...client, id: `clid_${uid()}`, clientUri: null, scopes: ["links:write" as const] };
      await ctx.store.createOAuthClient(scoped);
      expect(await ctx.store.getOAuthClient(scoped.id)).toEqual(scoped);
      expect(await ctx.store.getOAuthClient("clid_none")).toBeNull();
    });

    test("a code is used once: the first use returns it, the second nothing, and it can still be found (to revoke its grant)", async () => {
      const accountId = await ctx.newAccount();
      const code: AuthorizationCodeRecord = {
        codeHash: hash(), clientId: "clid_x", clientName: "X", accountId, workspaceId: accountId, redirectUri: "http://localhost:1/cb",
        codeChallenge: "c".repeat(43), scopes: ["links:write"], resource: MCP, grantId: uid(), createdAt: T0, expiresAt: T0 + 60_000, usedAt: null,
      };
      await ctx.store.createAuthorizationCode(code);
      const [a, b] = await Promise.all([ctx.store.useAuthorizationCode(code.codeHash, T0 + 1), ctx.store.useAuthorizationCode(code.codeHash, T0 + 2)]);
      expect([a, b].filter(Boolean)).toHaveLength(1);
      expect(a ?? b).toEqual({ ...code, usedAt: (a ?? b)!.usedAt });
      expect(await ctx.store.useAuthorizationCode(code.codeHash, T0 + 3)).toBeNull();
      expect((await ctx.store.findAuthorizationCode(code.codeHash))?.usedAt).toBe((a ?? b)!.usedAt);
      expect(await ctx.store.findAuthorizationCode(hash())).toBeNull();
    });

    test("a consent for a shared workspace: its code, grant and tokens name that workspace and the person; the workspace deleted, they go", async () => {
      const person = await ctx.newAccount();
      const workspaceId = uid();
      expect(await ctx.store.createWorkspace({ id: workspaceId, name: "Team", personalOf: null, defaultDomain: null, createdAt: T0 }, person)).toBe(true);
      const code: AuthorizationCodeRecord = {
        codeHash: hash(), clientId: "clid_x", clientName: "X", accountId: person, workspaceId, redirectUri: "http://localhost:1/cb",
        codeChallenge: "c".repeat(43), scopes: ["links:read"], resource: MCP, grantId: uid(), createdAt: T0, expiresAt: T0 + 60_000, usedAt: null,
      };
      await ctx.store.createAuthorizationCode(code);
      expect(await ctx.store.findAuthorizationCode(code.codeHash)).toEqual(code);
      const { grant, refresh, access } = await newGrant(person, { id: code.grantId, workspaceId });
      expect(await ctx.store.findAccessToken(access.tokenHash)).toMatchObject({ accountId: person, workspaceId });
      expect((await ctx.store.findRefreshToken(refresh.tokenHash))?.grant).toEqual(grant);
      expect(await ctx.store.listOAuthGrants(person, T0)).toEqual([grant]);
      expect(await ctx.store.deleteWorkspace(workspaceId)).toBe(true);
      expect(await ctx.store.getOAuthGrant(grant.id)).toBeNull();
      expect(await ctx.store.findAccessToken(access.tokenHash)).toBeNull();
      expect(await ctx.store.findAuthorizationCode(code.codeHash)).toBeNull();
    });

    test("a grant carries its tokens: each is found with the grant's account, client and resource", async () => {
      const { grant, refresh, access } = await newGrant();
      expect(await ctx.store.getOAuthGrant(grant.id)).toEqual(grant);
      expect(await ctx.store.findAccessToken(access.tokenHash)).toEqual({
        ...access, accountId: grant.accountId, workspaceId: grant.workspaceId, clientId: grant.clientId, resource: grant.resource, grantRevokedAt: null,
      });
      expect(await ctx.store.findRefreshToken(refresh.tokenHash)).toEqual({ ...refresh, grant });
      expect(await ctx.store.findAccessToken(hash())).toBeNull();
      expect(await ctx.store.findRefreshToken(hash())).toBeNull();
    });

    test("grants are listed per account, newest first, revoked ones left out; another account can neither see nor revoke them", async () => {
      const a = await ctx.newAccount();
      const b = await ctx.newAccount();
      const older = (await newGrant(a, { createdAt: T0 })).grant;
      const newer = (await newGrant(a, { createdAt: T0 + 5 })).grant;
      expect((await ctx.store.listOAuthGrants(a, T0)).map((g) => g.id)).toEqual([newer.id, older.id]);
      expect(await ctx.store.listOAuthGrants(b, T0)).toEqual([]);
      expect(await ctx.store.revokeOAuthGrant(older.id, T0 + 9, b)).toBeNull();
      expect((await ctx.store.revokeOAuthGrant(older.id, T0 + 9, a))?.revokedAt).toBe(T0 + 9);
      // Revoking again keeps the first time; without an account (the token endpoint's revocations) works too.
      expect((await ctx.store.revokeOAuthGrant(older.id, T0 + 20))?.revokedAt).toBe(T0 + 9);
      expect((await ctx.store.listOAuthGrants(a, T0)).map((g) => g.id)).toEqual([newer.id]);
    });

    test("a grant whose refresh token expired, or was spent without a successor, is no longer listed", async () => {
      const a = await ctx.newAccount();
      const live = (await newGrant(a)).grant;
      const spent = await newGrant(a);
      await ctx.store.pruneOAuth(0, 0); // nothing expired yet: a no-op
      expect((await ctx.store.listOAuthGrants(a, T0)).map((g) => g.id).sort()).toEqual([live.id, spent.grant.id].sort());
      expect(await ctx.store.listOAuthGrants(a, T0 + 1000)).toEqual([]); // both refresh tokens expired
      // Spent: marked used by a rotation whose successor expires at once.
      await ctx.store.rotateRefreshToken(spent.refresh.tokenHash, T0 + 1, refreshOf(spent.grant.id, { expiresAt: T0 + 2 }), accessOf(spent.grant.id));
      expect((await ctx.store.listOAuthGrants(a, T0 + 5)).map((g) => g.id)).toEqual([live.id]);
    });

    test("a revoked grant shows on its tokens' lookups", async () => {
      const { grant, refresh, access } = await newGrant();
      await ctx.store.revokeOAuthGrant(grant.id, T0 + 7);
      expect((await ctx.store.findAccessToken(access.tokenHash))?.grantRevokedAt).toBe(T0 + 7);
      expect((await ctx.store.findRefreshToken(refresh.tokenHash))?.grant.revokedAt).toBe(T0 + 7);
    });

    test("a refresh token rotates once: of two concurrent rotations one wins; the successor and new access token are stored", async () => {
      const { grant, refresh } = await newGrant();
      const next = [refreshOf(grant.id), refreshOf(grant.id)];
      const access = [accessOf(grant.id, { scopes: ["stats:read"] }), accessOf(grant.id)];
      const results = await Promise.all([0, 1].map((i) => ctx.store.rotateRefreshToken(refresh.tokenHash, T0 + 1, next[i]!, access[i]!)));
      expect(results.filter(Boolean)).toHaveLength(1);
      const won = results.indexOf(true);
      expect((await ctx.store.findRefreshToken(refresh.tokenHash))?.usedAt).toBe(T0 + 1);
      expect((await ctx.store.findRefreshToken(next[won]!.tokenHash))?.usedAt).toBeNull();
      expect(await ctx.store.findRefreshToken(next[1 - won]!.tokenHash)).toBeNull();
      expect((await ctx.store.findAccessToken(access[won]!.tokenHash))?.scopes).toEqual(access[won]!.scopes);
      expect(await ctx.store.findAccessToken(access[1 - won]!.tokenHash)).toBeNull();
    });

    test("a refresh token of a revoked grant does not rotate", async () => {
      const { grant, refresh } = await newGrant();
      await ctx.store.revokeOAuthGrant(grant.id, T0 + 1);
      expect(await ctx.store.rotateRefreshToken(refresh.tokenHash, T0 + 2, refreshOf(grant.id), accessOf(grant.id))).toBe(false);
      expect((await ctx.store.findRefreshToken(refresh.tokenHash))?.usedAt).toBeNull();
    });

    test("pruning deletes expired codes and tokens, and only those", async () => {
      const { grant, refresh, access } = await newGrant(undefined, {});
      const later = { refresh: refreshOf(grant.id, { expiresAt: T0 + 1_000_000 }), access: accessOf(grant.id, { expiresAt: T0 + 1_000_000 }) };
      await ctx.store.rotateRefreshToken(refresh.tokenHash, T0 + 1, later.refresh, later.access);
      const code = (expiresAt: number): AuthorizationCodeRecord => ({
        codeHash: hash(), clientId: "c", clientName: "C", accountId: grant.accountId, workspaceId: grant.workspaceId, redirectUri: "https://a.example/cb", codeChallenge: "x",
        scopes: [], resource: MCP, grantId: uid(), createdAt: T0, expiresAt, usedAt: null,
      });
      const [old, young] = [code(T0 + 10), code(T0 + 500)];
      await ctx.store.createAuthorizationCode(old);
      await ctx.store.createAuthorizationCode(young);
      expect(await ctx.store.pruneOAuth(T0 + 100, T0 + 2_000)).toBeGreaterThanOrEqual(3);
      expect(await ctx.store.findAuthorizationCode(old.codeHash)).toBeNull();
      expect(await ctx.store.findAuthorizationCode(young.codeHash)).not.toBeNull();
      expect(await ctx.store.findAccessToken(access.tokenHash)).toBeNull();
      expect(await ctx.store.findRefreshToken(refresh.tokenHash)).toBeNull();
      expect(await ctx.store.findAccessToken(later.access.tokenHash)).not.toBeNull();
      expect(await ctx.store.findRefreshToken(later.refresh.tokenHash)).not.toBeNull();
      expect(await ctx.store.getOAuthGrant(grant.id)).not.toBeNull();
    });

    test("last use only moves forward", async () => {
      const { grant } = await newGrant();
      await ctx.store.touchOAuthGrant(grant.id, T0 + 10);
      await ctx.store.touchOAuthGrant(grant.id, T0 + 5);
      expect((await ctx.store.getOAuthGrant(grant.id))?.lastUsedAt).toBe(T0 + 10);
    });
  });
}

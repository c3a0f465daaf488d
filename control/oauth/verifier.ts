/**
 * Access tokens at the API and MCP (the AccessTokenVerifier KeyAuthenticator offers non-`ck_` Bearer values to): a
 * live token of a grant not revoked, issued for the resource asked (RFC 8707). Lookups are kept 30 seconds in
 * process, never past the token's expiry; a revoked grant is forgotten at once here and, through HotState pub/sub,
 * in every process within a second (as KeyAuthenticator does for keys). A token acts for its grant's workspace as
 * the person who consented, with the scopes their role there grants (issue #24); every membership change forgets
 * the cache, so a removed member's tokens stop working as fast as their keys.
 */
import type { Role } from "../../shared/enums.ts";
import { AppError } from "../../shared/errors.ts";
import { MEMBERSHIP_CHANGED_CHANNEL } from "../../shared/ports.ts";
import type { AccessTokenLookup } from "../../shared/ports/oauth.ts";
import type { AccessTokenVerifier } from "../auth/access-tokens.ts";
import { bearerChallenge } from "../auth/challenge.ts";
import { effectiveScopes } from "../auth/roles.ts";
import type { Caller, Deps } from "../deps.ts";
import { concerns } from "../workspaces/membership-events.ts";
import { resourceKindOf } from "./authorize.ts";
import { onGrantRevoked } from "./grants.ts";
import { ACCESS_TOKEN_PREFIX, hashOf } from "./tokens.ts";

const CACHE_TTL_MS = 30_000;
const TOUCH_EVERY_MS = 60_000;
const MAX_CACHED = 10_000;

/** A token as read, with its person's role in its workspace then (null: not a member). */
interface Found {
  token: AccessTokenLookup;
  role: Role | null;
}

interface Cached extends Found {
  keepUntil: number;
}

/** The workspace a token acts for: its grant's. */
const workspaceOf = (t: AccessTokenLookup): string => t.workspaceId;

export class AccessTokens implements AccessTokenVerifier {
  private cache = new Map<string, Cached>();
  private touched = new Map<string, number>();
  /** Raised by every revocation heard and every lost subscription: a token read before it is not cached. */
  private generation = 0;

  constructor(private deps: Deps) {
    onGrantRevoked(deps, (grantId) => {
      this.generation++;
      for (const [hash, c] of this.cache) if (c.token.grantId === grantId) this.cache.delete(hash);
    });
    // A role changed or a member left: the cached roles of that member's tokens may be stale.
    deps.hot.subscribe(MEMBERSHIP_CHANGED_CHANNEL, (message) => {
      this.generation++;
      for (const [hash, c] of this.cache) if (concerns(message, { workspaceId: workspaceOf(c.token), accountId: c.token.accountId })) this.cache.delete(hash);
    });
    // Revocations published while the subscription was down never arrive: forget every cached token.
    deps.hot.onResubscribed(() => {
      this.generation++;
      this.cache.clear();
    });
  }

  accepts(token: string): boolean {
    return token.startsWith(ACCESS_TOKEN_PREFIX);
  }

  async verify(token: string, resource: string): Promise<Caller> {
    const kind = resourceKindOf(this.deps.config.baseUrl, resource) ?? "api";
    const refuse = (description: string) =>
      new AppError("unauthorized", description, { challenge: bearerChallenge(this.deps.config.baseUrl, kind, { error: "invalid_token", description }) });
    const now = this.deps.now();
    const hit = await this.lookup(hashOf(token), now);
    if (!hit) throw refuse("The access token is unknown");
    const found = hit.token;
    if (found.grantRevokedAt !== null) throw refuse("The access token was revoked");
    if (found.expiresAt <= now) throw refuse("The access token has expired; use the refresh token for a new one");
    if (found.resource !== resource) throw refuse(`The access token was issued for ${found.resource}, not for ${resource}`);
    if (hit.role === null) throw refuse("The person who authorized this access is no longer a member of its workspace");
    this.touch(found.grantId, now);
    return {
      workspaceId: workspaceOf(found), accountId: found.accountId, role: hit.role, keyId: null, scopes: effectiveScopes(found.scopes, hit.role), grantId: found.grantId,
    };
  }

  private async lookup(hash: string, now: number): Promise<Found | null> {
    const hit = this.cache.get(hash);
    if (hit && hit.keepUntil > now) return hit;
    const generation = this.generation;
    const token = await this.deps.store.findAccessToken(hash);
    if (!token) return null;
    const role = (await this.deps.store.getMember(workspaceOf(token), token.accountId))?.role ?? null;
    if (token.grantRevokedAt === null && role !== null && generation === this.generation) {
      if (this.cache.size >= MAX_CACHED) this.cache.clear();
      this.cache.set(hash, { token, role, keepUntil: Math.min(now + CACHE_TTL_MS, token.expiresAt) });
    }
    return { token, role };
  }

  /** Last-used time of the grant, written at most once a minute per grant by this process. */
  private touch(grantId: string, now: number): void {
    if (now - (this.touched.get(grantId) ?? -Infinity) < TOUCH_EVERY_MS) return;
    if (this.touched.size >= MAX_CACHED) this.touched.clear();
    this.touched.set(grantId, now);
    this.deps.store.touchOAuthGrant(grantId, now).catch(() => {});
  }
}

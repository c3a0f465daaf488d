/**
 * API keys: `ck_…` keys shown once, stored as SHA-256 hashes with a display prefix (design §6, §8), each with the
 * scopes it was made with (issue #23), fixed for its life. A key belongs to a workspace and acts for it as the
 * member who made it (issue #24): with its scopes that the member's role grants, and not at all once they leave.
 * `authenticate` turns an Authorization header into a Caller; a short in-process cache keeps the hot
 * API path off storage, and revocations and membership changes clear it everywhere through HotState pub/sub.
 */
import { isOneOf, listed, SCOPES, type Scope } from "../../shared/enums.ts";
import { AppError, invalidInput, type FieldError } from "../../shared/errors.ts";
import { isWellFormedApiKey, keyDisplayPrefix, newApiKey, newId, sha256Hex } from "../../shared/ids.ts";
import { isoOrNull } from "../../shared/time.ts";
import { MEMBERSHIP_CHANGED_CHANNEL, type ApiKeyRecord } from "../../shared/ports.ts";
import { recordAudit } from "../audit/service.ts";
import type { AccessTokenVerifier } from "../auth/access-tokens.ts";
import { effectiveScopes, roleAtLeast } from "../auth/roles.ts";
import { ALL_SCOPES } from "../auth/scopes.ts";
import type { Caller, Deps } from "../deps.ts";
import { concerns } from "../workspaces/membership-events.ts";

const REVOKED_CHANNEL = "api-key-revoked";
const CACHE_TTL_MS = 30_000;
const TOUCH_EVERY_MS = 60_000;

export interface ApiKeyView {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** What the key may do, in the vocabulary's order (its maker's role may allow less: docs/teams.md). */
  scopes: Scope[];
  /** The account that made it, which it acts as. */
  createdBy: string;
}

/** What a key may do: the scopes it was created with; a key made before scopes keeps every scope. */
export const scopesOfKey = (k: ApiKeyRecord): readonly Scope[] => k.scopes ?? ALL_SCOPES;

export const toKeyView = (k: ApiKeyRecord): ApiKeyView => ({
  id: k.id, name: k.name, prefix: k.prefix, createdAt: isoOrNull(k.createdAt)!, lastUsedAt: isoOrNull(k.lastUsedAt), revokedAt: isoOrNull(k.revokedAt),
  scopes: [...scopesOfKey(k)], createdBy: k.createdBy,
});

const SCOPES_MESSAGE = `must list one or more of ${listed(SCOPES)}`;

/**
 * The scopes a new key is given: every scope when none are named (undefined), else the named ones, each known and
 * at least one, in the vocabulary's order without repeats. Problems are reported at /scopes and /scopes/{i}.
 */
function parseKeyScopes(raw: unknown): { scopes: Scope[] } | { errors: FieldError[] } {
  if (raw === undefined) return { scopes: [...ALL_SCOPES] };
  if (!Array.isArray(raw) || raw.length === 0) return { errors: [{ path: "/scopes", message: SCOPES_MESSAGE }] };
  const errors = raw.flatMap((s, i) => (isOneOf(SCOPES, s) ? [] : [{ path: `/scopes/${i}`, message: `${JSON.stringify(s)} is not a scope: use ${listed(SCOPES)}` }]));
  return errors.length ? { errors } : { scopes: SCOPES.filter((s) => raw.includes(s)) };
}

/** Who a key is made by and for: a member of a workspace (a Caller is one); an account id alone: its personal workspace. */
export type KeyMaker = Pick<Caller, "workspaceId" | "accountId"> | string;
const makerOf = (m: KeyMaker) => (typeof m === "string" ? { workspaceId: m, accountId: m } : m);

/** Whether the caller manages every key of its workspace (admins, owners), or only its own. */
const managesKeys = (caller: Pick<Caller, "role">) => roleAtLeast(caller.role, "admin");

/**
 * Creates a key of the workspace acting as its maker, shown once. Every member may make keys; a key can do no more
 * than its maker's role allows, whatever its scopes. `scopesRaw`: what it may do (a list of scope names); left out,
 * every scope, as create-key without --scope and a key made before scopes.
 */
export async function createApiKey(deps: Deps, makerRaw: KeyMaker, nameRaw: unknown, scopesRaw?: unknown): Promise<{ key: string; view: ApiKeyView }> {
  const maker = makerOf(makerRaw);
  const name = typeof nameRaw === "string" ? nameRaw.trim() : "";
  const errors: FieldError[] = [];
  if (!name || name.length > 80) errors.push({ path: "/name", message: "must be 1-80 characters" });
  const parsed = parseKeyScopes(scopesRaw);
  if ("errors" in parsed) errors.push(...parsed.errors);
  if (errors.length || !("scopes" in parsed)) throw invalidInput(errors);
  // Only a member makes keys of a workspace (a removed one's would be refused at once anyway).
  if (!(await deps.store.getMember(maker.workspaceId, maker.accountId))) throw new AppError("not_found", "No such workspace of yours");
  const key = newApiKey();
  const record: ApiKeyRecord = {
    id: newId(), accountId: maker.workspaceId, createdBy: maker.accountId, name, keyHash: sha256Hex(key), prefix: keyDisplayPrefix(key),
    createdAt: deps.now(), lastUsedAt: null, revokedAt: null, scopes: parsed.scopes,
  };
  await deps.store.createApiKey(record);
  await recordAudit(deps, { ...maker, keyId: typeof makerRaw === "string" ? null : (makerRaw as Partial<Caller>).keyId }, "key.created", { type: "key", id: record.id }, { name, scopes: parsed.scopes });
  return { key, view: toKeyView(record) };
}

/** The workspace's keys an admin or owner manages (all of them), or a member's own; an account id: its personal workspace's. */
export async function listApiKeys(deps: Deps, viewer: Pick<Caller, "workspaceId" | "accountId" | "role"> | string): Promise<ApiKeyView[]> {
  const v = typeof viewer === "string" ? { workspaceId: viewer, accountId: viewer, role: "owner" as const } : viewer;
  const keys = await deps.store.listApiKeys(v.workspaceId);
  return (managesKeys(v) ? keys : keys.filter((k) => k.createdBy === v.accountId)).map(toKeyView);
}

/** Publishes revoked keys' hashes: every process forgets them at once (KeyAuthenticator). */
export async function publishKeyRevocations(deps: Deps, hashes: readonly string[]): Promise<void> {
  for (const h of hashes) await deps.hot.publish(REVOKED_CHANNEL, h).catch(() => {});
}

interface CachedKey { caller: Caller; expiresAt: number; touchedAt: number }

export class KeyAuthenticator {
  private cache = new Map<string, CachedKey>();
  /** Raised by every revocation heard and every lost subscription: a key read before it is not cached. */
  private generation = 0;

  constructor(private deps: Deps) {
    deps.hot.subscribe(REVOKED_CHANNEL, (hash) => {
      this.generation++;
      this.cache.delete(hash);
    });
    // A role changed or a member left: their cached keys may now act with another role, or not at all.
    deps.hot.subscribe(MEMBERSHIP_CHANGED_CHANNEL, (message) => {
      this.generation++;
      for (const [hash, c] of this.cache) if (concerns(message, c.caller)) this.cache.delete(hash);
    });
    // Revocations published while the subscription was down never arrive: forget every cached key.
    deps.hot.onResubscribed(() => {
      this.generation++;
      this.cache.clear();
    });
  }

  private accessTokens: AccessTokenVerifier | null = null;

  /** Lets OAuth access tokens in: a Bearer value that is no `ck_` key is offered to `verifier`. */
  useAccessTokens(verifier: AccessTokenVerifier): void {
    this.accessTokens = verifier;
  }

  /**
   * The caller for an Authorization header, or AppError unauthorized. `resource` is the absolute URL of what is
   * asked for (the API or MCP), which an access token must have been issued for; keys are valid for both.
   */
  async authenticate(authorization: string | null | undefined, resource?: string): Promise<Caller> {
    const m = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
    if (!m) throw new AppError("unauthorized", "Send an API key as Authorization: Bearer ck_…");
    if (this.accessTokens?.accepts(m[1]) && resource !== undefined) return this.accessTokens.verify(m[1], resource);
    if (!isWellFormedApiKey(m[1])) throw new AppError("unauthorized", "The API key is malformed");
    const hash = sha256Hex(m[1]);
    const now = this.deps.now();
    const hit = this.cache.get(hash);
    if (hit && hit.expiresAt > now) {
      if (now - hit.touchedAt > TOUCH_EVERY_MS) {
        hit.touchedAt = now;
        this.deps.store.touchApiKey(hit.caller.keyId!, now).catch(() => {});
      }
      return hit.caller;
    }
    const generation = this.generation;
    const record = await this.deps.store.findApiKeyByHash(hash);
    if (!record || record.revokedAt !== null) throw new AppError("unauthorized", "The API key is unknown or revoked");
    const member = await this.deps.store.getMember(record.accountId, record.createdBy);
    if (!member) throw new AppError("unauthorized", "The API key's maker is no longer a member of its workspace");
    const caller: Caller = {
      workspaceId: record.accountId, accountId: record.createdBy, role: member.role, keyId: record.id, scopes: effectiveScopes(scopesOfKey(record), member.role),
    };
    if (this.cache.size > 10_000) this.cache.clear();
    // A revocation heard while the store was read may be newer than what was read: answer, but do not keep it.
    if (generation === this.generation) this.cache.set(hash, { caller, expiresAt: now + CACHE_TTL_MS, touchedAt: now });
    await this.deps.store.touchApiKey(record.id, now).catch(() => {});
    return caller;
  }

  /**
   * Revokes a key of the caller's workspace: any of them for an admin or owner, else only one they made (others'
   * are not_found); an account id: a key of its personal workspace. Effective at once here and, through pub/sub,
   * in every process.
   */
  async revoke(revoker: Pick<Caller, "workspaceId" | "accountId" | "role"> | string, keyId: string): Promise<ApiKeyView> {
    const r = typeof revoker === "string" ? { workspaceId: revoker, accountId: revoker, role: "owner" as const } : revoker;
    if (!managesKeys(r) && !(await listApiKeys(this.deps, r)).some((k) => k.id === keyId)) throw new AppError("not_found", "No such API key");
    const record = await this.deps.store.revokeApiKey(r.workspaceId, keyId, this.deps.now());
    if (!record) throw new AppError("not_found", "No such API key");
    await recordAudit(this.deps, r, "key.revoked", { type: "key", id: record.id }, { name: record.name });
    this.generation++;
    this.cache.delete(record.keyHash);
    await this.deps.hot.publish(REVOKED_CHANNEL, record.keyHash).catch(() => {});
    return toKeyView(record);
  }
}

/**
 * A real control plane built in this process, for tests that need the app's logic but not a process of its own:
 *
 *   const cp = await startControlPlane();                   // SQLite in a temp dir, memory HotState, test clock
 *   const { key } = await cp.createKey("a@example.com");
 *   const res = await cp.request("POST", "/api/v1/links", { key, json: { url: "https://example.com" } });
 *   await cp.close();                                        // closes the store and removes the temp dir
 *
 * This is the ONE place that names the storage adapters and wires the Deps, so a renamed port or a moved adapter
 * file costs one edit here. Requests go through `app.handle(new Request(...))`, the same entry control/main.ts
 * hands its HTTP requests to, so routing, auth, rate limits and error mapping are the product's own.
 */
import { SCOPES } from "../../shared/enums.ts";
import { expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildControlPlane } from "../../control/app.ts";
import type { Caller, Deps } from "../../control/deps.ts";
import { createApiKey, type KeyAuthenticator } from "../../control/keys/service.ts";
import { MemoryHotState } from "../../shared/adapters/memory/hot-state.ts";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { loadConfig } from "../../shared/config.ts";
import { AppError, ERROR_CODES, type ErrorCode, type Problem } from "../../shared/errors.ts";
import { newId } from "../../shared/ids.ts";
import type { Account, Store } from "../../shared/ports.ts";

/** The public base every in-process control plane believes it serves (no port: nothing listens). */
export const BASE_URL = "http://clink.test";

/** 2030-01-15T12:30:00Z: a fixed start, so dates and hour buckets are the same on every run. */
export const START_TIME = Date.UTC(2030, 0, 15, 12, 30);

/** The time every dependency of the control plane reads; moves only when a test moves it. */
export interface TestClock {
  now(): number;
  set(ms: number): void;
  advance(ms: number): void;
}

export function testClock(start = START_TIME): TestClock {
  let t = start;
  return { now: () => t, set: (ms) => void (t = ms), advance: (ms) => void (t += ms) };
}

export interface RequestOptions {
  /** API key sent as `Authorization: Bearer <key>`. */
  key?: string;
  /** Sent as the body with `content-type: application/json`. */
  json?: unknown;
  /** A raw body (no content type is added). */
  body?: string;
  headers?: Record<string, string>;
}

export interface TestKey {
  key: string;
  account: Account;
  caller: Caller;
}

export interface InProcessControlPlane {
  deps: Deps;
  clock: TestClock;
  auth: KeyAuthenticator;
  /** The Elysia app's handler: a Request in, a Response out. */
  handle(request: Request): Promise<Response>;
  /** A request to `BASE_URL + path`. */
  request(method: string, path: string, opts?: RequestOptions): Promise<Response>;
  /** The account with this email, created on first use with the password `passwordOf(email)`. */
  account(email: string): Promise<Account>;
  /** A new API key of the account with this email (created when missing). */
  createKey(email: string, name?: string): Promise<TestKey>;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Environment variables for shared/config.ts (BASE_URL and DATA_DIR are set by the helper unless given). */
  env?: Record<string, string>;
  /** Start of the test clock; default START_TIME. */
  now?: number;
  /** A migrated store to use (closed by close()) instead of a fresh SQLite file: a Postgres store, say. */
  store?: Store;
}

export const passwordOf = (email: string) => `password-of-${email}`;

export async function startControlPlane(opts: StartOptions = {}): Promise<InProcessControlPlane> {
  const dataDir = mkdtempSync(join(tmpdir(), "clink-in-process-"));
  const config = loadConfig({ BASE_URL, DATA_DIR: dataDir, LOG_LEVEL: "silent", ...opts.env });
  const clock = testClock(opts.now);
  const store: Store = opts.store ?? new SqliteStore(join(dataDir, "clink.sqlite"));
  if (!opts.store) await store.migrate();
  const hot = new MemoryHotState(clock.now);
  const deps: Deps = { config, store, hot, now: clock.now };
  const { app, auth } = buildControlPlane(deps);
  const handle = (request: Request) => app.handle(request);

  async function account(email: string): Promise<Account> {
    const found = await store.getAccountByEmail(email);
    if (found) return found;
    // Argon2id at the product's cost takes 100-400 ms on these machines; the same algorithm at its lowest cost
    // verifies the same way in well under a millisecond. control/accounts/service.ts is tested on its own.
    const passwordHash = await Bun.password.hash(passwordOf(email), { algorithm: "argon2id", memoryCost: 64, timeCost: 1 });
    const created: Account = { id: newId(), email: email.toLowerCase(), passwordHash, createdAt: clock.now() };
    await store.createAccount(created);
    return created;
  }

  return {
    deps,
    clock,
    auth,
    handle,
    request(method, path, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      if (o.key !== undefined) headers.authorization = `Bearer ${o.key}`;
      let body = o.body;
      if (o.json !== undefined) {
        headers["content-type"] ??= "application/json";
        body = JSON.stringify(o.json);
      }
      return handle(new Request(`${BASE_URL}${path}`, { method, headers, body }));
    },
    account,
    async createKey(email, name = "test") {
      const acct = await account(email);
      const { key, view } = await createApiKey(deps, acct.id, name);
      return { key, account: acct, caller: { workspaceId: acct.id, accountId: acct.id, role: "owner", keyId: view.id, scopes: SCOPES } };
    },
    async close() {
      await hot.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A response body as JSON, or null for an empty one (204). */
export async function jsonOf(res: Response): Promise<any> {
  const text = await res.text();
  return text === "" ? null : JSON.parse(text);
}

/**
 * The body of an error answer, after checking it is the §3.3 problem+json for `status` and `code`: content type,
 * `type` URI, title, status and code exact, and a detail text.
 */
export async function problemOf(res: Response, status: number, code: ErrorCode): Promise<Problem> {
  const body = await jsonOf(res);
  expect([res.status, res.headers.get("content-type")]).toEqual([status, "application/problem+json"]);
  expect(body).toMatchObject({ type: `https://clink.dev/problems/${code.replaceAll("_", "-")}`, title: ERROR_CODES[code].title, status, code });
  expect(typeof body.detail).toBe("string");
  return body;
}

/** The §3.1 link object a fresh link with only `slug` and `target` has at `at` (default START_TIME), with `fields` set. */
export function linkObject(slug: string, target: string, fields: Record<string, unknown> = {}, at = START_TIME) {
  const iso = new Date(at).toISOString();
  return {
    domain: new URL(BASE_URL).host, slug, shortUrl: `${BASE_URL}/${slug}`, target, status: "active", createdAt: iso, updatedAt: iso, expiresAt: null, startsAt: null,
    maxHits: null, hits: 0, hasPassword: false, tags: [], folder: null, utmSource: null, utmMedium: null, utmCampaign: null, rules: [],
    abUrls: [], webhookUrl: null, serveOg: false, ogTitle: null, ogDescription: null, ogImageUrl: null, webhookSecret: null,
    webhookPausedAt: null, webhookPausedReason: null,
    expiredUrl: null, externalId: null, state: "live", ...fields,
  };
}

/** The problem object of the AppError a service call rejects with (fails the test when it resolves or throws anything else). */
export async function rejectionOf(call: Promise<unknown>): Promise<Problem> {
  const outcome = await call.then((value) => ({ value }), (error: unknown) => ({ error }));
  if (!("error" in outcome)) throw new Error(`expected a rejection, got ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(AppError);
  return (outcome.error as AppError).toProblem();
}

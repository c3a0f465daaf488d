/**
 * API key revocation reaches every control process within a second (design §8), also when the notification is
 * lost: two KeyAuthenticators stand for two processes, each with its own Redis connection (real Redis) over one
 * real SQLite store. A key read from the store while a revocation is heard is answered but not cached.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { createRedisHotState, type RedisHotState } from "../../shared/adapters/redis/hot-state.ts";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { loadConfig } from "../../shared/config.ts";
import { AppError } from "../../shared/errors.ts";
import type { Store } from "../../shared/ports.ts";
import { createAccount } from "../../control/accounts/service.ts";
import { createApiKey, KeyAuthenticator } from "../../control/keys/service.ts";
import { waitUntil } from "./resubscribe.ts";

const url = process.env.REDIS_URL_TEST || process.env.REDIS_URL || "redis://127.0.0.1:6379";
const dir = mkdtempSync(join(tmpdir(), "clink-revoke-"));
const prefix = `clinktest-${crypto.randomUUID().slice(0, 8)}`;
const store = new SqliteStore(join(dir, "clink.sqlite"));
const hots: RedisHotState[] = [];
const config = loadConfig({ DATA_DIR: dir });

async function processWith(storeOf: Store = store) {
  const hot = createRedisHotState({ url, prefix });
  await hot.ping();
  hots.push(hot);
  const deps = { config, store: storeOf, hot, now: Date.now };
  return { hot, deps, auth: new KeyAuthenticator(deps) };
}

async function newKey(deps: Awaited<ReturnType<typeof processWith>>["deps"]) {
  const account = await createAccount(deps, `${crypto.randomUUID()}@example.com`, "password-123");
  const { key, view } = await createApiKey(deps, account.id, "k");
  return { key, id: view.id, accountId: account.id, header: `Bearer ${key}` };
}

const refused = (p: Promise<unknown>) => p.then(() => "accepted", (e) => (e instanceof AppError ? e.code : String(e)));

afterAll(async () => {
  for (const h of hots) await h.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("API key revocation across processes", () => {
  test("a revocation whose notification was lost takes effect once the subscription is back", async () => {
    await store.migrate();
    const a = await processWith();
    const b = await processWith();
    const k = await newKey(a.deps);
    expect(await b.auth.authenticate(k.header)).toMatchObject({ keyId: k.id }); // cached in b
    // Revoked in the store with no notification at all: the message b would have missed.
    expect(await store.revokeApiKey(k.accountId, k.id, Date.now())).not.toBeNull();
    expect(await b.auth.authenticate(k.header)).toMatchObject({ keyId: k.id }); // still cached: nothing told b
    let resubscribed = false;
    b.hot.onResubscribed(() => (resubscribed = true));
    const admin = new Redis(url);
    try {
      expect(Number(await admin.call("CLIENT", "KILL", "TYPE", "pubsub"))).toBeGreaterThan(0);
    } finally {
      admin.disconnect();
    }
    await waitUntil(async () => resubscribed);
    expect(await refused(b.auth.authenticate(k.header))).toBe("unauthorized");
  });

  test("a key read while its revocation is heard is answered once, then refused (not kept in the cache)", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let holdNext = false;
    // The same store, with one read held open until the revocation has been heard.
    const slowStore = new Proxy(store, {
      get(target, name, receiver) {
        if (name !== "findApiKeyByHash") return Reflect.get(target, name, receiver);
        return async (hash: string) => {
          const record = await target.findApiKeyByHash(hash);
          if (holdNext) {
            holdNext = false;
            await held;
          }
          return record;
        };
      },
    });
    const a = await processWith();
    const b = await processWith(slowStore as Store);
    const k = await newKey(a.deps);
    holdNext = true;
    let heard = false;
    b.hot.subscribe("api-key-revoked", () => (heard = true));
    const inFlight = b.auth.authenticate(k.header); // reads the key, not yet revoked, and waits
    await a.auth.revoke(k.accountId, k.id);
    await waitUntil(async () => heard); // the notification reaches b while its read is still open
    release();
    expect(await inFlight).toMatchObject({ keyId: k.id });
    expect(await refused(b.auth.authenticate(k.header))).toBe("unauthorized");
  });
});

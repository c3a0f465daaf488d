/**
 * Keys made before scopes existed keep full access (issue #23): a key written into a database at the version
 * before key scopes (SQLite 16, Postgres 18), then migrated, is served on every route of the API (scoped-routes.ts)
 * and every MCP tool's scope, and the dashboard shows it with every scope. Real SQLite file, real Postgres schema.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { listApiKeys } from "../../control/keys/service.ts";
import { POSTGRES_MIGRATIONS, applyPostgresMigrations } from "../../shared/adapters/postgres/migrations.ts";
import { PostgresStore } from "../../shared/adapters/postgres/store.ts";
import { SQLITE_MIGRATIONS, applySqliteMigrations } from "../../shared/adapters/sqlite/migrations.ts";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { SCOPES } from "../../shared/enums.ts";
import { newApiKey, sha256Hex } from "../../shared/ids.ts";
import type { Store } from "../../shared/ports.ts";
import { startControlPlane } from "../helpers/in-process.ts";
import { fixturesFor, requestOf, SCOPED_ROUTES } from "./scoped-routes.ts";

const KEY = newApiKey();
const ACCOUNT = `INSERT INTO accounts (id, email, password_hash, created_at) VALUES ('acct-old', 'old@example.com', 'h', 0)`;
const OLD_KEY = `INSERT INTO api_keys (id, account_id, name, key_hash, prefix, created_at) VALUES ('key-old', 'acct-old', 'from before', '${sha256Hex(KEY)}', '${KEY.slice(0, 7)}', 0)`;

/** Every route of the API and a tool of each scope, called with the old key on a control plane over `store`. */
async function servesEverything(store: Store): Promise<void> {
  const cp = await startControlPlane({ store, env: { WEBHOOK_ALLOW_PRIVATE: "true", RATE_LIMIT_PER_MINUTE: "100000" } });
  try {
    expect((await listApiKeys(cp.deps, "acct-old")).map((k) => [k.name, k.scopes])).toEqual([["from before", [...SCOPES]]]);
    const fx = fixturesFor(cp, KEY);
    for (const r of SCOPED_ROUTES) {
      const res = await requestOf(cp, r, await r.call(fx), KEY);
      expect([r.route, res.status]).toEqual([r.route, r.ok]);
    }
    const slug = await fx.link();
    for (const [name, args] of [["list_links", {}], ["delete_link", { slug }], ["get_link_stats", {}]] as const) {
      const res = await cp.request("POST", "/mcp", {
        key: KEY, json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }, headers: { accept: "application/json, text/event-stream" },
      });
      expect([name, res.status]).toEqual([name, 200]);
    }
  } finally {
    await cp.close();
  }
}

describe("a key from before scopes, after the migration", () => {
  const dir = mkdtempSync(join(tmpdir(), "clink-key-scopes-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("SQLite: from version 16, its scopes are NULL and it does everything", async () => {
    const file = join(dir, "v16.sqlite");
    const db = new Database(file);
    applySqliteMigrations(db, SQLITE_MIGRATIONS.filter((m) => m.version <= 16));
    db.run(ACCOUNT);
    db.run(OLD_KEY);
    db.close();
    const store = new SqliteStore(file);
    await store.migrate();
    expect((await store.findApiKeyByHash(sha256Hex(KEY)))?.scopes).toBeNull();
    await servesEverything(store); // closes the store
  });

  test("Postgres: from version 18, its scopes are NULL and it does everything", async () => {
    const url = process.env.DATABASE_URL_TEST ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
    const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
    const sql = postgres(url, { max: 1, onnotice: () => {}, connection: { search_path: schema } });
    try {
      await applyPostgresMigrations(sql, schema, POSTGRES_MIGRATIONS.filter((m) => m.version <= 18));
      await sql.unsafe(ACCOUNT);
      await sql.unsafe(OLD_KEY);
      const store = new PostgresStore(url, { schema, max: 4 });
      await store.migrate();
      expect((await store.findApiKeyByHash(sha256Hex(KEY)))?.scopes).toBeNull();
      await servesEverything(store);
    } finally {
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await sql.end();
    }
  });
});

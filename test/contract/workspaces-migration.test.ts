/**
 * Workspaces over a database written before them (SQLite 20, Postgres 22): migration 21 / 23 gives every account its
 * personal workspace (id = the account's) and owner membership, and every row each account held (key, session, links
 * with tags and clicks, domain, webhook endpoint and delivery, import job, OAuth grant) is still there, unchanged,
 * now its personal workspace's; SQLite's rebuilt tables keep every index and trigger. Afterwards a shared workspace
 * can own rows, no row can name a workspace that does not exist, and deleting one cascades.
 * Run against a real SQLite file and a real Postgres schema.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { PostgresStore } from "../../shared/adapters/postgres/store.ts";
import { POSTGRES_MIGRATIONS, applyPostgresMigrations } from "../../shared/adapters/postgres/migrations.ts";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { SQLITE_MIGRATIONS, applySqliteMigrations } from "../../shared/adapters/sqlite/migrations.ts";
import { encodeDims } from "../../shared/clicks/dimensions.ts";
import type { Store } from "../../shared/ports.ts";
import { linkFor, NO_DIMS, rejectionOf, T0 } from "./store-harness.ts";

const HOUR = 3_600_000;
/** Every table holding what an account had, read whole before and after (the columns it had before). */
const TABLES = ["api_keys", "sessions", "links", "link_tags", "click_cells", "domains", "webhook_endpoints", "webhook_deliveries", "import_jobs", "oauth_grants"];

/** Rows as the schema before workspaces takes them, in either dialect (`yes`: its true, `scopes`: a key's scope list). */
function seed(d: { yes: string; scopes: string }): string[] {
  const dims = encodeDims({ ...NO_DIMS, country: "DE", device: "mobile" });
  return [
    `INSERT INTO accounts (id, email, password_hash, created_at) VALUES ('a', 'a@x.io', 'h', ${T0}), ('b', 'b@x.io', 'h', ${T0 + 1})`,
    `INSERT INTO api_keys (id, account_id, name, key_hash, prefix, created_at, scopes) VALUES ('k1', 'a', 'ci', 'hash-k1', 'ck_AbC1', ${T0}, ${d.scopes})`,
    `INSERT INTO sessions (id_hash, account_id, csrf_token, created_at, expires_at) VALUES ('s1', 'a', 'csrf', ${T0}, ${T0 + 24 * HOUR})`,
    ...["l1", "l2"].map((id) => `INSERT INTO links (id, account_id, domain, slug, target, status, created_at, updated_at, hits, tags, rules, ab_urls, serve_og, folder)
      VALUES ('${id}', 'a', 'sho.rt', 's-${id}', 'https://e.com/${id}', 'active', ${T0}, ${T0}, 3, '["x"]', '[]', '[]', ${d.yes}, 'F')`),
    `INSERT INTO link_tags (link_id, tag) VALUES ('l1', 'x'), ('l2', 'x')`,
    `INSERT INTO click_cells (link_id, hour, dims, bot, clicks, visitors) VALUES ('l1', ${T0}, '${dims}', ${d.yes}, 2, 1), ('l2', ${T0 + HOUR}, '${dims}', ${d.yes}, 1, 1)`,
    `INSERT INTO domains (id, account_id, hostname, method, token, state, created_at, updated_at) VALUES ('d1', 'a', 'go.example.com', 'dns', 't', 'verified', ${T0}, ${T0})`,
    `INSERT INTO webhook_endpoints (id, account_id, url, secret, events, active, created_at, updated_at)
      VALUES ('e1', 'a', 'https://hooks.example.com/', 'whsec_x', 'link.created', ${d.yes}, ${T0}, ${T0})`,
    `INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event_type, payload, created_at, status, next_attempt_at, give_up_at)
      VALUES ('v1', 'e1', 'a', 'link.created', '{}', ${T0}, 'pending', ${T0}, ${T0 + HOUR})`,
    `INSERT INTO import_jobs (id, account_id, format, on_conflict, status, counts, rows, created_at, updated_at)
      VALUES ('j1', 'a', 'bitly', 'skip', 'done', '{}', '[]', ${T0}, ${T0})`,
    `INSERT INTO oauth_grants (id, account_id, client_id, client_name, scopes, resource, created_at) VALUES ('g1', 'a', 'c', 'C', 'links:read', 'https://sho.rt/mcp', ${T0})`,
  ];
}

/** What must hold once migrated, through the store; `before`/`after` read every TABLES row of the old columns. */
async function checkMigrated(store: Store, before: unknown[][], after: () => Promise<unknown[][]>) {
  expect(await after()).toEqual(before);
  for (const id of ["a", "b"]) {
    const personal = { id, name: "Personal", personalOf: id, defaultDomain: null, createdAt: id === "a" ? T0 : T0 + 1 };
    expect(await store.listMemberships(id)).toEqual([{ workspace: personal, role: "owner" }]);
  }
  expect(await store.findApiKeyByHash("hash-k1")).toMatchObject({ id: "k1", accountId: "a", createdBy: "a", scopes: ["links:read"] });
  expect((await store.getSession("s1"))?.workspaceId).toBeNull();
  expect((await store.listLinks("a", { limit: 10 })).links.map((l) => [l.id, l.tags, l.hits])).toEqual([["l2", ["x"], 3], ["l1", ["x"], 3]]);
  let clicks = 0;
  for await (const c of store.readCells({ accountId: "a" }, 0, Number.MAX_SAFE_INTEGER)) clicks += c.clicks;
  expect(clicks).toBe(3);
  expect((await store.listDomains("a")).map((d) => d.hostname)).toEqual(["go.example.com"]);
  expect((await store.listWebhookDeliveries("a", "e1", 10)).deliveries.map((d) => d.id)).toEqual(["v1"]);
  expect((await store.listImportJobs("a", 10)).map((j) => j.id)).toEqual(["j1"]);
  expect(await store.getOAuthGrant("g1")).toMatchObject({ accountId: "a", workspaceId: "a" });

  // The owner columns now name workspaces: a shared one can own a link, a missing one cannot.
  expect(await store.createWorkspace({ id: "w-team", name: "Team", personalOf: null, defaultDomain: null, createdAt: T0 }, "b")).toBe(true);
  expect(await store.insertLinks([linkFor("w-team")])).toEqual([true]);
  expect(await rejectionOf(store.insertLinks([linkFor("w-nobody")]))).toBeDefined();
  // And a deleted workspace takes what it holds.
  expect(await store.deleteWorkspace("a")).toBe(true);
  expect(await store.getLinkById("l1")).toBeNull();
  expect(await store.findApiKeyByHash("hash-k1")).toBeNull();
  expect(await store.getOAuthGrant("g1")).toBeNull();
  expect(await store.getAccount("a")).not.toBeNull();
}

describe("workspaces over a database from before them", () => {
  const dir = mkdtempSync(join(tmpdir(), "clink-ws-migration-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("SQLite: migration 21 makes personal workspaces, keeps every row, index and trigger", async () => {
    const file = join(dir, "v20.sqlite");
    const db = new Database(file);
    db.run("PRAGMA foreign_keys = ON");
    applySqliteMigrations(db, SQLITE_MIGRATIONS.filter((m) => m.version <= 20));
    for (const s of seed({ yes: "1", scopes: "'links:read'" })) db.run(s);
    const columns = TABLES.map((t) => db.query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${t}')`).all().map((c) => c.name).join(", "));
    const read = (d: Database) => TABLES.map((t, i) => d.query(`SELECT ${columns[i]} FROM ${t} ORDER BY 1, 2`).all());
    const before = read(db);
    const schemaOf = (d: Database) =>
      d.query<{ sql: string }, []>(`SELECT sql FROM sqlite_schema WHERE type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY name`).all().map((r) => r.sql);
    const indexesBefore = schemaOf(db);
    db.close();

    const store = new SqliteStore(file);
    try {
      await store.migrate();
      const check = new Database(file, { readonly: true });
      try {
        expect(schemaOf(check)).toEqual(expect.arrayContaining(indexesBefore));
        expect(check.query("PRAGMA foreign_key_check").all()).toEqual([]);
        await checkMigrated(store, before, async () => read(check));
      } finally {
        check.close();
      }
    } finally {
      await store.close();
    }
  });

  test("Postgres: migration 23 makes personal workspaces and keeps every row", async () => {
    const url = process.env.DATABASE_URL_TEST ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
    const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
    const sql = postgres(url, { max: 1, onnotice: () => {}, connection: { search_path: schema } });
    let store: PostgresStore | null = null;
    try {
      await applyPostgresMigrations(sql, schema, POSTGRES_MIGRATIONS.filter((m) => m.version <= 22));
      for (const s of seed({ yes: "true", scopes: "ARRAY['links:read']" })) await sql.unsafe(s);
      const columns = await Promise.all(TABLES.map(async (t) =>
        (await sql<{ column_name: string }[]>`
          SELECT column_name FROM information_schema.columns WHERE table_schema = ${schema} AND table_name = ${t} ORDER BY ordinal_position`)
          .map((c) => c.column_name).join(", ")));
      const read = () => Promise.all(TABLES.map(async (t, i) => [...(await sql.unsafe(`SELECT ${columns[i]} FROM ${t} ORDER BY 1, 2`))]));
      const before = await read();
      store = new PostgresStore(url, { schema });
      await store.migrate();
      await checkMigrated(store, before, read);
    } finally {
      await store?.close();
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await sql.end();
    }
  });
});

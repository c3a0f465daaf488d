/**
 * The upgrade to raw clicks kept per batch (SQLite migration 4, Postgres migration 5), from a database written
 * before the clicks' key changed (SQLite 2, Postgres 3): every click stored before is still there with all its
 * fields (one log row per link and minute), the old table is gone, new batches are counted, and a deleted link's
 * raw clicks still go with it. Run against a real SQLite file and a real Postgres schema.
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
import type { Store, StoredClick } from "../../shared/ports.ts";

const MINUTE = 60_000;
const T = Date.parse("2026-01-01T10:00:00Z");
const LINK_COLUMNS = `(id, account_id, domain, slug, target, status, created_at, updated_at, hits, tags, rules, ab_urls, serve_og)`;

/** Clicks as the old table held them: three of l1 in two minutes (one with every optional field), one of l2. */
const OLD_CLICKS = [
  `('c1', 'l1', ${T + 1_000}, 'US', 'mobile', 'Safari', 'iOS', 'https://ref.example/x', 1)`,
  `('c2', 'l1', ${T + 2_000}, NULL, 'desktop', 'Chrome', 'Linux', NULL, NULL)`,
  `('c3', 'l1', ${T + MINUTE + 5}, 'DE', 'tablet', 'Firefox', 'Android', NULL, 0)`,
  `('c4', 'l2', ${T}, 'FR', 'desktop', 'Edge', 'Windows', NULL, NULL)`,
].join(", ");
const INSERT_OLD = `INSERT INTO clicks (id, link_id, ts, country, device, browser, os, referrer, variant) VALUES ${OLD_CLICKS}`;

const old = (batch: string, ts: number, country: string | null, device: string, browser: string, os: string, referrer: string | null, variant: number | null): StoredClick =>
  ({ batch, linkId: "l1", ts, country, device, browser, os, referrer, variant });

async function rawClicksOf(store: Store, linkId: string): Promise<StoredClick[]> {
  const out: StoredClick[] = [];
  for await (const c of store.rawClicks(linkId)) out.push(c);
  return out;
}

/** What must hold after the upgrade, through the store; `tables` lists the click tables left. */
async function checkUpgraded(store: Store, tables: () => Promise<string[]>) {
  expect(await tables()).toEqual(["click_batches"]);
  expect(await rawClicksOf(store, "l1")).toEqual([
    old(`minute:${T}`, T + 1_000, "US", "mobile", "Safari", "iOS", "https://ref.example/x", 1),
    old(`minute:${T}`, T + 2_000, null, "desktop", "Chrome", "Linux", null, null),
    old(`minute:${T + MINUTE}`, T + MINUTE + 5, "DE", "tablet", "Firefox", "Android", null, 0),
  ]);
  const fresh: StoredClick = { ...old("b-new", T + 2 * MINUTE, "US", "desktop", "Chrome", "Linux", null, null) };
  await store.recordClicks([fresh]);
  await store.recordClicks([fresh]); // redelivered: once
  expect((await store.getLinkById("l1"))?.hits).toBe(1); // hits were 0 in the hand-made rows
  expect((await rawClicksOf(store, "l1")).length).toBe(4);
  await store.deleteLink("l1");
  expect(await rawClicksOf(store, "l1")).toEqual([]);
  expect((await rawClicksOf(store, "l2")).map((c) => c.browser)).toEqual(["Edge"]);
}

describe("raw clicks kept per batch", () => {
  const dir = mkdtempSync(join(tmpdir(), "clink-click-log-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("SQLite: migrations 3 and 4 carry the clicks stored per row into the per-batch log", async () => {
    const file = join(dir, "v2.sqlite");
    const db = new Database(file);
    applySqliteMigrations(db, SQLITE_MIGRATIONS.filter((m) => m.version <= 2));
    db.run(`INSERT INTO accounts (id, email, password_hash, created_at) VALUES ('a', 'a@x.io', 'h', 0)`);
    for (const id of ["l1", "l2"]) db.run(`INSERT INTO links ${LINK_COLUMNS} VALUES ('${id}', 'a', 'd', 's${id}', 'https://e.com', 'active', 0, 0, 0, '[]', '[]', '[]', 0)`);
    db.run(INSERT_OLD);
    db.close();

    const store = new SqliteStore(file);
    try {
      await store.migrate();
      const read = new Database(file, { readonly: true });
      try {
        await checkUpgraded(store, async () =>
          read.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'click%' AND name NOT LIKE 'click_rollups' AND name NOT IN ('click_hourly', 'click_totals') ORDER BY name").all().map((r) => r.name),
        );
      } finally {
        read.close();
      }
    } finally {
      await store.close();
    }
  });

  test("Postgres: migrations 4 and 5 carry the clicks stored per row into the per-batch log", async () => {
    const url = process.env.DATABASE_URL_TEST ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
    const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
    const sql = postgres(url, { max: 1, onnotice: () => {}, connection: { search_path: schema } });
    let store: PostgresStore | null = null;
    try {
      await applyPostgresMigrations(sql, schema, POSTGRES_MIGRATIONS.filter((m) => m.version <= 3));
      await sql`INSERT INTO accounts (id, email, password_hash, created_at) VALUES ('a', 'a@x.io', 'h', 0)`;
      for (const id of ["l1", "l2"]) {
        await sql.unsafe(`INSERT INTO links ${LINK_COLUMNS} VALUES ('${id}', 'a', 'd', 's${id}', 'https://e.com', 'active', 0, 0, 0, '[]', '[]', '[]', false)`);
      }
      await sql.unsafe(INSERT_OLD);
      store = new PostgresStore(url, { schema });
      await store.migrate();
      await checkUpgraded(store, async () =>
        (await sql<{ tablename: string }[]>`
          SELECT tablename FROM pg_tables WHERE schemaname = ${schema} AND tablename LIKE 'click%'
            AND tablename NOT IN ('click_rollups', 'click_hourly', 'click_totals') ORDER BY tablename`).map((r) => r.tablename),
      );
    } finally {
      await store?.close();
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await sql.end();
    }
  });
});

/**
 * The raw click log through both of its upgrades, from a database written before the clicks' key changed
 * (SQLite 2, Postgres 3): per-row clicks became per-(batch, link) rows (SQLite 4, Postgres 5), and those became
 * rows of the per-batch log (SQLite 11, Postgres 14), named <batch>:<link>. Every click stored before is still
 * there with every field it had (the referrer as referrerUrl; no bot or first visit; dimensions not recorded then
 * null), the old tables are gone, new batches are counted once, and a deleted link's raw clicks are not read.
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
import type { Store, StoredClick } from "../../shared/ports.ts";
import { click, collect, NO_DIMS } from "./store-harness.ts";

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

const old = (batch: string, ts: number, country: string | null, device: string, browser: string, os: string, referrerUrl: string | null, variant: string | null): StoredClick =>
  ({ batch, linkId: "l1", ts, dims: { ...NO_DIMS, country, device, browser, os, variant }, bot: false, firstVisit: false, referrerUrl });

const rawClicksOf = (store: Store, linkId: string) => collect(store.readClickLog({ linkId }, 0, Number.MAX_SAFE_INTEGER));

/** What must hold after the upgrade, through the store; `tables` lists the click tables left. */
async function checkUpgraded(store: Store, tables: () => Promise<string[]>, more: string[] = []) {
  // click_account_totals, click_link_totals: account totals and ranked link totals (SQLite 26, Postgres 28);
  // click_hour_digests: busy link-hours' digests (SQLite 27, Postgres 29).
  const totals = ["click_account_totals", "click_hour_digests", "click_link_totals"];
  expect(await tables()).toEqual([...more, ...totals, "click_cells", "click_log", "click_settle_state", "click_settled"].sort());
  expect(await rawClicksOf(store, "l1")).toEqual([
    old(`minute:${T}:l1`, T + 1_000, "US", "mobile", "Safari", "iOS", "https://ref.example/x", "1"),
    old(`minute:${T}:l1`, T + 2_000, null, "desktop", "Chrome", "Linux", null, null),
    old(`minute:${T + MINUTE}:l1`, T + MINUTE + 5, "DE", "tablet", "Firefox", "Android", null, "0"),
  ]);
  const fresh = click("l1", { batch: "b-new", ts: T + 2 * MINUTE });
  await store.recordClicks([fresh]);
  await store.recordClicks([fresh]); // redelivered: once
  expect((await store.getLinkById("l1"))?.hits).toBe(1); // hits were 0 in the hand-made rows
  expect((await rawClicksOf(store, "l1")).length).toBe(4);
  await store.deleteLink("l1");
  expect(await rawClicksOf(store, "l1")).toEqual([]);
  expect((await rawClicksOf(store, "l2")).map((c) => c.dims.browser)).toEqual(["Edge"]);
}

describe("raw clicks kept per batch, all links of a batch in one row", () => {
  const dir = mkdtempSync(join(tmpdir(), "clink-click-log-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("SQLite: migrations 3, 4 and 11 carry the clicks stored per row into the per-batch log", async () => {
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
          read.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'click%' ORDER BY name").all().map((r) => r.name),
          ["click_recent"], // SQLite notes the links with cells in unsettled hours (migration 26)
        );
      } finally {
        read.close();
      }
    } finally {
      await store.close();
    }
  });

  test("Postgres: migrations 4, 5 and 14 carry the clicks stored per row into the per-batch log", async () => {
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
          SELECT tablename FROM pg_tables WHERE schemaname = ${schema} AND tablename LIKE 'click%' ORDER BY tablename`).map((r) => r.tablename),
        ["click_cell_sets"], // Postgres appends recorded cells as sets (migration 25)
      );
    } finally {
      await store?.close();
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await sql.end();
    }
  });
});

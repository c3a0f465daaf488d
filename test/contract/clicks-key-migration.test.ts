/**
 * The migration that keys raw clicks by (link_id, ts, id) (SQLite 3, Postgres 4) keeps the clicks already stored,
 * still writes a redelivered click once, and still deletes a link's clicks with the link. Run against a real
 * SQLite file and a real Postgres schema, each first brought to the version before.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { PostgresLinkStore } from "../../shared/adapters/postgres/link-store.ts";
import { POSTGRES_MIGRATIONS, applyPostgresMigrations } from "../../shared/adapters/postgres/migrations.ts";
import { SqliteLinkStore } from "../../shared/adapters/sqlite/link-store.ts";
import { SQLITE_MIGRATIONS, applySqliteMigrations } from "../../shared/adapters/sqlite/migrations.ts";
import type { LinkStore, StoredClick } from "../../shared/ports.ts";

const HOUR = 3_600_000;
const T = Date.parse("2026-01-01T10:00:00Z");
const click = (id: string, linkId: string, ts = T): StoredClick => ({ id, linkId, ts, country: "US", device: "desktop", browser: "Chrome", os: "Linux", referrer: null, variant: null });
const LINK_COLUMNS = `(id, account_id, domain, slug, target, status, created_at, updated_at, hits, tags, rules, ab_urls, serve_og)`;

/** What must hold after the upgrade, through the LinkStore; `rawCount` reads the clicks table directly. */
async function checkUpgraded(store: LinkStore, rawCount: () => Promise<number>) {
  expect(await rawCount()).toBe(2); // the clicks stored before the upgrade are still there
  // The same clicks delivered again (e.g. a batch redelivered across the upgrade) are not counted twice.
  await store.recordClicks([click("c1", "l1"), click("c3", "l1", T + HOUR), click("c3", "l1", T + HOUR)]);
  expect(await rawCount()).toBe(3);
  expect((await store.getLinkById("l1"))?.hits).toBe(1); // only c3 is new (hits were 0 in the hand-made rows)
  await store.deleteLink("l1");
  expect(await rawCount()).toBe(1); // l2's click stays
}

describe("raw clicks keyed by (link_id, ts, id)", () => {
  const dir = mkdtempSync(join(tmpdir(), "clink-clicks-key-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("SQLite: migration 3 keeps stored clicks and their behaviour", async () => {
    const file = join(dir, "v2.sqlite");
    const db = new Database(file);
    applySqliteMigrations(db, SQLITE_MIGRATIONS.filter((m) => m.version <= 2));
    db.run(`INSERT INTO accounts (id, email, password_hash, created_at) VALUES ('a', 'a@x.io', 'h', 0)`);
    for (const id of ["l1", "l2"]) db.run(`INSERT INTO links ${LINK_COLUMNS} VALUES ('${id}', 'a', 'd', 's${id}', 'https://e.com', 'active', 0, 0, 0, '[]', '[]', '[]', 0)`);
    db.run(`INSERT INTO clicks (id, link_id, ts, device, browser, os) VALUES ('c1', 'l1', ${T}, 'desktop', 'Chrome', 'Linux'), ('c2', 'l2', ${T}, 'desktop', 'Chrome', 'Linux')`);
    db.close();

    const store = new SqliteLinkStore(file);
    try {
      await store.migrate();
      const read = new Database(file, { readonly: true });
      try {
        const pk = read.query<{ name: string; pk: number }, []>("PRAGMA table_info(clicks)").all().filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
        expect(pk.map((c) => c.name)).toEqual(["link_id", "ts", "id"]);
        await checkUpgraded(store, async () => read.query<{ n: number }, []>("SELECT count(*) AS n FROM clicks").get()!.n);
      } finally {
        read.close();
      }
    } finally {
      await store.close();
    }
  });

  test("Postgres: migration 4 keeps stored clicks and their behaviour", async () => {
    const url = process.env.DATABASE_URL_TEST ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
    const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
    const sql = postgres(url, { max: 1, onnotice: () => {}, connection: { search_path: schema } });
    let store: PostgresLinkStore | null = null;
    try {
      await applyPostgresMigrations(sql, schema, POSTGRES_MIGRATIONS.filter((m) => m.version <= 3));
      await sql`INSERT INTO accounts (id, email, password_hash, created_at) VALUES ('a', 'a@x.io', 'h', 0)`;
      for (const id of ["l1", "l2"]) {
        await sql.unsafe(`INSERT INTO links ${LINK_COLUMNS} VALUES ('${id}', 'a', 'd', 's${id}', 'https://e.com', 'active', 0, 0, 0, '[]', '[]', '[]', false)`);
      }
      await sql`INSERT INTO clicks (id, link_id, ts, device, browser, os) VALUES ('c1', 'l1', ${T}, 'desktop', 'Chrome', 'Linux'), ('c2', 'l2', ${T}, 'desktop', 'Chrome', 'Linux')`;
      store = new PostgresLinkStore(url, { schema });
      await store.migrate();
      const pk = await sql<{ attname: string }[]>`
        SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
        WHERE i.indrelid = 'clicks'::regclass AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)`;
      expect(pk.map((r) => r.attname)).toEqual(["link_id", "ts", "id"]);
      const indexes = await sql`SELECT indexname FROM pg_indexes WHERE schemaname = ${schema} AND tablename = 'clicks'`;
      expect(indexes.length).toBe(1);
      await checkUpgraded(store, async () => (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM clicks`)[0]!.n);
    } finally {
      await store?.close();
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await sql.end();
    }
  });
});

/**
 * The analytics migration (SQLite 11, Postgres 14) turns the four-dimension rollups into rollup cells with the
 * same numbers: a database at the version before, with rollups whose totals and hourly counts the old triggers
 * kept, answers the same totals per device, browser, country and variant, and the same hourly counts, from its
 * cells and (after settleDays) from its settled totals. Real SQLite file, real Postgres schema.
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
import type { Store } from "../../shared/ports.ts";

const HOUR = 3_600_000;
const T = Date.parse("2026-01-01T10:00:00Z");
const LINK = `INSERT INTO links (id, account_id, domain, slug, target, status, created_at, updated_at, hits, tags, rules, ab_urls, serve_og)
  VALUES ('l', 'a', 'd', 's', 'https://e.com', 'active', 0, 0, 6, '[]', '[]', '[]', `;
/** Old rollups: '' = no country, -1 = no variant; one cell written twice (the update trigger's path). */
const ROLLUPS = `INSERT INTO click_rollups (link_id, hour, device, browser, country, variant, clicks) VALUES
  ('l', ${T}, 'mobile', 'Safari', 'US', 0, 2), ('l', ${T}, 'desktop', 'Chrome', '', -1, 2), ('l', ${T + 25 * HOUR}, 'tablet', 'Firefox', 'DE', 1, 1)`;
const BUMP = `UPDATE click_rollups SET clicks = clicks + 1 WHERE device = 'mobile'`;
const OLD_TOTALS = `SELECT dimension, value, clicks FROM click_totals WHERE clicks > 0 ORDER BY dimension, value`;
const OLD_HOURLY = `SELECT hour, clicks FROM click_hourly ORDER BY hour`;

type Totals = { dimension: string; value: string; clicks: number }[];
type Hourly = { hour: number; clicks: number }[];

/** The old totals' spelling of a value: '' for no country, -1 for no variant. */
const oldValue = (dimension: string, value: string | null) => value ?? (dimension === "variant" ? "-1" : "");

/** What the migrated store answers, in the old tables' shape: from cells, then from settled totals. */
async function checkSameNumbers(store: Store, totals: Totals, hourly: Hourly): Promise<void> {
  const fromCells = new Map<string, number>();
  const hours = new Map<number, number>();
  for await (const c of store.readCells({ linkId: "l" }, 0, Number.MAX_SAFE_INTEGER)) {
    expect([c.bot, c.visitors, c.dims.os, c.dims.referrer, c.dims.via]).toEqual([false, 0, null, null, null]);
    for (const d of ["device", "browser", "country", "variant"] as const) {
      const key = `${d}|${oldValue(d, c.dims[d])}`;
      fromCells.set(key, (fromCells.get(key) ?? 0) + c.clicks);
    }
    hours.set(c.hour, (hours.get(c.hour) ?? 0) + c.clicks);
  }
  const want = new Map(totals.map((t) => [`${t.dimension}|${t.value}`, Number(t.clicks)]));
  expect(fromCells).toEqual(want);
  expect([...hours].sort((a, b) => a[0] - b[0])).toEqual(hourly.map((h) => [Number(h.hour), Number(h.clicks)]));

  expect(await store.settleDays(T + 3 * 24 * HOUR)).toBe(Date.parse("2026-01-04T00:00:00Z"));
  const settled = new Map<string, number>();
  for (const d of ["device", "browser", "country", "variant"] as const) {
    for await (const r of store.readSettled({ linkId: "l" }, d, 0, Number.MAX_SAFE_INTEGER)) {
      const key = `${d}|${oldValue(d, r.value)}`;
      settled.set(key, (settled.get(key) ?? 0) + r.clicks);
    }
  }
  expect(settled).toEqual(want);
  const settledHours: [number, number][] = [];
  for await (const r of store.readSettled({ linkId: "l" }, null, 0, Number.MAX_SAFE_INTEGER)) settledHours.push([r.bucket, r.clicks]);
  expect(settledHours.sort((a, b) => a[0] - b[0])).toEqual(hourly.map((h) => [Number(h.hour), Number(h.clicks)]));
  expect((await store.getLinkById("l"))?.hits).toBe(6);
}

describe("rollups become cells with the same numbers", () => {
  const dir = mkdtempSync(join(tmpdir(), "clink-totals-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("SQLite: from version 10", async () => {
    const file = join(dir, "v10.sqlite");
    const db = new Database(file);
    applySqliteMigrations(db, SQLITE_MIGRATIONS.filter((m) => m.version <= 10));
    db.run(`INSERT INTO accounts (id, email, password_hash, created_at) VALUES ('a', 'a@x.io', 'h', 0)`);
    db.run(`${LINK}0)`);
    db.run(ROLLUPS);
    db.run(BUMP);
    const totals = db.query<Totals[number], []>(OLD_TOTALS).all();
    const hourly = db.query<Hourly[number], []>(OLD_HOURLY).all();
    db.close();
    expect(totals.length).toBe(12); // three values of each of four dimensions

    const store = new SqliteStore(file);
    try {
      await store.migrate();
      await checkSameNumbers(store, totals, hourly);
    } finally {
      await store.close();
    }
  });

  test("Postgres: from version 13", async () => {
    const url = process.env.DATABASE_URL_TEST ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
    const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
    const sql = postgres(url, { max: 1, onnotice: () => {}, connection: { search_path: schema } });
    let store: PostgresStore | null = null;
    try {
      await applyPostgresMigrations(sql, schema, POSTGRES_MIGRATIONS.filter((m) => m.version <= 13));
      await sql`INSERT INTO accounts (id, email, password_hash, created_at) VALUES ('a', 'a@x.io', 'h', 0)`;
      await sql.unsafe(`${LINK}false)`);
      await sql.unsafe(ROLLUPS);
      await sql.unsafe(BUMP);
      const totals = [...(await sql.unsafe<Totals>(OLD_TOTALS))];
      const hourly = [...(await sql.unsafe<Hourly>(OLD_HOURLY))];
      expect(totals.length).toBe(12); // three values of each of four dimensions
      store = new PostgresStore(url, { schema });
      await store.migrate();
      await checkSameNumbers(store, totals, hourly);
    } finally {
      await store?.close();
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await sql.end();
    }
  });
});

/**
 * SQLite migration 26 and Postgres migration 28 (account totals, ranked link totals; docs/adr/0013): a database with
 * settled days and cells of an unsettled hour, upgraded, answers its accounts' day totals and ranked link totals
 * from the rows settled before, and its accounts' unsettled hour from its cells; late clicks and deletions then keep
 * them. The settled rows are what settleDays wrote before the migration (settledRows, the same sums). Real SQLite
 * file, real Postgres schema.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { settledRows, type CellSum } from "../../shared/adapters/click-log.ts";
import { PostgresStore } from "../../shared/adapters/postgres/store.ts";
import { POSTGRES_MIGRATIONS, applyPostgresMigrations } from "../../shared/adapters/postgres/migrations.ts";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { SQLITE_MIGRATIONS, applySqliteMigrations } from "../../shared/adapters/sqlite/migrations.ts";
import { encodeDims } from "../../shared/clicks/dimensions.ts";
import { newLinkRecord } from "../../shared/link.ts";
import type { Store } from "../../shared/ports.ts";
import { click, collect, HOUR, NO_DIMS } from "./store-harness.ts";

const DAY = 24 * HOUR;
const D = Date.UTC(2026, 5, 29);
const dims = (over: Partial<typeof NO_DIMS>) => encodeDims({ ...NO_DIMS, via: "link", ...over });
/** Cells of two settled days (one across a month's end) and of an hour of the day after them, not settled. */
const CELLS: CellSum[] = [
  { linkId: "l1", hour: D + HOUR, dims: dims({ country: "US" }), bot: false, clicks: 5, visitors: 2 },
  { linkId: "l1", hour: D + HOUR, dims: dims({ via: "qr" }), bot: false, clicks: 1, visitors: 1 },
  { linkId: "l1", hour: D + 2 * HOUR, dims: dims({}), bot: true, clicks: 3, visitors: 0 },
  { linkId: "l2", hour: D + 5 * HOUR, dims: dims({ country: "DE" }), bot: false, clicks: 7, visitors: 3 },
  { linkId: "l2", hour: D + 2 * DAY + 3 * HOUR, dims: dims({ country: "DE" }), bot: false, clicks: 4, visitors: 1 },
  { linkId: "l3", hour: D + DAY + 4 * HOUR, dims: dims({}), bot: false, clicks: 2, visitors: 2 },
  { linkId: "m1", hour: D + DAY + 4 * HOUR, dims: dims({}), bot: false, clicks: 9, visitors: 9 },
  { linkId: "m1", hour: D + 2 * DAY + 3 * HOUR, dims: dims({}), bot: false, clicks: 6, visitors: 1 },
];
const SETTLED = settledRows(CELLS.filter((c) => c.hour < D + 2 * DAY));

/** The store of a database at the version before, with accounts a (links l1-l3) and b (m1). */
async function seedLinks(store: Store) {
  for (const [account, links] of [["a", ["l1", "l2", "l3"]], ["b", ["m1"]]] as const) {
    await store.createAccount({ id: account, email: `${account}@totals.example`, passwordHash: "x", createdAt: 0 });
    await store.insertLinks(links.map((id) => newLinkRecord({ id, accountId: account, domain: "d", slug: id, target: "https://e.com", createdAt: 0 })));
  }
}

async function checkUpgraded(store: Store) {
  const totals = async (account: string) =>
    (await collect(store.readAccountTotals(account, 0, Number.MAX_SAFE_INTEGER))).map((t) => [t.bucket, t.bot, t.clicks, t.visitors]).sort();
  expect(await totals("a")).toEqual([[D, false, 13, 6], [D, true, 3, 0], [D + DAY, false, 2, 2]].sort());
  expect(await totals("b")).toEqual([[D + DAY, false, 9, 9]]);
  expect(await store.readRankedLinks("a", "day", D, false, 0, 10)).toEqual([{ linkId: "l2", clicks: 7, visitors: 3 }, { linkId: "l1", clicks: 6, visitors: 3 }]);
  // 29 June and 30 June are in June; the next month's list is empty.
  expect(await store.readRankedLinks("a", "month", Date.UTC(2026, 5, 1), false, 0, 10)).toEqual([
    { linkId: "l2", clicks: 7, visitors: 3 }, { linkId: "l1", clicks: 6, visitors: 3 }, { linkId: "l3", clicks: 2, visitors: 2 },
  ]);
  const sums = await store.sumLinkTotals("a", ["l1", "l2", "l3", "m1"], [{ grain: "day", from: D, to: D + 2 * DAY }], [false, true]);
  expect(sums.map((s) => [s.linkId, s.clicks]).sort()).toEqual([["l1", 9], ["l2", 7], ["l3", 2]]);
  // The unsettled hour: each account's own cells.
  const recent = await collect(store.readCells({ accountId: "a" }, D + 2 * DAY, D + 3 * DAY));
  expect(recent.map((c) => [c.linkId, c.hour, c.clicks])).toEqual([["l2", D + 2 * DAY + 3 * HOUR, 4]]);

  // After the upgrade: a late click and a deletion.
  await store.recordClicks([click("l3", { ts: D + 6 * HOUR, dims: { via: "link" } })]);
  expect((await store.readRankedLinks("a", "day", D, false, 0, 10)).map((r) => [r.linkId, r.clicks])).toEqual([["l2", 7], ["l1", 6], ["l3", 1]]);
  await store.deleteLink("l2");
  expect(await totals("a")).toEqual([[D, false, 7, 3], [D, true, 3, 0], [D + DAY, false, 2, 2]].sort());
}

describe("account totals after upgrading a database with settled days", () => {
  const dir = mkdtempSync(join(tmpdir(), "clink-account-totals-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("SQLite: from version 25", async () => {
    const file = join(dir, "v25.sqlite");
    const db = new Database(file);
    applySqliteMigrations(db, SQLITE_MIGRATIONS.filter((m) => m.version <= 25));
    db.close();
    const store = new SqliteStore(file);
    try {
      await seedLinks(store);
      const raw = new Database(file);
      const cell = raw.prepare("INSERT INTO click_cells (link_id, hour, dims, bot, clicks, visitors) VALUES (?, ?, ?, ?, ?, ?)");
      for (const c of CELLS) cell.run(c.linkId, c.hour, c.dims, c.bot ? 1 : 0, c.clicks, c.visitors);
      const row = raw.prepare("INSERT INTO click_settled (link_id, dimension, bucket, value, bot, clicks, visitors) VALUES (?, ?, ?, ?, ?, ?, ?)");
      for (const r of SETTLED) row.run(r.linkId, r.dimension, r.bucket, r.value, r.bot ? 1 : 0, r.clicks, r.visitors);
      raw.run(`UPDATE click_settle_state SET settled_before = ${D + 2 * DAY}`);
      raw.close();
      await store.migrate();
      await checkUpgraded(store);
    } finally {
      await store.close();
    }
  });

  test("Postgres: from version 27", async () => {
    const url = process.env.DATABASE_URL_TEST ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
    const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
    const sql = postgres(url, { max: 1, onnotice: () => {}, connection: { search_path: schema } });
    const store = new PostgresStore(url, { schema });
    try {
      await applyPostgresMigrations(sql, schema, POSTGRES_MIGRATIONS.filter((m) => m.version < 28));
      await seedLinks(store);
      for (const c of CELLS) {
        await sql`INSERT INTO click_cells (link_id, hour, dims, bot, clicks, visitors) VALUES (${c.linkId}, ${c.hour}, ${c.dims}, ${c.bot}, ${c.clicks}, ${c.visitors})`;
      }
      for (const r of SETTLED) {
        await sql`INSERT INTO click_settled (link_id, dimension, bucket, value, bot, clicks, visitors) VALUES (${r.linkId}, ${r.dimension}, ${r.bucket}, ${r.value}, ${r.bot}, ${r.clicks}, ${r.visitors})`;
      }
      await sql`UPDATE click_settle_state SET settled_before = ${D + 2 * DAY}`;
      await store.migrate();
      await checkUpgraded(store);
    } finally {
      await store.close();
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await sql.end();
    }
  });
});

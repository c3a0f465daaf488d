/**
 * Postgres migration 25 (cell sets, shared/adapters/postgres/cell-sets.ts): cells stored before it stay in
 * click_cells and keep counting. A cell of the old table and the same cell's later clicks (appended as a set) sum
 * to one cell, settle into the same totals, export as one cell, and go with their link. Real Postgres schema.
 */
import { expect, test } from "bun:test";
import postgres from "postgres";
import { PostgresStore } from "../../shared/adapters/postgres/store.ts";
import { POSTGRES_MIGRATIONS, applyPostgresMigrations } from "../../shared/adapters/postgres/migrations.ts";
import { encodeDims } from "../../shared/clicks/dimensions.ts";
import { newLinkRecord } from "../../shared/link.ts";
import type { ClickCell } from "../../shared/ports.ts";
import { sortCells } from "./clicks.contract.ts";
import { click, collect, HOUR, NO_DIMS, T0 } from "./store-harness.ts";

const DAY = 24 * HOUR;

test("Postgres: cells from before version 25 and clicks recorded after it sum to one cell", async () => {
  const url = process.env.DATABASE_URL_TEST ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
  const sql = postgres(url, { max: 1, onnotice: () => {}, connection: { search_path: schema } });
  let store: PostgresStore | null = null;
  try {
    await applyPostgresMigrations(sql, schema, POSTGRES_MIGRATIONS.filter((m) => m.version < 25));
    const usual = click("l").dims;
    const other = { ...NO_DIMS, country: "DE", device: "mobile" };
    // Cells have no foreign key: the link is created once the store is migrated, through the store.
    await sql`INSERT INTO click_cells (link_id, hour, dims, bot, clicks, visitors) VALUES
      ('l', ${T0}, ${encodeDims(usual)}, false, 2, 1), ('l', ${T0}, ${encodeDims(other)}, false, 5, 0)`;
    store = new PostgresStore(url, { schema });
    await store.migrate();
    await store.createAccount({ id: "a", email: "sets@example.com", passwordHash: "x", createdAt: 0 });
    await store.insertLinks([newLinkRecord({ id: "l", accountId: "a", domain: "d", slug: "s", target: "https://e.com", createdAt: 0 })]);
    await store.recordClicks([click("l", { ts: T0 + 60_000, firstVisit: true }), click("l", { ts: T0 + HOUR, bot: true })]);
    await store.recordClicks([click("l", { ts: T0 + 120_000 })]);

    // readCells may give a key more than once (a row of click_cells and one per set): sortCells sums them.
    const want = sortCells([
      { linkId: "l", hour: T0, dims: usual, bot: false, clicks: 4, visitors: 2 },
      { linkId: "l", hour: T0, dims: other, bot: false, clicks: 5, visitors: 0 },
      { linkId: "l", hour: T0 + HOUR, dims: usual, bot: true, clicks: 1, visitors: 0 },
    ]);
    expect(sortCells(await collect(store.readCells({ linkId: "l" }, 0, Number.MAX_SAFE_INTEGER)))).toEqual(want);
    expect(sortCells(await collect(store.readCells({ accountId: "a" }, T0, T0 + HOUR)))).toEqual(want.filter((c) => c.hour === T0));
    // The export writes each cell once, summed.
    const exported = (await collect(store.exportAll())).filter((r) => r.type === "cell").map((r) => r.data as ClickCell);
    expect(exported).toHaveLength(3);
    expect(sortCells(exported)).toEqual(want);

    await store.settleDays(T0 + 2 * DAY);
    const countries = (await collect(store.readSettled({ linkId: "l" }, "country", 0, Number.MAX_SAFE_INTEGER)))
      .map((r) => [r.value, r.bot, r.clicks, r.visitors]);
    expect(countries.sort()).toEqual([["DE", false, 5, 0], ["US", false, 4, 2], ["US", true, 1, 0]]);

    await store.deleteLink("l");
    const [left] = await sql`SELECT (SELECT count(*) FROM click_cells)::int + (SELECT count(*) FROM click_cell_sets)::int AS n`;
    expect(left!.n).toBe(0);
  } finally {
    await store?.close();
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await sql.end();
  }
});

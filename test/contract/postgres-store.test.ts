/**
 * The Store contract against a real Postgres (DATABASE_URL, default the local test database), in a
 * random schema dropped afterwards so runs never collide. An unreachable Postgres FAILS this suite: the
 * adapter must be tested for real, never silently skipped.
 */
import { afterAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { PostgresStore } from "../../shared/adapters/postgres/store.ts";
import { AppError } from "../../shared/errors.ts";
import { newLinkRecord, type LinkRecord } from "../../shared/link.ts";
import { click, collect } from "./store-harness.ts";
import { runStoreContract } from "./store.contract.ts";

const DAY = 86_400_000;

const url = process.env.DATABASE_URL_TEST ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const redacted = url.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:***@");
const newSchema = () => `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
const schemas: string[] = [];

/** A plain link on domain "d", for the tests below that need one to hang clicks on. */
const linkRecord = (id: string, accountId: string, slug: string): LinkRecord =>
  newLinkRecord({ id, accountId, domain: "d", slug, target: "https://e.com", createdAt: 0 });

/** Runs `check` against a freshly migrated schema, with the store and a plain connection, and closes both. */
async function onMigratedSchema(check: (store: PostgresStore, sql: postgres.Sql, schema: string) => Promise<void>): Promise<void> {
  const schema = newSchema();
  const store = await openOnSchema(schema);
  await store.migrate();
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await check(store, sql, schema);
  } finally {
    await sql.end();
    await store.close();
  }
}

/** A store on a fresh schema; a down database fails loudly here, with the address (never the password). */
async function openOnSchema(schema: string): Promise<PostgresStore> {
  const store = new PostgresStore(url, { schema, max: 4 });
  try {
    await store.ping();
  } catch (err) {
    await store.close().catch(() => {});
    const cause = (err as Error).cause instanceof Error ? ` (${((err as Error).cause as Error).message})` : "";
    throw new Error(`Postgres is unreachable at ${redacted} (set DATABASE_URL): ${(err as Error).message}${cause}`);
  }
  if (!schemas.includes(schema)) schemas.push(schema);
  return store;
}

async function dropSchemas(): Promise<void> {
  if (schemas.length === 0) return;
  const sql = postgres(url, { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    for (const s of schemas.splice(0)) await sql.unsafe(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

const contractSchema = newSchema();
runStoreContract("Postgres", () => openOnSchema(contractSchema), dropSchemas);
// Every schema a test below opened, also those of describe blocks without their own clean-up (they leaked before).
afterAll(dropSchemas);

describe("PostgresStore specifics", () => {
  afterAll(dropSchemas);

  test("processes migrating a brand-new schema at the same time all succeed (advisory lock)", async () => {
    const schema = newSchema();
    const stores = await Promise.all([1, 2, 3].map(() => openOnSchema(schema)));
    try {
      await Promise.all(stores.map((s) => s.migrate()));
      await stores[0]!.ping();
      expect(await stores[1]!.getAccount("nobody")).toBeNull();
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  test("an unreachable database fails fast with AppError unavailable", async () => {
    const down = new PostgresStore("postgres://postgres@127.0.0.1:1/test");
    const started = performance.now();
    try {
      await down.ping();
      throw new Error("ping() resolved against a closed port");
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe("unavailable");
      expect((err as AppError).status).toBe(503);
    } finally {
      await down.close();
    }
    expect(performance.now() - started).toBeLessThan(6000);
  });

  test("a schema name that is not a plain identifier is refused", () => {
    expect(() => new PostgresStore(url, { schema: `x"; DROP TABLE links; --` })).toThrow();
  });
});

describe("Postgres: click tables", () => {
  const link = (id: string, accountId: string) => linkRecord(id, accountId, `s${id}`);

  test("a deleted link's cells and settled totals go with it (a statement trigger, no per-row foreign key), and only its", async () => {
    await onMigratedSchema(async (store, sql, schema) => {
      await store.createAccount({ id: "a", email: "cells@example.com", passwordHash: "x", createdAt: 0 });
      await store.insertLinks([link("keep", "a"), link("gone", "a")]);
      await store.recordClicks([click("keep", { batch: "c1", ts: 1_000 }), click("gone", { batch: "c1", ts: 1_000 }), click("gone", { batch: "c2", ts: DAY })]);
      await store.settleDays(2 * DAY);
      const count = async (table: string) => Object.fromEntries(
        (await sql<{ link_id: string; n: number }[]>`SELECT link_id, count(*)::int AS n FROM ${sql(schema)}.${sql(table)} GROUP BY link_id`).map((r) => [r.link_id, r.n]),
      );
      // Recorded clicks are appended as cell sets (one per link and hour of a transaction: cell-sets.ts).
      expect(await count("click_cell_sets")).toEqual({ keep: 1, gone: 2 });
      expect(Object.keys(await count("click_settled")).sort()).toEqual(["gone", "keep"]);
      await store.deleteLink("gone");
      expect(await count("click_cell_sets")).toEqual({ keep: 1 });
      expect(Object.keys(await count("click_settled"))).toEqual(["keep"]);
      const [fk] = await sql`SELECT count(*)::int AS n FROM pg_constraint
        WHERE conrelid IN (${`${schema}.click_cells`}::regclass, ${`${schema}.click_cell_sets`}::regclass, ${`${schema}.click_settled`}::regclass, ${`${schema}.click_log`}::regclass) AND contype = 'f'`;
      expect(fk.n).toBe(0);
    });
  });

  test("nothing fires per written row: no row trigger on a click table, and none at all on the tables every click write fills", async () => {
    await onMigratedSchema(async (_store, sql, schema) => {
      // tgtype bit 0 set: FOR EACH ROW. The account and link totals (migration 28) follow click_settled per statement,
      // over its transition tables: settling writes it, a click write only for a late click.
      const rows = await sql<{ table: string; tgname: string; row: boolean }[]>`
        SELECT c.relname AS table, tgname, (t.tgtype & 1) = 1 AS row FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ${schema} AND c.relname LIKE 'click%' AND NOT t.tgisinternal ORDER BY 2`;
      expect([...rows]).toEqual([
        { table: "click_settled", tgname: "click_totals_of_settled_insert", row: false },
        { table: "click_settled", tgname: "click_totals_of_settled_update", row: false },
      ]);
    });
  });
});

describe("Postgres: raw click data compression", () => {
  test("the click log's data and the cell sets' cells are compressed with lz4 where the server has it, and read back", async () => {
    await onMigratedSchema(async (store, sql, schema) => {
      const [server] = await sql<{ v: number; lz4: boolean }[]>`
        SELECT current_setting('server_version_num')::int AS v,
               EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)) AS lz4`;
      const [col] = await sql<{ c: string }[]>`
        SELECT attcompression::text AS c FROM pg_attribute WHERE attrelid = ${`${schema}.click_log`}::regclass AND attname = 'data'`;
      // 'l': lz4; '' (the default, pglz) only where the server cannot do lz4.
      expect(col.c).toBe(server.v >= 140000 && server.lz4 ? "l" : "");
      await store.createAccount({ id: "a", email: "lz4@example.com", passwordHash: "x", createdAt: 0 });
      await store.insertLinks([linkRecord("l", "a", "s")]);
      // Enough clicks for a row far above the 2 kB at which Postgres compresses a value.
      const clicks = Array.from({ length: 500 }, (_, i) =>
        click("l", { batch: "b1", ts: 1_000 + i, dims: { country: i % 2 ? "DE" : null }, referrerUrl: i % 3 ? null : "https://ref.example/" }));
      await store.recordClicks(clicks);
      const [row] = await sql<{ method: string | null }[]>`SELECT pg_column_compression(data) AS method FROM ${sql(schema)}.click_log`;
      expect(row.method).toBe(col.c === "l" ? "lz4" : "pglz");
      expect(await collect(store.readClickLog({ linkId: "l" }, 0, Number.MAX_SAFE_INTEGER))).toEqual(clicks);
      // A busy link's cell set: 500 cells of its hour, far above 2 kB too.
      await store.recordClicks(clicks.map((c, i) => ({ ...c, batch: "b2", dims: { ...c.dims, city: `City ${i}` } })));
      const [set] = await sql<{ method: string | null; n: number }[]>`
        SELECT pg_column_compression(cells) AS method, array_length(string_to_array(cells, chr(3)), 1) AS n
        FROM ${sql(schema)}.click_cell_sets ORDER BY length(cells) DESC LIMIT 1`;
      expect(set).toEqual({ method: col.c === "l" ? "lz4" : "pglz", n: 500 });
      expect((await collect(store.readCells({ linkId: "l" }, 0, Number.MAX_SAFE_INTEGER))).reduce((n, c) => n + c.clicks, 0)).toBe(1_000);
    });
  });
});

describe("Postgres: room for in-place count updates", () => {
  test("the tables whose counts every click batch raises leave 30% of each page free (fillfactor 70)", async () => {
    await onMigratedSchema(async (_store, sql, schema) => {
      const rows = await sql<{ relname: string; reloptions: string[] | null }[]>`
        SELECT c.relname, c.reloptions FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ${schema} AND c.relname IN ('links', 'click_cells') ORDER BY c.relname`;
      expect(rows.map((r) => [r.relname, r.reloptions])).toEqual([["click_cells", ["fillfactor=70"]], ["links", ["fillfactor=70"]]]);
    });
  });
});

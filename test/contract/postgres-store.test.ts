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
import { runStoreContract } from "./store.contract.ts";

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

describe("Postgres: stats totals", () => {
  test("rollups written by a session with another search_path still feed the totals stats read", async () => {
    const schema = newSchema();
    const store = await openOnSchema(schema);
    await store.migrate();
    await store.createAccount({ id: "a", email: "totals@example.com", passwordHash: "x", createdAt: 0 });
    await store.insertLinks([linkRecord("l", "a", "s")]);
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await sql`INSERT INTO ${sql(schema)}.click_rollups (link_id, hour, device, browser, country, variant, clicks)
                VALUES ('l', 0, 'desktop', 'Chrome', 'US', -1, 7), ('l', 0, 'mobile', 'Safari', '', 1, 2)`;
      await sql`UPDATE ${sql(schema)}.click_rollups SET clicks = clicks + 1 WHERE device = 'mobile'`;
    } finally {
      await sql.end();
    }
    expect(await store.getStats("l", 0)).toEqual({
      total: 10, byDevice: { desktop: 7, mobile: 3 }, byBrowser: { Chrome: 7, Safari: 3 }, byCountry: { US: 7, unknown: 3 },
      byVariant: { "1": 3 }, hourly: [{ hour: 0, clicks: 10 }],
    });
    await store.close();
  });
});

describe("Postgres: raw clicks of deleted links", () => {
  const link = (id: string, accountId: string) => linkRecord(id, accountId, `s${id}`);
  const click = (batch: string, linkId: string) => ({ batch, linkId, ts: 1_000, country: null, device: "desktop", browser: "Chrome", os: "Linux", referrer: null, variant: null });

  test("go with their link (the trigger that replaced the per-row foreign key), and only theirs", async () => {
    const schema = newSchema();
    const store = await openOnSchema(schema);
    await store.migrate();
    await store.createAccount({ id: "a", email: "raw@example.com", passwordHash: "x", createdAt: 0 });
    await store.insertLinks([link("keep", "a"), link("gone", "a")]);
    await store.recordClicks([click("c1", "keep"), click("c2", "gone"), click("c3", "gone")]);
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const count = async () => Object.fromEntries(
        (await sql<{ link_id: string; n: number }[]>`SELECT link_id, sum(clicks)::int AS n FROM ${sql(schema)}.click_batches GROUP BY link_id`).map((r) => [r.link_id, r.n]),
      );
      expect(await count()).toEqual({ keep: 1, gone: 2 });
      await store.deleteLink("gone");
      expect(await count()).toEqual({ keep: 1 });
      // A click of a link that no longer exists is not stored, so no orphan row appears later either.
      await store.recordClicks([click("c4", "gone"), click("c5", "keep")]);
      expect(await count()).toEqual({ keep: 2 });
      const [fk] = await sql`SELECT count(*)::int AS n FROM pg_constraint WHERE conrelid = ${`${schema}.click_batches`}::regclass AND contype = 'f'`;
      expect(fk.n).toBe(0);
    } finally {
      await sql.end();
      await store.close();
    }
  });
});

describe("Postgres: raw click data compression", () => {
  test("the data column of the click log is compressed with lz4 where the server has it, and rows read back", async () => {
    await onMigratedSchema(async (store, sql, schema) => {
      const [server] = await sql<{ v: number; lz4: boolean }[]>`
        SELECT current_setting('server_version_num')::int AS v,
               EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)) AS lz4`;
      const [col] = await sql<{ c: string }[]>`
        SELECT attcompression::text AS c FROM pg_attribute WHERE attrelid = ${`${schema}.click_batches`}::regclass AND attname = 'data'`;
      // 'l': lz4; '' (the default, pglz) only where the server cannot do lz4.
      expect(col.c).toBe(server.v >= 140000 && server.lz4 ? "l" : "");
      await store.createAccount({ id: "a", email: "lz4@example.com", passwordHash: "x", createdAt: 0 });
      await store.insertLinks([linkRecord("l", "a", "s")]);
      // Enough clicks for a row far above the 2 kB at which Postgres compresses a value.
      const clicks = Array.from({ length: 500 }, (_, i) => ({
        batch: "b1", linkId: "l", ts: 1_000 + i, country: i % 2 ? "DE" : null, device: "desktop", browser: "Chrome", os: "Linux",
        referrer: i % 3 ? null : "https://ref.example/", variant: null,
      }));
      await store.recordClicks(clicks);
      const [row] = await sql<{ method: string | null }[]>`SELECT pg_column_compression(data) AS method FROM ${sql(schema)}.click_batches`;
      expect(row.method).toBe(col.c === "l" ? "lz4" : "pglz");
      const back = [];
      for await (const c of store.rawClicks("l")) back.push(c);
      expect(back).toEqual(clicks);
    });
  });
});

describe("Postgres: room for in-place count updates", () => {
  test("the tables whose counts every click batch raises leave 30% of each page free (fillfactor 70)", async () => {
    await onMigratedSchema(async (_store, sql, schema) => {
      const rows = await sql<{ relname: string; reloptions: string[] | null }[]>`
        SELECT c.relname, c.reloptions FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ${schema} AND c.relname IN ('links', 'click_rollups', 'click_hourly', 'click_totals') ORDER BY c.relname`;
      expect(rows.map((r) => [r.relname, r.reloptions])).toEqual([
        ["click_hourly", ["fillfactor=70"]], ["click_rollups", ["fillfactor=70"]], ["click_totals", ["fillfactor=70"]], ["links", ["fillfactor=70"]],
      ]);
    });
  });
});

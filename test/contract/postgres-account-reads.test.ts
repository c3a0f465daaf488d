/**
 * Postgres account-wide click reads (readCells, readSettled with an account scope) run on a reserved connection
 * with JIT off: a read left early (a consumer's break) must still hand its connection back, or the pool runs dry.
 * A random schema, dropped afterwards.
 */
import { afterAll, expect, test } from "bun:test";
import postgres from "postgres";
import { PostgresStore } from "../../shared/adapters/postgres/store.ts";
import { newLinkRecord } from "../../shared/link.ts";
import { click, collect, HOUR, T0 } from "./store-harness.ts";

const url = process.env.DATABASE_URL_TEST ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
const DAY = 24 * HOUR;

afterAll(async () => {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await sql.end();
});

test("account reads left after their first row give their connection back; full reads answer every row", async () => {
  const store = new PostgresStore(url, { schema, max: 2 });
  try {
    await store.migrate();
    await store.createAccount({ id: "acct", email: "a@example.com", passwordHash: "x", createdAt: 0 });
    const ids = ["l1", "l2", "l3"];
    await store.insertLinks(ids.map((id) => newLinkRecord({ id, accountId: "acct", domain: "d", slug: id, target: "https://e.com", createdAt: 0 })));
    await store.recordClicks(ids.flatMap((id, i) => [click(id, { batch: "b", ts: T0 }), click(id, { batch: "b", ts: T0 + DAY + i * HOUR })]));
    const day = T0 - (T0 % DAY);
    await store.settleDays(day + DAY);
    const scope = { accountId: "acct" };
    // Four times the pool's size: a reserved connection not released would leave the later reads waiting for ever.
    for (let i = 0; i < 8; i++) {
      for await (const _ of store.readCells(scope, 0, day + 2 * DAY)) break;
      for await (const _ of store.readSettled(scope, "country", day, day + DAY)) break;
    }
    expect((await collect(store.readCells(scope, day + DAY, day + 2 * DAY))).map((c) => c.linkId).sort()).toEqual(ids);
    expect((await collect(store.readSettled(scope, "country", day, day + DAY))).map((s) => [s.linkId, s.value, s.clicks]).sort()).toEqual(
      ids.map((id) => [id, "US", 1]),
    );
  } finally {
    await store.close();
  }
});

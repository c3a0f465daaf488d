/**
 * Case 5: bulk create of 500 links through the API, against the floor for writing 500 links: one multi-row
 * INSERT of 500 rows through the same driver into the same schema (bun:sqlite for the embedded default,
 * postgres.js in scale mode). The API side is timed by the client (HTTP, JSON, validation of every row, the
 * insert, cache publication, the answer); the INSERT is timed around the statement alone. They alternate,
 * after two warm-up rounds each, and the figure is the ratio of the medians (target: at most 3×).
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import type postgres from "postgres";
import { LINK_COLUMN_LIST, LINK_COLUMNS, sqliteInsertValues } from "../../shared/adapters/link-columns.ts";
import { applySqliteMigrations } from "../../shared/adapters/sqlite/migrations.ts";
import { newLinkRecord, type LinkRecord } from "../../shared/link.ts";
import { newId, randomSlug } from "../../shared/ids.ts";
import { apiCall, startEmbedded, type Clink } from "../lib/app.ts";
import { settle } from "../lib/compare.ts";
import type { Ctx } from "../lib/context.ts";
import { judge, type Figure } from "../lib/figures.ts";
import { median, percentile } from "../lib/stats.ts";

export const BULK_ROWS = 500;
const WARMUP = 2;

const target = (batch: number, i: number) => `https://example.com/bulk/${batch}/${i}?ref=bench`;

/** What one API row asks for, and the row the INSERT writes for the same link. */
function apiRows(batch: number) {
  return Array.from({ length: BULK_ROWS }, (_, i) => ({ url: target(batch, i) }));
}

/** The record of one link as the INSERT writes it: every column at a new link's value (shared/link-fields.ts). */
function linkRecord(accountId: string, domain: string, batch: number, i: number): LinkRecord {
  return newLinkRecord({ id: newId(), accountId, domain, slug: randomSlug(), target: target(batch, i), createdAt: Date.now() });
}

/** Times one POST /api/v1/bulk of 500 new links, checking that all 500 were created. */
async function timeApiBulk(app: Clink, batch: number): Promise<number> {
  const rows = apiRows(batch);
  const t0 = performance.now();
  const r = await apiCall(app, "POST", "/api/v1/bulk", rows);
  const ms = performance.now() - t0;
  if (r.status !== 200 || r.body?.created !== BULK_ROWS) throw new Error(`bulk answered ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
  return ms;
}

/** A fresh SQLite file with clink's schema and the store's pragmas; returns a timed 500-row INSERT. */
export function sqliteReference(dir: string): { insert: (batch: number) => number; close: () => void } {
  const db = new Database(join(dir, "reference.sqlite"), { create: true });
  // The same pragmas as SqliteStore (its connection), so durability costs the same.
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA synchronous = NORMAL");
  db.run("PRAGMA foreign_keys = ON");
  applySqliteMigrations(db);
  const accountId = newId();
  db.run("INSERT INTO accounts (id, email, password_hash, created_at) VALUES (?, ?, ?, ?)", [accountId, "ref@example.com", "x", Date.now()]);
  // Links belong to a workspace (ADR 0011): the account's personal one, as createAccount makes it.
  db.run("INSERT INTO workspaces (id, name, personal_of, created_at) VALUES (?, 'Personal', ?, ?)", [accountId, accountId, Date.now()]);
  const row = `(${LINK_COLUMNS.map(() => "?").join(", ")})`;
  const stmt = db.prepare(`INSERT INTO links (${LINK_COLUMN_LIST}) VALUES ${Array(BULK_ROWS).fill(row).join(", ")}`);
  return {
    insert(batch) {
      const values = Array.from({ length: BULK_ROWS }, (_, i) => linkRecord(accountId, "bench.example", batch, i)).flatMap(sqliteInsertValues);
      const t0 = performance.now();
      stmt.run(...values);
      return performance.now() - t0;
    },
    close() {
      stmt.finalize();
      db.close();
    },
  };
}

/** The same INSERT through postgres.js (the `postgres` package scale mode uses), in a schema of its own. */
export async function postgresReference(sql: postgres.Sql): Promise<{ insert: (batch: number) => Promise<number> }> {
  const accountId = newId();
  await sql`INSERT INTO accounts (id, email, password_hash, created_at) VALUES (${accountId}, ${"ref@example.com"}, ${"x"}, ${Date.now()})`;
  await sql`INSERT INTO workspaces (id, name, personal_of, created_at) VALUES (${accountId}, 'Personal', ${accountId}, ${Date.now()})`;
  return {
    async insert(batch) {
      const rows = Array.from({ length: BULK_ROWS }, (_, i) => linkRecord(accountId, "bench.example", batch, i)).map((l) =>
        Object.fromEntries(LINK_COLUMNS.map((c) => [c.name, l[c.field]])),
      );
      const t0 = performance.now();
      await sql`INSERT INTO links ${sql(rows as any, ...LINK_COLUMNS.map((c) => c.name))}`;
      return performance.now() - t0;
    },
  };
}

/** Alternates reference INSERT and API bulk, warm-up first; returns the figure. */
export async function compareBulk(
  ctx: Ctx,
  app: Clink,
  insert: (batch: number) => number | Promise<number>,
  meta: { id: string; title: string; driver: string },
): Promise<Figure> {
  let batch = 0;
  for (let i = 0; i < WARMUP; i++) {
    await insert(batch++);
    await timeApiBulk(app, batch++);
  }
  const api: number[] = [];
  const ref: number[] = [];
  const rounds: { insertMs: number; apiMs: number }[] = [];
  for (let r = 0; r < ctx.opts.rounds; r++) {
    await settle(ctx, app.processes.map((p) => p.pid));
    for (let i = 0; i < ctx.opts.bulkReps; i++) {
      const insertMs = await insert(batch++);
      const apiMs = await timeApiBulk(app, batch++);
      ref.push(insertMs);
      api.push(apiMs);
      rounds.push({ insertMs, apiMs });
    }
  }
  const ratio = median(api) / median(ref);
  const t = { op: "<=" as const, value: 3 };
  ctx.log(`  API bulk ${median(api).toFixed(1)} ms, one INSERT ${median(ref).toFixed(1)} ms → ${ratio.toFixed(2)}×`);
  return {
    id: meta.id,
    caseNo: 5,
    title: meta.title,
    verdict: judge(ratio, t),
    generator: `fetch, one request at a time (${api.length} timed calls each side)`,
    subject: { label: "POST /api/v1/bulk, 500 links", ms: median(api), p99Ms: percentile(api, 99) },
    reference: { label: `one 500-row INSERT (${meta.driver})`, ms: median(ref), p99Ms: percentile(ref, 99) },
    ratio,
    ratioUnit: "× one INSERT",
    target: t,
    notes: [
      "API time is client-side wall time: HTTP, JSON parse, validation of 500 rows, the store's multi-row insert, cache publication per link, the 500-row answer.",
      "INSERT time is the statement alone (prepared once, values bound, committed), into a separate database with the same schema and pragmas.",
    ],
    rounds,
  };
}

export async function bulkCreate(ctx: Ctx): Promise<Figure[]> {
  const app = await startEmbedded(ctx, "embedded-bulk");
  const ref = sqliteReference(app.dataDir!);
  try {
    return [await compareBulk(ctx, app, (b) => ref.insert(b), { id: "bulk-embedded", title: "Embedded: bulk create of 500 links vs one 500-row INSERT", driver: "bun:sqlite" })];
  } finally {
    ref.close();
    await app.stop();
  }
}

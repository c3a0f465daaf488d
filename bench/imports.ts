/**
 * `npm run bench:imports`: issue #25's import target. A Bitly CSV export of 100,000 links (slug, destination, title,
 * two tags, creation date, clicks) imported as POST /api/v1/imports does it (control/imports: decode, parse, pass 1,
 * pass 2 through the link service's bulk create, the history write), timed from the file's bytes to the job done;
 * against the raw reference: the same 100,000 link records written with the store's own multi-row insert
 * (insertLinks, 500 a call) into a fresh store. The figure is the ratio of the two times; the target is the import
 * under a minute.
 *
 *   npm run bench:imports                       100,000 rows, SQLite (the embedded default)
 *   npm run bench:imports -- --rows 20000 --store postgres
 *
 * SQLite: a temporary directory, removed at the end. Postgres: DATABASE_URL (default the local test database) in
 * its own schema, dropped at the end.
 */
import { SCOPES } from "../shared/enums.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import type { Deps } from "../control/deps.ts";
import { startImport } from "../control/imports/service.ts";
import { MemoryHotState } from "../shared/adapters/memory/hot-state.ts";
import { PostgresStore } from "../shared/adapters/postgres/store.ts";
import { SqliteStore } from "../shared/adapters/sqlite/store.ts";
import { loadConfig } from "../shared/config.ts";
import { newLinkRecord } from "../shared/link.ts";
import type { Store } from "../shared/ports.ts";

const { values } = parseArgs({ options: { rows: { type: "string" }, store: { type: "string" } } });
const ROWS = Number(values.rows ?? 100_000);
const KIND = values.store ?? "sqlite";
const DOMAIN_BASE = "http://bench.test";
const databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const dir = mkdtempSync(join(tmpdir(), "clink-bench-imports-"));
const schemas: string[] = [];

async function openStore(name: string): Promise<Store> {
  if (KIND === "postgres") {
    const schema = `bench_imp_${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`;
    schemas.push(schema);
    const s = new PostgresStore(databaseUrl, { schema, max: 4 });
    await s.migrate();
    return s;
  }
  const s = new SqliteStore(join(dir, `${name}.db`));
  await s.migrate();
  return s;
}

/** A Bitly export of `n` links: quoted titles with commas, unicode, tags, ISO dates, clicks. */
function bitlyCsv(n: number): string {
  const lines = ["id,link,long_url,title,created_at,tags,clicks"];
  for (let i = 0; i < n; i++) {
    const slug = `b${i.toString(36)}x`;
    lines.push(`bit.ly/${slug},https://bit.ly/${slug},https://example.com/page/${i}?utm_source=bitly,"Page ${i}, ünïcode ""title""",2021-03-04T05:06:07+0000,"spring,launch",${i % 1000}`);
  }
  return lines.join("\n") + "\n";
}

async function timeImport(bytes: Uint8Array): Promise<number> {
  const store = await openStore("import");
  const config = loadConfig({ BASE_URL: DOMAIN_BASE, DATA_DIR: dir, LOG_LEVEL: "silent" });
  const deps: Deps = { config, store, hot: new MemoryHotState(), now: Date.now };
  await store.createAccount({ id: "acct", email: "bench@example.com", passwordHash: "x", createdAt: Date.now() });
  const t0 = performance.now();
  const { done, job } = await startImport(deps, { workspaceId: "acct", accountId: "acct", role: "owner", keyId: null, scopes: SCOPES }, bytes, { format: "bitly" });
  await done;
  const ms = performance.now() - t0;
  const ended = await store.getImportJob("acct", job.id);
  if (ended?.status !== "done" || ended.counts.created !== ROWS) throw new Error(`import did not create every row: ${JSON.stringify(ended?.counts)} ${ended?.error?.message ?? ""}`);
  await store.close();
  return ms;
}

async function timeRawInsert(): Promise<number> {
  const store = await openStore("raw");
  await store.createAccount({ id: "acct", email: "bench@example.com", passwordHash: "x", createdAt: Date.now() });
  const now = Date.now();
  const records = Array.from({ length: ROWS }, (_, i) => ({
    ...newLinkRecord({ id: `L${i}`, accountId: "acct", domain: new URL(DOMAIN_BASE).host, slug: `b${i.toString(36)}x`, target: `https://example.com/page/${i}?utm_source=bitly`, createdAt: now }),
    ogTitle: `Page ${i}, ünïcode "title"`, tags: ["spring", "launch"], externalId: `bitly:bit.ly:b${i.toString(36)}x`, hits: i % 1000,
  }));
  const t0 = performance.now();
  for (let at = 0; at < records.length; at += 500) await store.insertLinks(records.slice(at, at + 500));
  const ms = performance.now() - t0;
  await store.close();
  return ms;
}

try {
  const bytes = new TextEncoder().encode(bitlyCsv(ROWS));
  const raw = await timeRawInsert();
  const imported = await timeImport(bytes);
  console.log(
    `imports (${KIND}): ${ROWS.toLocaleString("en")} Bitly rows (${(bytes.byteLength / 1e6).toFixed(1)} MB) imported in ${(imported / 1000).toFixed(2)} s;` +
      ` raw multi-row insert of the same rows ${(raw / 1000).toFixed(2)} s; ratio ${(imported / raw).toFixed(1)}x` +
      ` (target: under 60 s: ${imported < 60_000 ? "met" : "NOT met"})`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
  if (schemas.length) {
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    for (const s of schemas) await sql.unsafe(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    await sql.end();
  }
}

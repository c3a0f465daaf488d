/**
 * `npm run bench:queries`: issue #20's query targets, in both stores (SQLite, the embedded default; Postgres,
 * scale mode), through the stats service as REST, MCP and the dashboard call it (control/stats/service.ts):
 *
 * - a link with 10,000,000 clicks over 90 days against one with 10,000: a daily series plus the country
 *   breakdown (`interval=day&groupBy=country`), at most 2× the time;
 * - an account's top links over 30 days (`groupBy=link`) with 100,000 links against one with 1,000, at most 2×.
 *
 * Cells are seeded straight into the store's click_cells table as the drain would have written them for realistic
 * clicks (bench/lib/click-cells.ts), up to the current hour, then settled with the store's own settleDays as the
 * product settles each day once it is over; today's hours stay cells, as they are for a real query "last 90 days".
 * The two sides are timed alternately, one call at a time; the figure is the ratio of the medians.
 *
 *   npm run bench:queries                          both stores, full sizes (a few minutes: seeding 10M clicks' cells)
 *   npm run bench:queries -- --quick               1,000,000 vs 10,000 clicks, 10,000 vs 1,000 links
 *   options: --store sqlite|postgres, --clicks small,large, --links small,large, --runs N
 *   --keep NAME                                    keep the seeded store (clink-bench-queries-NAME in the temporary
 *                                                  directory, schema clink_bench_queries_NAME) and reuse it in a later
 *                                                  run with the same sizes in the same UTC hour: the queries alone are
 *                                                  timed, so before and after a change can alternate cheaply
 *
 * Postgres: DATABASE_URL and REDIS_URL (defaults: the local test database and Redis), in its own schema and key
 * prefix, removed at the end (kept with --keep). SQLite: a temporary directory, removed at the end (kept with --keep).
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { measureQueries, type QueryFigure, type QuerySizes } from "./lib/queries.ts";

const { values } = parseArgs({
  options: { quick: { type: "boolean" }, store: { type: "string" }, clicks: { type: "string" }, links: { type: "string" }, runs: { type: "string" }, keep: { type: "string" } },
});
const pair = (s: string | undefined, fallback: [number, number]): [number, number] => (s ? (s.split(",").map(Number) as [number, number]) : fallback);
const sizes: QuerySizes = {
  clicks: pair(values.clicks, values.quick ? [10_000, 1_000_000] : [10_000, 10_000_000]),
  links: pair(values.links, values.quick ? [1_000, 10_000] : [1_000, 100_000]),
  runs: Number(values.runs ?? 7),
};
const databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

const print = (f: QueryFigure) =>
  console.log(
    `${f.store.padEnd(8)} ${f.title}: ${f.small.ms.toFixed(2)} ms (${f.small.label}) vs ${f.large.ms.toFixed(2)} ms (${f.large.label}) → ${f.ratio.toFixed(2)}× ` +
      `(target ≤ 2×: ${f.ratio <= 2 ? "met" : "MISSED"}; ${f.small.runs} timed calls each)` +
      f.notes.map((n) => `\n         ${n}`).join(""),
  );

for (const store of ["sqlite", "postgres"] as const) {
  if (values.store && values.store !== store) continue;
  const keep = values.keep;
  if (keep !== undefined && !/^[a-z0-9_]+$/.test(keep)) throw new Error(`--keep: a name of a-z, 0-9 and _, not ${JSON.stringify(keep)}`);
  const dir = keep ? join(tmpdir(), `clink-bench-queries-${keep}`) : mkdtempSync(join(tmpdir(), "clink-bench-queries-"));
  if (store === "sqlite") mkdirSync(dir, { recursive: true });
  const tag = keep ?? `${process.pid}`;
  const env: Record<string, string> =
    store === "sqlite"
      ? { DATA_DIR: dir }
      : { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, DATABASE_SCHEMA: `clink_bench_queries_${tag}`, REDIS_PREFIX: `clinkbench-queries-${tag}` };
  try {
    const result = await measureQueries({ LOG_LEVEL: "error", ...env }, sizes, (s) => console.log(`[${store}] ${s}`), { keep: keep !== undefined });
    for (const f of result) print(f);
  } finally {
    if (keep === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

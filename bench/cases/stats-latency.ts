/**
 * Case 6: analytics queries stay flat as data grows (issue #20), in the embedded default's SQLite store and, when
 * DATABASE_URL and REDIS_URL are set, in scale mode's Postgres: a link's 90 days by day with the country
 * breakdown, busy link against quiet one, and an account's top links over 30 days, many links against few, each
 * at most 2× (bench/lib/queries.ts; sizes per profile: the full run uses the issue's, 10,000,000 vs 10,000
 * clicks and 100,000 vs 1,000 links). Calls go through the stats service in this process, as the API's do.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Ctx } from "../lib/context.ts";
import { judge, type Figure, type Target } from "../lib/figures.ts";
import { measureQueries, type QueryFigure } from "../lib/queries.ts";

const TARGET: Target = { op: "<=", value: 2 };
const TITLES = { "query-link": "Queries: a link's 90 days by day + countries", "query-account": "Queries: an account's top links over 30 days" } as const;
const STORES = { sqlite: "Embedded (SQLite)", postgres: "Redis mode (Postgres)" } as const;

function toFigure(q: QueryFigure): Figure {
  return {
    id: `${q.id}-${q.store}`,
    caseNo: 6,
    title: `${STORES[q.store]}: ${TITLES[q.id]}, ${q.id === "query-link" ? "busy vs quiet link" : "large vs small account"}`,
    verdict: judge(q.ratio, TARGET),
    generator: `stats service in process, one call at a time (${q.large.runs} timed calls per side, alternating)`,
    subject: { label: q.large.label, ms: q.large.ms },
    reference: { label: q.small.label, ms: q.small.ms },
    ratio: q.ratio,
    ratioUnit: "× the small side's time",
    target: TARGET,
    notes: [`${q.title}.`, ...q.notes],
  };
}

export async function statsLatency(ctx: Ctx): Promise<Figure[]> {
  const sizes = { clicks: ctx.opts.statsClicks, links: ctx.opts.statsLinks, runs: ctx.opts.statsRequests };
  const dataDir = join(ctx.opts.workDir, "queries-sqlite");
  mkdirSync(dataDir, { recursive: true });
  const log = (s: string) => ctx.log(`  ${s}`);
  const figures = (await measureQueries({ DATA_DIR: dataDir, LOG_LEVEL: "error" }, sizes, log)).map(toFigure);
  if ("skipped" in ctx.scale) {
    for (const id of ["query-link", "query-account"] as const) {
      figures.push({ id: `${id}-postgres`, caseNo: 6, title: `${STORES.postgres}: ${TITLES[id]}`, verdict: "skipped", generator: "-", target: TARGET, notes: [], reason: ctx.scale.skipped });
    }
    return figures;
  }
  const env = {
    DATABASE_URL: ctx.scale.databaseUrl,
    REDIS_URL: ctx.scale.redisUrl,
    DATABASE_SCHEMA: `clink_bench_queries_${process.pid}`,
    REDIS_PREFIX: `clinkbench-queries-${process.pid}`,
    LOG_LEVEL: "error",
  };
  return [...figures, ...(await measureQueries(env, sizes, log)).map(toFigure)];
}

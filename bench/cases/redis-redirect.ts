/**
 * Case 2: scale mode (Postgres + Redis, when DATABASE_URL and REDIS_URL are set): control and a separate
 * redirector process, a plain link, every click queued in the Redis stream and written to Postgres by
 * control's consumer. The bench works in its own Postgres schemas (clink_bench, clink_bench_ref: dropped
 * before and after) and its own Redis key prefix (clinkbench-<pid>: deleted after), so it touches nothing
 * else in those services. Scale mode's bulk create (case 5 against a postgres.js INSERT) and stats latency
 * (case 6, rollups seeded into Postgres) run here too, while the processes are up.
 */
import { Redis } from "ioredis";
import postgres from "postgres";
import { applyPostgresMigrations } from "../../shared/adapters/postgres/migrations.ts";
import { createLink, probe, startScale, type Clink } from "../lib/app.ts";
import { interleave, throughputFigure } from "../lib/compare.ts";
import type { Ctx, ScaleServices } from "../lib/context.ts";
import type { Figure } from "../lib/figures.ts";
import { compareBulk, postgresReference } from "./bulk-create.ts";
import { redisRedirectorRss } from "./peak-rss.ts";
import { compareStats, type RollupSeeder } from "./stats-latency.ts";
import { baselineContender, clickCheck, clinkContender } from "./shared.ts";
import { servicePids } from "../lib/services.ts";

const SCHEMA = "clink_bench";
const REF_SCHEMA = "clink_bench_ref";

function skipped(reason: string): Figure[] {
  return [
    { id: "redirect-redis", caseNo: 2, title: "Redis mode: plain link, click recorded", verdict: "skipped", generator: "-", target: { op: ">=", value: 0.7 }, notes: [], reason },
    { id: "bulk-postgres", caseNo: 5, title: "Redis mode: bulk create of 500 links vs one 500-row INSERT", verdict: "skipped", generator: "-", target: { op: "<=", value: 3 }, notes: [], reason },
    { id: "stats-postgres", caseNo: 6, title: "Redis mode: stats latency", verdict: "skipped", generator: "-", target: { op: "<=", value: 2 }, notes: [], reason },
    { id: "rss-redis", caseNo: 7, title: "Redis mode: redirector RSS over a full-speed run", verdict: "skipped", generator: "-", target: { op: "<=", value: 1.1 }, notes: [], reason },
  ];
}

async function deleteKeys(redis: Redis, prefix: string) {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    if (keys.length) await redis.del(...keys);
    cursor = next;
  } while (cursor !== "0");
}

export async function redisRedirect(ctx: Ctx): Promise<Figure[]> {
  if ("skipped" in ctx.scale) return skipped(ctx.scale.skipped);
  const services: ScaleServices = ctx.scale;
  const sql = postgres(services.databaseUrl, { max: 2, onnotice: () => {} });
  const redis = new Redis(services.redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  const prefix = `clinkbench-${process.pid}`;
  let app: Clink | null = null;
  let refSql: postgres.Sql | null = null;
  try {
    try {
      await redis.connect();
      ctx.versions.redis = /redis_version:(\S+)/.exec(await redis.info("server"))?.[1] ?? "unknown";
      ctx.versions.postgres = (await sql`SHOW server_version`)[0].server_version;
    } catch (e) {
      return skipped(`Postgres or Redis unreachable: ${(e as Error).message}`);
    }
    await sql.unsafe(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE; DROP SCHEMA IF EXISTS ${REF_SCHEMA} CASCADE`);
    app = await startScale(ctx, "scale", services, { schema: SCHEMA, redisPrefix: prefix });

    const slug = "bench-plain";
    await createLink(app, { url: "https://example.com/landing", slug });
    const p = await probe(`${app.redirect.url}/${slug}`);
    if (p.status !== 302 || p.location !== "https://example.com/landing") throw new Error(`probe: ${p.status} ${p.location}`);
    const c = ctx.opts.connections;
    const variants = [{ path: `/${slug}` }];
    const subject = { ...clinkContender(ctx, app, "redis-mode redirect", variants, "3xx", c), services: servicePids(redis, sql) };
    const cmp = await interleave(ctx, ctx.redirectGenerator, baselineContender(ctx, c, variants), subject);
    const clicks = await clickCheck(app, [slug], cmp, 1, c);
    const redirect = throughputFigure(
      {
        id: "redirect-redis",
        caseNo: 2,
        title: "Redis mode: plain link, click recorded",
        target: { op: ">=", value: 0.7 },
        notes: [
          "Subject: the redirector process (in-process LRU, clicks batched into the Redis stream); control's consumer writes them to Postgres. CPU figures count both clink processes, not Redis or Postgres.",
          ...clicks.notes,
        ],
      },
      cmp,
      { subject: "clink redirector (Redis mode)", reference: "bare Bun.serve 302" },
      c,
      false,
    );
    if (!clicks.ok) redirect.verdict = "fail";
    ctx.log(" rss-redis");
    const rss = await redisRedirectorRss(ctx, app, slug);

    ctx.log(" bulk-postgres");
    refSql = postgres(services.databaseUrl, { max: 1, onnotice: () => {}, connection: { search_path: REF_SCHEMA } });
    await applyPostgresMigrations(refSql, REF_SCHEMA);
    const ref = await postgresReference(refSql);
    const bulk = await compareBulk(ctx, app, (b) => ref.insert(b), { id: "bulk-postgres", title: "Redis mode: bulk create of 500 links vs one 500-row INSERT", driver: "postgres.js" });
    ctx.log(" stats-postgres");
    // The rollup trigger would upsert the totals once per seeded row (minutes for a million clicks); seeding runs
    // without it and then writes the totals it would have written, from the rows of this (new) link.
    const seed: RollupSeeder = async (slug, rows) => {
      const [link] = await sql<{ id: string }[]>`SELECT id FROM ${sql(SCHEMA)}.links WHERE slug = ${slug}`;
      await sql.begin(async (tx) => {
        await tx`ALTER TABLE ${sql(SCHEMA)}.click_rollups DISABLE TRIGGER click_rollups_totals`;
        for (let i = 0; i < rows.length; i += 20_000) {
          const chunk = rows.slice(i, i + 20_000);
          await tx`INSERT INTO ${sql(SCHEMA)}.click_rollups (link_id, hour, device, browser, country, variant, clicks)
            SELECT ${link.id}, * FROM unnest(${chunk.map((r) => r.hour)}::bigint[], ${chunk.map((r) => r.device)}::text[],
              ${chunk.map((r) => r.browser)}::text[], ${chunk.map((r) => r.country)}::text[], ${chunk.map(() => -1)}::integer[],
              ${chunk.map((r) => r.clicks)}::bigint[])`;
        }
        await tx`ALTER TABLE ${sql(SCHEMA)}.click_rollups ENABLE TRIGGER click_rollups_totals`;
        await tx`INSERT INTO ${sql(SCHEMA)}.click_hourly (link_id, hour, clicks)
          SELECT link_id, hour, sum(clicks) FROM ${sql(SCHEMA)}.click_rollups WHERE link_id = ${link.id} GROUP BY link_id, hour`;
        await tx`INSERT INTO ${sql(SCHEMA)}.click_totals (link_id, dimension, value, clicks)
          SELECT link_id, 'device', device, sum(clicks) FROM ${sql(SCHEMA)}.click_rollups WHERE link_id = ${link.id} GROUP BY link_id, device
          UNION ALL SELECT link_id, 'browser', browser, sum(clicks) FROM ${sql(SCHEMA)}.click_rollups WHERE link_id = ${link.id} GROUP BY link_id, browser
          UNION ALL SELECT link_id, 'country', country, sum(clicks) FROM ${sql(SCHEMA)}.click_rollups WHERE link_id = ${link.id} GROUP BY link_id, country
          UNION ALL SELECT link_id, 'variant', variant::text, sum(clicks) FROM ${sql(SCHEMA)}.click_rollups WHERE link_id = ${link.id} GROUP BY link_id, variant`;
      });
      await sql`ANALYZE ${sql(SCHEMA)}.click_rollups`;
    };
    const stats = await compareStats(ctx, app, seed, { id: "stats-postgres", title: "Redis mode: stats latency" });
    return [redirect, rss, bulk, stats];
  } finally {
    await app?.stop();
    await refSql?.end();
    await sql.unsafe(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE; DROP SCHEMA IF EXISTS ${REF_SCHEMA} CASCADE`).catch(() => {});
    await deleteKeys(redis, prefix).catch(() => {});
    redis.disconnect();
    await sql.end();
  }
}

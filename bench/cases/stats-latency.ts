/**
 * Case 6: GET /api/v1/links/{slug}/stats for a link with 10,000 clicks and one with 1,000,000 (target: at most
 * 2× the time). The rollups (one row per link × hour × device × browser × country × variant) are seeded
 * directly, as the click consumer would have written them for clicks spread over the last 30 days with a
 * realistic mix: device and browser shares like a typical site's, 60 countries with a Zipf-like tail. A busier
 * link therefore has more rollup rows; the per-link totals that stats read are what the database's triggers keep
 * in step (the Postgres seeder writes them in one statement instead, see redis-redirect.ts; every timed answer is
 * checked against the seeded click count), so the figure shows whether stats time follows the clicks. The two links are timed alternately, one request
 * at a time.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { apiCall, createLink, startEmbedded, type Clink } from "../lib/app.ts";
import type { Ctx } from "../lib/context.ts";
import { judge, type Figure } from "../lib/figures.ts";
import { median, percentile, rng, weightedPicker } from "../lib/stats.ts";

const HOUR = 3_600_000;
const DAYS = 30;
const DEVICES = ["desktop", "mobile", "tablet", "other"];
const DEVICE_WEIGHTS = [55, 38, 5, 2];
const BROWSERS = ["Chrome", "Safari", "Edge", "Firefox", "Samsung Internet", "Opera", "Chrome WebView", "Other"];
const BROWSER_WEIGHTS = [60, 22, 6, 5, 3, 2, 1, 1];
const COUNTRIES = (
  "US DE GB FR IN BR JP CA IT ES NL AU MX PL SE CH BE AT TR KR ID RU AR CO NO DK FI IE PT CZ RO HU GR IL ZA NG EG SA AE " +
  "SG MY TH VN PH PK BD NZ CL PE UA KE MA TW HK SK BG HR RS"
).split(" ");
const COUNTRY_WEIGHTS = COUNTRIES.map((_, i) => 1 / Math.pow(i + 1, 1.1));

export interface RollupRow {
  hour: number;
  device: string;
  browser: string;
  country: string;
  clicks: number;
}

const simulated = new Map<string, RollupRow[]>();

/** The rollup rows `clicks` clicks spread over the last 30 days would produce (deterministic; computed once per run). */
export function simulateRollups(clicks: number, now: number, seed: number): RollupRow[] {
  const key = `${clicks}:${now - (now % HOUR)}:${seed}`;
  let rows = simulated.get(key);
  if (!rows) simulated.set(key, (rows = simulate(clicks, now, seed)));
  return rows;
}

function simulate(clicks: number, now: number, seed: number): RollupRow[] {
  const random = rng(seed);
  const device = weightedPicker(DEVICE_WEIGHTS);
  const browser = weightedPicker(BROWSER_WEIGHTS);
  const country = weightedPicker(COUNTRY_WEIGHTS);
  const lastHour = now - (now % HOUR);
  const hours = DAYS * 24;
  const cells = new Map<string, RollupRow>();
  for (let i = 0; i < clicks; i++) {
    const hour = lastHour - Math.floor(random() * hours) * HOUR;
    const d = DEVICES[device(random())];
    const b = BROWSERS[browser(random())];
    const c = COUNTRIES[country(random())];
    const key = `${hour}|${d}|${b}|${c}`;
    const cell = cells.get(key);
    if (cell) cell.clicks++;
    else cells.set(key, { hour, device: d, browser: b, country: c, clicks: 1 });
  }
  return [...cells.values()];
}

/** Writes rollups for a link straight into the embedded server's SQLite file (WAL: the server keeps running). */
function seedSqlite(dataDir: string, slug: string, rows: RollupRow[]) {
  const db = new Database(join(dataDir, "clink.sqlite"));
  db.run("PRAGMA busy_timeout = 5000");
  try {
    const link = db.query<{ id: string }, [string]>("SELECT id FROM links WHERE slug = ?").get(slug);
    if (!link) throw new Error(`link ${slug} not found in the database`);
    const insert = db.prepare("INSERT INTO click_rollups (link_id, hour, device, browser, country, variant, clicks) VALUES (?, ?, ?, ?, ?, -1, ?)");
    db.transaction(() => {
      for (const r of rows) insert.run(link.id, r.hour, r.device, r.browser, r.country, r.clicks);
    }).immediate();
    insert.finalize();
  } finally {
    db.close();
  }
}

async function timeStats(app: Clink, slug: string, expected: number): Promise<number> {
  const t0 = performance.now();
  const r = await apiCall(app, "GET", `/api/v1/links/${slug}/stats`);
  const ms = performance.now() - t0;
  if (r.status !== 200 || r.body.totalClicks !== expected) throw new Error(`stats of ${slug}: ${r.status} totalClicks ${r.body?.totalClicks}, expected ${expected}`);
  return ms;
}

/** Writes a link's rollup rows, wherever that link's store lives. */
export type RollupSeeder = (slug: string, rows: RollupRow[]) => Promise<void>;

/**
 * Creates the two links, seeds their rollups, then times their stats alternately: each side gets at most
 * statsRequests calls or statsBudgetS seconds per round (at least 5 calls), so a slow side is measured fewer
 * times rather than stretching the run.
 */
export async function compareStats(ctx: Ctx, app: Clink, seed: RollupSeeder, meta: { id: string; title: string }): Promise<Figure> {
  const [smallClicks, largeClicks] = ctx.opts.statsClicks;
  const now = Date.now();
  const sides = [
    { slug: `${meta.id}-small`, clicks: smallClicks, rows: 0 },
    { slug: `${meta.id}-large`, clicks: largeClicks, rows: 0 },
  ];
  for (const [i, s] of sides.entries()) {
    await createLink(app, { url: "https://example.com/stats", slug: s.slug });
    const rows = simulateRollups(s.clicks, now, 42 + i);
    await seed(s.slug, rows);
    s.rows = rows.length;
    ctx.log(`  seeded ${s.clicks.toLocaleString("en")} clicks as ${rows.length.toLocaleString("en")} rollup rows`);
  }
  const timeSide = async (slug: string, clicks: number, into: number[] | null, maxCalls: number, budgetS: number) => {
    const until = performance.now() + budgetS * 1000;
    for (let k = 0; k < maxCalls && (k < 5 || performance.now() < until); k++) {
      const ms = await timeStats(app, slug, clicks);
      into?.push(ms);
    }
  };
  for (const s of sides) await timeSide(s.slug, s.clicks, null, 20, ctx.opts.statsBudgetS / 2);
  const times = sides.map(() => [] as number[]);
  for (let r = 0; r < ctx.opts.rounds; r++) {
    for (const [i, s] of sides.entries()) await timeSide(s.slug, s.clicks, times[i], ctx.opts.statsRequests, ctx.opts.statsBudgetS);
  }
  const [small, large] = times;
  const ratio = median(large) / median(small);
  const t = { op: "<=" as const, value: 2 };
  ctx.log(`  stats ${median(small).toFixed(2)} ms at ${smallClicks} clicks, ${median(large).toFixed(2)} ms at ${largeClicks} → ${ratio.toFixed(2)}×`);
  const fmt = (n: number) => n.toLocaleString("en");
  return {
    id: meta.id,
    caseNo: 6,
    title: `${meta.title} at ${fmt(largeClicks)} vs ${fmt(smallClicks)} clicks`,
    verdict: judge(ratio, t),
    generator: `fetch, one request at a time (${large.length} and ${small.length} timed calls)`,
    subject: { label: `${fmt(largeClicks)} clicks (${fmt(sides[1].rows)} rollup rows)`, ms: median(large), p99Ms: percentile(large, 99) },
    reference: { label: `${fmt(smallClicks)} clicks (${fmt(sides[0].rows)} rollup rows)`, ms: median(small), p99Ms: percentile(small, 99) },
    ratio,
    ratioUnit: `× the ${fmt(smallClicks)}-click time`,
    target: t,
    notes: [
      `Rollups seeded directly: clicks spread over the last ${DAYS} days, 4 device kinds, 8 browsers, ${COUNTRIES.length} countries (Zipf-like), as the consumer would have written them.`,
      "Time per call is client-side wall time of GET /api/v1/links/{slug}/stats (auth, rate limit, link lookup, both rollup queries, JSON).",
    ],
    rounds: [{ smallMs: small, largeMs: large, rows: sides.map((x) => x.rows) }],
  };
}

export async function statsLatency(ctx: Ctx): Promise<Figure[]> {
  const app = await startEmbedded(ctx, "embedded-stats");
  try {
    const seed: RollupSeeder = async (slug, rows) => seedSqlite(app.dataDir!, slug, rows);
    return [await compareStats(ctx, app, seed, { id: "stats-embedded", title: "Embedded: stats latency" })];
  } finally {
    await app.stop();
  }
}

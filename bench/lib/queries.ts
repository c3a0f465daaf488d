/**
 * The query figures of issue #20 on one store (bench/queries.ts runs it on each; npm run bench's case 6 too):
 * seeds a quiet and a busy link, a small and a large account (bench/lib/click-cells.ts), settles the days before
 * today with the store's settleDays and today's whole hours with settleHours, then times the stats service's answers alternately, one call at a time.
 */
import { SCOPES } from "../../shared/enums.ts";
import { Redis } from "ioredis";
import postgres from "postgres";
import type { Deps } from "../../control/deps.ts";
import { getAccountAnalytics, getLinkAnalytics } from "../../control/stats/service.ts";
import type { RawQuery } from "../../control/stats/query.ts";
import { Database } from "bun:sqlite";
import { existsSync, rmSync } from "node:fs";
import { openStorage, sqliteFile } from "../../shared/adapters/open.ts";
import { loadConfig, type Config } from "../../shared/config.ts";
import { newLinkRecord } from "../../shared/link.ts";
import type { Store } from "../../shared/ports.ts";
import {
  accountCells, clickPool, HOUR, linkTemplates, repeatTemplates, writeCellsPostgres, writeCellsSqlite, writeTemplatesPostgres, type SeedCell,
} from "./click-cells.ts";
import { deleteKeys } from "./services.ts";
import { median } from "./stats.ts";

const DAY = 24 * HOUR;
const LINK_DAYS = 90;
const ACCOUNT_DAYS = 30;

export interface QuerySizes {
  /** Clicks of the quiet and the busy link over 90 days. */
  clicks: [number, number];
  /** Links of the small and the large account. */
  links: [number, number];
  /** Timed calls per side. */
  runs: number;
}

export interface QuerySide {
  label: string;
  /** Median time of one call (ms). */
  ms: number;
  runs: number;
  /** Cells seeded for it. */
  cells: number;
}

export interface QueryFigure {
  id: "query-link" | "query-account";
  store: "sqlite" | "postgres";
  title: string;
  small: QuerySide;
  large: QuerySide;
  ratio: number;
  notes: string[];
}

const nonBot = (cells: SeedCell[]) => cells.reduce((n, c) => n + (c.bot ? 0 : c.clicks), 0);

async function insertLinks(store: Store, accountId: string, ids: string[], domain: string) {
  await store.createAccount({ id: accountId, email: `${accountId}@example.com`, passwordHash: "x", createdAt: 0 });
  for (let i = 0; i < ids.length; i += 1_000) {
    await store.insertLinks(ids.slice(i, i + 1_000).map((id) => newLinkRecord({ id, accountId, domain, slug: id, target: "https://example.com/", createdAt: 0 })));
  }
}

/** The cells of `rows` one a row, oldest hour first. */
const byHour = (rows: { linkId: string; cells: SeedCell[] }[]) =>
  rows.flatMap(({ linkId, cells }) => cells.map((c) => ({ linkId, cells: [c] }))).sort((a, b) => a.cells[0]!.hour - b.cells[0]!.hour);

/** Notes the links with seeded cells from `from` on in click_recent, as recordClicks does for the cells it writes. */
function noteRecentSqlite(file: string, from: number): void {
  const db = new Database(file);
  db.run("PRAGMA busy_timeout = 5000");
  try {
    db.run(`INSERT OR IGNORE INTO click_recent (hour, account_id, link_id)
      SELECT DISTINCT c.hour, l.account_id, c.link_id FROM click_cells c JOIN links l ON l.id = c.link_id WHERE c.hour >= ?`, [from]);
  } finally {
    db.close();
  }
}

/** A view of `store` whose cell and settled reads are counted by kind while `during` runs a call. */
function countingStore(store: Store) {
  const rows = { cells: 0, settled: 0 };
  async function* counting<T>(kind: keyof typeof rows, it: AsyncIterable<T>) {
    for await (const x of it) {
      rows[kind]++;
      yield x;
    }
  }
  const view: Store = Object.create(store, {
    readCells: { value: (...a: Parameters<Store["readCells"]>) => counting("cells", store.readCells(...a)) },
    readSettled: { value: (...a: Parameters<Store["readSettled"]>) => counting("settled", store.readSettled(...a)) },
    readSettledSums: { value: (...a: Parameters<Store["readSettledSums"]>) => counting("settled", store.readSettledSums(...a)) },
    // Rows of cells summed in the store count as cells.
    readCellSums: {
      value: async (...a: Parameters<Store["readCellSums"]>) => {
        const sums = await store.readCellSums(...a);
        rows.cells += sums.length;
        return sums;
      },
    },
    readRecentLinkTotals: {
      value: async (...a: Parameters<Store["readRecentLinkTotals"]>) => {
        const sums = await store.readRecentLinkTotals(...a);
        rows.cells += sums?.length ?? 0;
        return sums;
      },
    },
  });
  return {
    store: view,
    async during(call: () => Promise<void>): Promise<string> {
      Object.assign(rows, { cells: 0, settled: 0 });
      await call();
      return `${rows.cells.toLocaleString("en")} cells + ${rows.settled.toLocaleString("en")} settled rows`;
    },
  };
}

/** The table in which a kept store notes what it was seeded for (measureQueries' `keep`). */
const SEEDED_TABLE = "bench_queries_seeded";

/** What a kept store was seeded for (sizes, current hour), or null: none noted, or no store yet. */
async function seededFor(config: Config, sql: postgres.Sql | null): Promise<string | null> {
  if (sql) {
    const rows = await sql.unsafe<{ seeded: string }[]>(`SELECT seeded FROM ${SEEDED_TABLE}`).catch(() => []);
    return rows[0]?.seeded ?? null;
  }
  if (!existsSync(sqliteFile(config))) return null;
  const db = new Database(sqliteFile(config));
  try {
    return (db.query(`SELECT seeded FROM ${SEEDED_TABLE}`).get() as { seeded: string } | null)?.seeded ?? null;
  } catch {
    return null;
  } finally {
    db.close();
  }
}

/** Notes in the store what it was seeded for. */
async function noteSeeded(config: Config, sql: postgres.Sql | null, seeded: string): Promise<void> {
  if (sql) {
    await sql.unsafe(`CREATE TABLE ${SEEDED_TABLE} (seeded text NOT NULL)`);
    await sql.unsafe(`INSERT INTO ${SEEDED_TABLE} VALUES ($1)`, [seeded]);
    return;
  }
  const db = new Database(sqliteFile(config));
  try {
    db.run(`CREATE TABLE ${SEEDED_TABLE} (seeded TEXT NOT NULL)`);
    db.run(`INSERT INTO ${SEEDED_TABLE} VALUES (?)`, [seeded]);
  } finally {
    db.close();
  }
}

/** Empties a kept store seeded for something else: the SQLite files, the Postgres schema. */
async function emptyStore(config: Config, sql: postgres.Sql | null): Promise<void> {
  if (sql) await sql.unsafe(`DROP SCHEMA IF EXISTS "${config.databaseSchema}" CASCADE`);
  else for (const suffix of ["", "-wal", "-shm"]) rmSync(`${sqliteFile(config)}${suffix}`, { force: true });
}

/** Times `calls` alternately (warm-up first), checking each answer; the median per call. */
async function alternate(calls: (() => Promise<void>)[], runs: number): Promise<number[][]> {
  for (const call of calls) await call();
  const times = calls.map(() => [] as number[]);
  for (let r = 0; r < runs; r++) {
    for (const [i, call] of calls.entries()) {
      const t0 = performance.now();
      await call();
      times[i]!.push(performance.now() - t0);
    }
  }
  return times;
}

/**
 * `keep`: the store (SQLite's files in DATA_DIR, the Postgres schema) is left in place at the end, noted with what it
 * was seeded for, and a later call with the same sizes in the same UTC hour times the queries on it without seeding
 * and settling again (the same clicks: the seeds are fixed, the current hour's cells are the same). Otherwise a kept
 * store is emptied and seeded anew.
 */
export async function measureQueries(env: Record<string, string>, sizes: QuerySizes, log: (s: string) => void, opts: { keep?: boolean } = {}): Promise<QueryFigure[]> {
  const config = loadConfig(env);
  const kind: QueryFigure["store"] = config.mode === "scale" ? "postgres" : "sqlite";
  const sql = kind === "postgres" ? postgres(config.databaseUrl!, { max: 1, onnotice: () => {}, connection: { search_path: config.databaseSchema! } }) : null;
  const now = Date.now();
  const lastHour = now - (now % HOUR);
  const seeded = JSON.stringify({ lastHour, clicks: sizes.clicks, links: sizes.links });
  const reuse = opts.keep === true && (await seededFor(config, sql)) === seeded;
  if (opts.keep && !reuse) await emptyStore(config, sql);
  if (reuse) log(`reusing the kept store seeded for ${seeded}`);
  const storage = await openStorage(config, { poolSize: 4 });
  const { store } = storage;
  try {
    await store.migrate();
    const started = performance.now();
    const pool = await clickPool(100_000);
    log(`pool of ${pool.length.toLocaleString("en")} converted clicks in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    // Two links of one account, 90 days of hours each up to the current one.
    const linkIds = ["q-quiet", "q-busy"];
    if (!reuse) await insertLinks(store, "bench", linkIds, config.defaultDomain);
    // As the dashboard's range presets ask: from the start of the UTC day 89 days ago to now (today included).
    const today = now - (now % DAY);
    const firstHour = today - (LINK_DAYS - 1) * DAY;
    const linkSeeds = sizes.clicks.map((clicks, i) => {
      const { templates } = linkTemplates(pool, clicks, LINK_DAYS, 100 + i);
      const seeded = { clicks: 0, nonBot: 0, cells: 0, settledNonBot: 0 };
      for (let h = firstHour; h <= lastHour; h += HOUR) {
        for (const t of templates) {
          if (t.hour !== Math.floor(h / HOUR) % 24) continue;
          seeded.clicks += t.clicks;
          seeded.nonBot += t.bot ? 0 : t.clicks;
          if (h < today) seeded.settledNonBot += t.bot ? 0 : t.clicks;
          seeded.cells++;
        }
      }
      return { templates, ...seeded, label: `${seeded.clicks.toLocaleString("en")} clicks, ${seeded.cells.toLocaleString("en")} cells` };
    });
    for (const [i, seed] of linkSeeds.entries()) {
      if (reuse) continue;
      const t0 = performance.now();
      if (sql) await writeTemplatesPostgres(sql, linkIds[i]!, seed.templates, firstHour, lastHour);
      else writeCellsSqlite(sqliteFile(config), repeatTemplates(linkIds[i]!, seed.templates, firstHour, lastHour));
      log(`${linkIds[i]}: ${seed.label} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }

    // Two accounts, 30 days of Zipf-distributed clicks over their links.
    const accounts = sizes.links.map((n, i) => ({ id: `acct${i}`, links: Array.from({ length: n }, (_, k) => `a${i}-${String(k).padStart(6, "0")}`) }));
    const accountSeeds: { cells: number; expected: number }[] = [];
    // Both accounts' busiest links get the same clicks: the large one differs by its longer tail of links.
    const head = 30 * sizes.links[0];
    const accountFrom = today - (ACCOUNT_DAYS - 1) * DAY;
    const accountHours = (lastHour - accountFrom) / HOUR + 1;
    for (const [i, a] of accounts.entries()) {
      const t0 = performance.now();
      const rows = accountCells(pool, a.links, head, lastHour, accountHours, 200 + i);
      if (!reuse) {
        await insertLinks(store, a.id, a.links, config.defaultDomain);
        // Postgres: in hour order, as the drain appends them (its BRIN index on hour finds an hour's cells).
        if (sql) await writeCellsPostgres(sql, byHour(rows));
        else writeCellsSqlite(sqliteFile(config), rows);
      }
      const cells = rows.reduce((n, r) => n + r.cells.length, 0);
      accountSeeds.push({ cells, expected: rows.reduce((n, r) => n + nonBot(r.cells), 0) });
      log(`${a.id}: ${a.links.length.toLocaleString("en")} links, ${cells.toLocaleString("en")} cells in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }

    // The drain notes, as it writes them, which links have cells in hours not settled yet (SQLite's click_recent,
    // docs/analytics.md); seeded cells bypass it, so the note is made here for today's.
    if (!sql && !reuse) noteRecentSqlite(sqliteFile(config), today);
    let t0 = performance.now();
    if (!reuse) await store.settleDays(today);
    const settleS = (performance.now() - t0) / 1000;
    const settledIn = reuse ? "earlier (a kept store)" : `in ${settleS.toFixed(1)} s`;
    log(`settleDays(today) ${settledIn}`);
    // Today's whole hours, as the maintenance pass settles them every few minutes: the current hour stays cells.
    t0 = performance.now();
    if (!reuse) await store.settleHours(now);
    log(`settleHours(now) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    // As the maintenance's fold does every minute: busy link-hours not settled (the busy link's current hour) go into
    // their digests; a process's first fold finds them in the store (shared/adapters/hour-digests.ts).
    t0 = performance.now();
    const folded = await store.foldBusyHours();
    log(`foldBusyHours() folded ${folded} link-hours in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    if (sql && !reuse) {
      // As autovacuum would have by now: statistics, and the BRIN ranges of the seeded cells summarized (an
      // account's unsettled hour is found by hour; unsummarized ranges are read whole).
      await sql`ANALYZE links, click_cells, click_settled, click_link_totals, click_account_totals`;
      await sql`SELECT brin_summarize_new_values('click_cells_hour'), brin_summarize_new_values('click_cell_sets_hour')`;
    }
    if (opts.keep && !reuse) await noteSeeded(config, sql, seeded);

    const deps = { config, store, hot: storage.hot, now: () => now } as Deps;
    // Untimed: the same questions once more through a store that counts the rows the engine reads.
    const counted = countingStore(store);
    const countedDeps = { ...deps, store: counted.store };
    const iso = (t: number) => new Date(t).toISOString();
    const check = (what: string, got: number, want: number) => {
      if (got !== want) throw new Error(`${what}: ${got} clicks, expected ${want}`);
    };
    const linkCalls = (to: number, expect: "nonBot" | "settledNonBot", d = deps) =>
      linkIds.map((slug, i) => async () => {
        const a = await getLinkAnalytics(d, { workspaceId: "bench", accountId: "bench", role: "owner", keyId: null, scopes: SCOPES }, slug, { from: iso(firstHour), to: iso(to), interval: "day", groupBy: "country" });
        check(slug, a.totals.clicks, linkSeeds[i]![expect]);
      });
    t0 = performance.now();
    const linkTimes = await alternate(linkCalls(now, "nonBot"), sizes.runs);
    // The same question without today (settled days only): tells what today's cells cost the busy link.
    const settledTimes = await alternate(linkCalls(today, "settledNonBot"), sizes.runs);
    log(`link queries timed in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const accountQuery: RawQuery = { from: iso(accountFrom), to: iso(now), interval: "day", groupBy: "link" };
    const accountCalls = (d = deps) =>
      accounts.map((a, i) => async () => {
        const r = await getAccountAnalytics(d, { workspaceId: a.id, accountId: a.id, role: "owner", keyId: null, scopes: SCOPES }, accountQuery);
        check(a.id, r.totals.clicks, accountSeeds[i]!.expected);
      });
    t0 = performance.now();
    const accountTimes = await alternate(accountCalls(), sizes.runs);
    const rowsRead = async (calls: (() => Promise<void>)[]) => {
      const out: string[] = [];
      for (const call of calls) out.push(await counted.during(call));
      return out.join(" vs ");
    };
    const linkRows = await rowsRead(linkCalls(now, "nonBot", countedDeps));
    const accountRows = await rowsRead(accountCalls(countedDeps));
    log(`account queries timed in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const fmt = (n: number) => n.toLocaleString("en");
    const side = (label: string, times: number[], cells: number): QuerySide => ({ label, ms: median(times), runs: times.length, cells });
    const hoursToday = (now - today) / HOUR;
    const common = `settleDays settled every day before today ${settledIn}, settleHours today's whole hours; of today's ${hoursToday.toFixed(1)} hours the current one is read from cells, a busy link's from its digest and the cells not folded (${folded} link-hours folded; run at ${iso(now).slice(11, 16)} UTC).`;
    const link = {
      id: "query-link" as const, store: kind, title: `link, 90 days, interval=day&groupBy=country, ${fmt(sizes.clicks[1])} vs ${fmt(sizes.clicks[0])} clicks`,
      small: side(linkSeeds[0]!.label, linkTimes[0]!, linkSeeds[0]!.cells),
      large: side(linkSeeds[1]!.label, linkTimes[1]!, linkSeeds[1]!.cells),
      notes: [
        common,
        `Rows the engine read from the store (quiet vs busy): ${linkRows}.`,
        `The same range ending at the start of today (settled days only, no cells read): ${median(settledTimes[0]!).toFixed(2)} ms vs ` +
          `${median(settledTimes[1]!).toFixed(2)} ms (${(median(settledTimes[1]!) / median(settledTimes[0]!)).toFixed(2)}×).`,
      ],
    };
    const account = {
      id: "query-account" as const, store: kind, title: `account top links, 30 days, interval=day&groupBy=link, ${fmt(sizes.links[1])} vs ${fmt(sizes.links[0])} links`,
      small: side(`${fmt(sizes.links[0])} links, ${fmt(accountSeeds[0]!.cells)} cells`, accountTimes[0]!, accountSeeds[0]!.cells),
      large: side(`${fmt(sizes.links[1])} links, ${fmt(accountSeeds[1]!.cells)} cells`, accountTimes[1]!, accountSeeds[1]!.cells),
      notes: [
        common,
        `Rows the engine read from the store (small vs large account): ${accountRows}.`,
        `Link i of either account gets 5 + ${fmt(head)}/(i+1) clicks over the 30 days, each at a random hour.`,
      ],
    };
    return [link, account].map((f): QueryFigure => ({ ...f, ratio: f.large.ms / f.small.ms }));
  } finally {
    await storage.hot.close();
    await store.close();
    if (sql) {
      if (!opts.keep) await sql.unsafe(`DROP SCHEMA IF EXISTS "${config.databaseSchema}" CASCADE`).catch(() => {});
      await sql.end();
      const redis = new Redis(config.redisUrl!, { maxRetriesPerRequest: 1 });
      await deleteKeys(redis, config.redisPrefix).catch(() => {});
      redis.disconnect();
    }
  }
}

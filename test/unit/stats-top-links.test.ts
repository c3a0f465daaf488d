/**
 * An account's top links from ranked link totals (control/stats/top-links.ts) answer exactly what cells alone
 * answer: the same rows in the same order (ties by id), the same "other", totals and series, over many links with
 * skewed clicks, ties at the limit, bots excluded, included or alone, weeks and months, settled hours of the day
 * after the settled days, range edges from cells, and links whose only clicks are in the unsettled hour.
 */
import { describe, expect, test } from "bun:test";
import { DIMENSION_NAMES, type ClickDims } from "../../shared/clicks/dimensions.ts";
import { grainStart, type AccountDayTotal, type ClickCell, type LinkTotal } from "../../shared/ports/clicks.ts";
import { answer, type AnalyticsReads, type LinkLabel } from "../../control/stats/engine.ts";
import { parseStatsQuery, type RawQuery } from "../../control/stats/query.ts";
import { topLinkTotals, type RankedReads } from "../../control/stats/top-links.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = Date.parse("2026-11-25T10:20:00Z");
const TODAY = NOW - (NOW % DAY);
const DIMS = Object.fromEntries(DIMENSION_NAMES.map((n) => [n, null])) as ClickDims;

async function* stream<T>(items: T[]) {
  yield* items;
}

/** Deterministic pseudo-random numbers in [0, 1). */
function random(seed: number) {
  let s = seed;
  return () => ((s = (s * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
}

/** 400 links over 40 days: link i gets about 600/(i+1) clicks (many tie), a few links click only in the last hour. */
function cellsOf(seed: number): ClickCell[] {
  const r = random(seed);
  const cells: ClickCell[] = [];
  for (let i = 0; i < 400; i++) {
    const n = 1 + Math.floor(600 / (i + 1));
    for (let k = 0; k < n; k++) {
      const hour = TODAY + 10 * HOUR - Math.floor(r() * 40 * 24) * HOUR;
      cells.push({ linkId: `L${String(i).padStart(3, "0")}`, hour, dims: { ...DIMS, via: r() < 0.2 ? "qr" : "link" }, bot: r() < 0.1, clicks: 1 + Math.floor(r() * 3), visitors: r() < 0.5 ? 1 : 0 });
    }
  }
  for (let i = 0; i < 3; i++) cells.push({ linkId: `N${i}`, hour: TODAY + 10 * HOUR, dims: DIMS, bot: false, clicks: 500 - i, visitors: 1 });
  return cells;
}

const labels = (ids: string[]) => new Map(ids.map((id): [string, LinkLabel] => [id, { slug: id, domain: "d", shortUrl: `https://d/${id}`, tags: [], folder: null }]));

/** What the store keeps from the cells of hours before `hoursBefore`: account day totals, link day and month totals. */
let recentCalls = 0;
function rankedOf(cells: ClickCell[], hoursBefore: number): RankedReads {
  const days = new Map<string, AccountDayTotal>();
  const links = new Map<string, LinkTotal & { grain: string; bucket: number; bot: boolean }>();
  for (const c of cells.filter((x) => x.hour < hoursBefore)) {
    const day = c.hour - (c.hour % DAY);
    const d = days.get(`${day}|${c.bot}`) ?? days.set(`${day}|${c.bot}`, { bucket: day, bot: c.bot, clicks: 0, visitors: 0 }).get(`${day}|${c.bot}`)!;
    d.clicks += c.clicks;
    d.visitors += c.visitors;
    for (const [grain, bucket] of [["day", day], ["month", grainStart("month", day)]] as const) {
      const key = `${grain}|${bucket}|${c.bot}|${c.linkId}`;
      const t = links.get(key) ?? links.set(key, { grain, bucket, bot: c.bot, linkId: c.linkId, clicks: 0, visitors: 0 }).get(key)!;
      t.clicks += c.clicks;
      t.visitors += c.visitors;
    }
  }
  const all = [...links.values()];
  return {
    // Every other call the unsettled hours come summed per link and hour, else as cells (null).
    recentLinks: async (from, to) => {
      if (++recentCalls % 2 === 0) return null;
      const sums = new Map<string, { linkId: string; hour: number; bot: boolean; clicks: number; visitors: number }>();
      for (const c of cells.filter((x) => x.hour >= from && x.hour < to)) {
        const key = `${c.linkId}|${c.hour}|${c.bot}`;
        const t = sums.get(key) ?? sums.set(key, { linkId: c.linkId, hour: c.hour, bot: c.bot, clicks: 0, visitors: 0 }).get(key)!;
        t.clicks += c.clicks;
        t.visitors += c.visitors;
      }
      return [...sums.values()];
    },
    accountTotals: (from, to) => stream([...days.values()].filter((d) => d.bucket >= from && d.bucket < to)),
    rankedLinks: async (grain, bucket, bot, offset, limit) =>
      all.filter((t) => t.grain === grain && t.bucket === bucket && t.bot === bot)
        .sort((a, b) => b.clicks - a.clicks || (a.linkId < b.linkId ? -1 : 1)).slice(offset, offset + limit)
        .map(({ linkId, clicks, visitors }) => ({ linkId, clicks, visitors })),
    sumLinks: async (ids, runs, bots) => {
      const sums = new Map<string, LinkTotal>();
      for (const t of all) {
        if (!ids.includes(t.linkId) || !bots.includes(t.bot) || !runs.some((r) => r.grain === t.grain && t.bucket >= r.from && t.bucket < r.to)) continue;
        const s = sums.get(t.linkId) ?? sums.set(t.linkId, { linkId: t.linkId, clicks: 0, visitors: 0 }).get(t.linkId)!;
        s.clicks += t.clicks;
        s.visitors += t.visitors;
      }
      return [...sums.values()];
    },
  };
}

function reads(cells: ClickCell[], settledBefore: number, settledHoursBefore: number, ranked?: RankedReads): AnalyticsReads {
  return {
    cells: (from, to) => stream(cells.filter((c) => c.hour >= from && c.hour < to)),
    settled: () => {
      throw new Error("top links read no link's settled rows");
    },
    settledBefore,
    settledHoursBefore,
    links: async (ids) => labels(ids ?? []),
    ranked,
  };
}

const QUERIES: RawQuery[] = [
  { from: "2026-10-27", groupBy: "link" },
  { from: "2026-10-27", groupBy: "link", limit: "3" },
  { from: "2026-10-20", groupBy: "link", limit: "7", bots: "include" },
  { from: "2026-10-20", groupBy: "link", limit: "5", bots: "only" },
  { from: "2026-10-16", groupBy: "link", interval: "week", limit: "4" },
  { from: "2026-10-16", groupBy: "link", interval: "month", limit: "12" },
  { from: "2026-10-27T05:00:00Z", groupBy: "link", limit: "6" },
  { from: "2026-11-01", to: "2026-11-20", groupBy: "link", limit: "2" },
  { from: "2026-10-16", groupBy: "link", limit: "100" },
];

describe("top links from ranked link totals", () => {
  for (const seed of [1, 2, 3]) {
    test(`answer what cells alone answer (seed ${seed})`, async () => {
      const cells = cellsOf(seed);
      // Days settled before today; today's hours up to 10:00 settled by settleHours, the current hour not.
      const ranked = rankedOf(cells, TODAY + 10 * HOUR);
      let asked = 0;
      const counting: RankedReads = { ...ranked, rankedLinks: (...a) => (asked++, ranked.rankedLinks(...a)) };
      for (const raw of QUERIES) {
        const q = parseStatsQuery(raw, NOW, "account");
        const want = await answer(q, reads(cells, 0, 0));
        const got = await answer(q, reads(cells, TODAY, TODAY + 10 * HOUR, counting));
        expect(got).toEqual(want);
      }
      expect(asked).toBeGreaterThan(0);
    });
  }
});

test("read a page of one row at a time, the best links' exact totals are the top ones, ties at the limit included", async () => {
  const cells = cellsOf(4);
  const settledTo = TODAY + 10 * HOUR;
  const ranked = rankedOf(cells, settledTo);
  const runs = [{ grain: "day" as const, from: Date.UTC(2026, 9, 20), to: Date.UTC(2026, 9, 23) }, { grain: "month" as const, from: Date.UTC(2026, 10, 1), to: TODAY + DAY }];
  const inRange = (c: ClickCell) => (c.hour >= Date.UTC(2026, 9, 20) && c.hour < Date.UTC(2026, 9, 23)) || (c.hour >= Date.UTC(2026, 10, 1) && c.hour < settledTo);
  const unsettled = new Map<string | null, { clicks: number; visitors: number }>();
  for (const c of cells.filter((x) => x.hour >= settledTo && !x.bot)) {
    const u = unsettled.get(c.linkId) ?? unsettled.set(c.linkId, { clicks: 0, visitors: 0 }).get(c.linkId)!;
    u.clicks += c.clicks;
    u.visitors += c.visitors;
  }
  const exact = new Map<string, number>();
  for (const c of cells.filter((x) => !x.bot && (inRange(x) || x.hour >= settledTo))) exact.set(c.linkId, (exact.get(c.linkId) ?? 0) + c.clicks);
  const order = [...exact].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1));
  for (const limit of [1, 2, 5, 10, 17, 40]) {
    const got = await topLinkTotals(ranked, runs, [false], new Map([...unsettled].map(([k, v]) => [k, { ...v }])), limit, 1);
    const top = [...got].sort(([a, x], [b, y]) => y.clicks - x.clicks || (a < b ? -1 : 1)).slice(0, limit);
    expect(top.map(([id, c]) => [id, c.clicks])).toEqual(order.slice(0, limit));
    for (const [id, c] of got) expect(c.clicks).toBe(exact.get(id)!);
    // Not every link: the threshold stopped the reads.
    expect(got.size).toBeLessThan(exact.size);
  }
});

/**
 * The analytics engine as a pure function over hand-made cells: series in time zones across DST changes, bots,
 * unique visitors, top N with "other", filters, the account's groupings, and settled totals mixed with cells
 * answering exactly what cells alone answer.
 */
import { describe, expect, test } from "bun:test";
import { DIMENSION_NAMES, type ClickDims, type Dimension } from "../../shared/clicks/dimensions.ts";
import { grainStart, SETTLED_GRAINS, type ClickCell, type SettledGrain, type SettledTotal } from "../../shared/ports/clicks.ts";
import type { StatsQuery } from "../../control/stats/analytics-types.ts";
import { answer, coverDays, settledSpan, type AnalyticsReads, type LinkLabel } from "../../control/stats/engine.ts";
import { parseStatsQuery, type RawQuery } from "../../control/stats/query.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = Date.parse("2026-11-25T03:20:00Z");

const dims = (d: Partial<ClickDims> = {}): ClickDims =>
  ({ ...Object.fromEntries(DIMENSION_NAMES.map((n) => [n, null])), country: "DE", device: "desktop", ...d }) as ClickDims;

/** A cell in the UTC hour holding `at`. */
function cell(at: string, d: Partial<ClickDims> = {}, o: Partial<ClickCell> = {}): ClickCell {
  const t = Date.parse(at);
  return { linkId: "L1", hour: t - (t % HOUR), dims: dims(d), bot: false, clicks: 1, visitors: 1, ...o };
}

async function* stream<T>(items: T[]) {
  yield* items;
}

/** A settled row of the fake store, with the grain of its bucket (the hourly link totals: "day"). */
type Settled = SettledTotal & { grain: SettledGrain };

/**
 * What settleDays builds from cells of days before `before` (hourly link totals and day, week and month rows per
 * dimension), and settleHours from cells of hours in [before, hoursBefore) (the same, and hourly dimension rows).
 */
function settle(cells: ClickCell[], before: number, hoursBefore = before): Settled[] {
  const out = new Map<string, Settled>();
  const put = (linkId: string, dimension: Dimension | null, grain: SettledGrain, bucket: number, value: string | null, c: ClickCell) => {
    const key = JSON.stringify([linkId, dimension, grain, bucket, value, c.bot]);
    const t = out.get(key) ?? { linkId, dimension, grain, bucket, value, bot: c.bot, clicks: 0, visitors: 0 };
    t.clicks += c.clicks;
    t.visitors += c.visitors;
    out.set(key, t);
  };
  for (const c of cells.filter((c) => c.hour < Math.max(before, hoursBefore))) {
    put(c.linkId, null, "day", c.hour, null, c);
    for (const g of SETTLED_GRAINS) for (const d of DIMENSION_NAMES) put(c.linkId, d, g, grainStart(g, c.hour - (c.hour % DAY)), c.dims[d], c);
    if (c.hour >= before) for (const d of DIMENSION_NAMES) put(c.linkId, d, "hour", c.hour, c.dims[d], c);
  }
  return [...out.values()];
}

function readsOf(cells: ClickCell[], settledBefore = 0, links?: Map<string, LinkLabel>, settledHoursBefore = settledBefore): AnalyticsReads {
  const settled = settle(cells, settledBefore, settledHoursBefore);
  return {
    cells: (from, to) => stream(cells.filter((c) => c.hour >= from && c.hour < to)),
    settled: (dimension, from, to, grain = "day") =>
      stream(settled.filter((s) => s.dimension === dimension && s.grain === grain && s.bucket >= from && s.bucket < to).map(({ grain: _, ...s }) => s)),
    settledBefore,
    settledHoursBefore,
    links: links && (async (ids?: string[]) => (ids ? new Map([...links].filter(([id]) => ids.includes(id))) : links)),
  };
}

const q = (raw: RawQuery, scope: "link" | "account" = "link"): StatsQuery => parseStatsQuery(raw, NOW, scope);
const clicksOf = (a: { series: { clicks: number }[] }) => a.series.map((p) => p.clicks);

describe("series in a time zone", () => {
  test("Berlin across spring forward (2026-03-29, 23 hours): each click in its local day", async () => {
    const cells = [
      cell("2026-03-28T22:59:00Z"), // 23:59+01:00 on the 28th
      cell("2026-03-28T23:00:00Z"), // 00:00+01:00 on the 29th
      cell("2026-03-29T21:30:00Z"), // 23:30+02:00 on the 29th
      cell("2026-03-29T22:00:00Z"), // 00:00+02:00 on the 30th
    ];
    const a = await answer(q({ from: "2026-03-28", to: "2026-03-31", tz: "Europe/Berlin", interval: "day" }), readsOf(cells));
    expect(a.series.map((p) => p.start)).toEqual(["2026-03-28T00:00:00+01:00", "2026-03-29T00:00:00+01:00", "2026-03-30T00:00:00+02:00"]);
    expect(clicksOf(a)).toEqual([1, 2, 1]);
    expect(a.from).toBe("2026-03-28T00:00:00+01:00");
    expect(a.to).toBe("2026-03-31T00:00:00+02:00");
  });

  test("Berlin's fall-back day by hour: 25 points, the repeated 02:00 twice, empty hours as zeros", async () => {
    const cells = [cell("2026-10-25T00:10:00Z"), cell("2026-10-25T01:10:00Z", {}, { clicks: 3 })];
    const a = await answer(q({ from: "2026-10-25", to: "2026-10-26", tz: "Europe/Berlin", interval: "hour" }), readsOf(cells));
    expect(a.series).toHaveLength(25);
    expect(a.series.slice(2, 4)).toEqual([
      { start: "2026-10-25T02:00:00+02:00", clicks: 1, visitors: 1 },
      { start: "2026-10-25T02:00:00+01:00", clicks: 3, visitors: 1 },
    ]);
    expect(a.totals).toEqual({ clicks: 4, visitors: 2 });
  });

  test("New York by month across three months and a DST change; weeks from Monday", async () => {
    const cells = [cell("2026-02-01T04:59:00Z"), cell("2026-02-01T05:00:00Z"), cell("2026-03-31T23:00:00Z"), cell("2026-04-01T04:00:00Z")];
    const m = await answer(q({ from: "2026-01-15", to: "2026-04-10", tz: "America/New_York", interval: "month" }), readsOf(cells));
    expect(m.series.map((p) => [p.start, p.clicks])).toEqual([
      ["2026-01-01T00:00:00-05:00", 1], ["2026-02-01T00:00:00-05:00", 1], ["2026-03-01T00:00:00-05:00", 1], ["2026-04-01T00:00:00-04:00", 1],
    ]);
    const w = await answer(q({ from: "2026-03-04", to: "2026-03-17", tz: "America/New_York", interval: "week" }), readsOf([cell("2026-03-09T03:59:00Z"), cell("2026-03-09T04:00:00Z")]));
    expect(w.series.map((p) => [p.start, p.clicks])).toEqual([["2026-03-02T00:00:00-05:00", 1], ["2026-03-09T00:00:00-04:00", 1], ["2026-03-16T00:00:00-04:00", 0]]);
  });

  test("Kolkata (+05:30): an hour's clicks count in the local day its UTC hour starts in", async () => {
    const cells = [cell("2026-11-23T18:40:00Z"), cell("2026-11-23T19:00:00Z")];
    const a = await answer(q({ from: "2026-11-23", to: "2026-11-25", tz: "Asia/Kolkata", interval: "day" }), readsOf(cells));
    expect(a.series.map((p) => [p.start, p.clicks])).toEqual([["2026-11-23T00:00:00+05:30", 1], ["2026-11-24T00:00:00+05:30", 1]]);
  });
});

describe("counting", () => {
  const mixed = [
    cell("2026-11-20T10:00:00Z", { referrer: "news.ycombinator.com", country: "US" }, { clicks: 5, visitors: 3 }),
    cell("2026-11-20T11:00:00Z", { referrer: null, country: "FR", device: "mobile" }, { clicks: 2, visitors: 2 }),
    cell("2026-11-21T11:00:00Z", { referrer: "t.co", country: null, device: "mobile" }, { clicks: 4, visitors: 1 }),
    cell("2026-11-21T12:00:00Z", { referrer: "t.co" }, { bot: true, clicks: 7, visitors: 7 }),
  ];

  test("bots: exclude counts people only, only counts bots only, include both", async () => {
    const totals = async (bots: string) => (await answer(q({ bots, from: "2026-11-19" }), readsOf(mixed))).totals;
    expect(await totals("exclude")).toEqual({ clicks: 11, visitors: 6 });
    expect(await totals("only")).toEqual({ clicks: 7, visitors: 7 });
    expect(await totals("include")).toEqual({ clicks: 18, visitors: 13 });
  });

  test("breakdowns: top N by clicks then value, unknown as null, the rest in other; every dimension without groupBy", async () => {
    const a = await answer(q({ from: "2026-11-19", limit: "2", bots: "include" }), readsOf(mixed));
    expect(Object.keys(a.breakdowns)).toEqual(DIMENSION_NAMES);
    expect(a.breakdowns.referrer).toEqual({
      rows: [{ value: "t.co", clicks: 11, visitors: 8 }, { value: "news.ycombinator.com", clicks: 5, visitors: 3 }],
      other: { clicks: 2, visitors: 2 },
    });
    expect(a.breakdowns.country!.rows).toEqual([{ value: "DE", clicks: 7, visitors: 7 }, { value: "US", clicks: 5, visitors: 3 }]);
    const ties = await answer(q({ from: "2026-11-19", groupBy: "device" }), readsOf([cell("2026-11-20T00:00:00Z", { device: null }), cell("2026-11-20T00:00:00Z", { device: "tablet" }), cell("2026-11-20T00:00:00Z", { device: "mobile" })]));
    expect(Object.keys(ties.breakdowns)).toEqual(["device"]);
    expect(ties.breakdowns.device!.rows.map((r) => r.value)).toEqual(["mobile", "tablet", null]);
  });

  test("filters: values of one dimension OR, dimensions AND, (none) matches unknown", async () => {
    const total = async (raw: RawQuery) => (await answer(q({ from: "2026-11-19", ...raw }), readsOf(mixed))).totals.clicks;
    expect(await total({ referrer: "(none)" })).toBe(2);
    expect(await total({ country: "(none),us" })).toBe(9);
    expect(await total({ country: "US,FR", device: "mobile" })).toBe(2);
    expect(await total({ referrer: "t.co", bots: "include", device: "desktop" })).toBe(7);
  });

  test("a range counts every UTC hour that overlaps it", async () => {
    const cells = [cell("2026-11-20T09:59:00Z"), cell("2026-11-20T10:00:00Z"), cell("2026-11-20T10:59:00Z"), cell("2026-11-20T11:00:00Z")];
    const a = await answer(q({ from: "2026-11-20T10:30:00Z", to: "2026-11-20T11:00:00Z" }), readsOf(cells));
    expect(a.totals.clicks).toBe(2);
    expect(a.series).toEqual([{ start: "2026-11-20T10:00:00+00:00", clicks: 2, visitors: 2 }]);
  });
});

describe("account groupings", () => {
  const links = new Map<string, LinkLabel>([
    ["L1", { slug: "spring", domain: "s.test", shortUrl: "http://s.test/spring", tags: ["sale", "news"], folder: "2026" }],
    ["L2", { slug: "autumn", domain: "s.test", shortUrl: "http://s.test/autumn", tags: [], folder: null }],
  ]);
  const cells = [
    cell("2026-11-20T10:00:00Z", {}, { linkId: "L1", clicks: 3, visitors: 2 }),
    cell("2026-11-20T10:00:00Z", {}, { linkId: "L2", clicks: 5, visitors: 5 }),
    cell("2026-11-20T10:00:00Z", {}, { linkId: "gone", clicks: 100 }),
  ];

  test("link rows carry slug and short address; a link in two tags counts in each; clicks of unknown links are not counted", async () => {
    const a = await answer(q({ from: "2026-11-19" }, "account"), readsOf(cells, 0, links));
    expect(a.totals).toEqual({ clicks: 8, visitors: 7 });
    expect(a.breakdowns.link!.rows).toEqual([
      { value: "L2", slug: "autumn", domain: "s.test", shortUrl: "http://s.test/autumn", clicks: 5, visitors: 5 },
      { value: "L1", slug: "spring", domain: "s.test", shortUrl: "http://s.test/spring", clicks: 3, visitors: 2 },
    ]);
    expect(a.breakdowns.tag!.rows).toEqual([{ value: null, clicks: 5, visitors: 5 }, { value: "news", clicks: 3, visitors: 2 }, { value: "sale", clicks: 3, visitors: 2 }]);
    expect(a.breakdowns.folder!.rows).toEqual([{ value: null, clicks: 5, visitors: 5 }, { value: "2026", clicks: 3, visitors: 2 }]);
  });

  test("top links ask only for their own rows' links; a dimension breakdown asks for none", async () => {
    const asked: (string[] | undefined)[] = [];
    const reads = readsOf(cells.slice(0, 2), 0, links);
    const spy = { ...reads, links: (ids?: string[]) => (asked.push(ids), reads.links!(ids)) };
    const top = await answer(q({ from: "2026-11-19", groupBy: "link", limit: "1" }, "account"), spy);
    expect(top.breakdowns.link).toEqual({ rows: [{ value: "L2", slug: "autumn", domain: "s.test", shortUrl: "http://s.test/autumn", clicks: 5, visitors: 5 }], other: { clicks: 3, visitors: 2 } });
    await answer(q({ from: "2026-11-19", groupBy: "country" }, "account"), spy);
    expect(asked).toEqual([["L2"]]);
  });

  test("link (by slug), tag and folder filters select links", async () => {
    const total = async (raw: RawQuery) => (await answer(q({ from: "2026-11-19", ...raw }, "account"), readsOf(cells, 0, links))).totals.clicks;
    expect(await total({ link: "autumn" })).toBe(5);
    expect(await total({ tag: "sale" })).toBe(3);
    expect(await total({ tag: "(none)" })).toBe(5);
    expect(await total({ folder: "2026,(none)" })).toBe(8);
  });
});

describe("settled totals", () => {
  // Thirty days of clicks in varied combinations over two links, bots among them.
  const cells: ClickCell[] = [];
  for (let i = 0; i < 30 * 24; i += 5) {
    const hour = Date.parse("2026-10-26T00:00:00Z") + i * HOUR;
    cells.push({
      linkId: i % 3 ? "L1" : "L2", hour, bot: i % 7 === 0, clicks: 1 + (i % 4), visitors: 1 + (i % 2),
      dims: dims({ country: ["DE", "US", null][i % 3]!, device: ["mobile", "desktop"][i % 2]!, referrer: i % 4 ? "t.co" : null }),
    });
  }
  const links = new Map<string, LinkLabel>([["L1", { slug: "a", domain: "x", shortUrl: "x/a", tags: ["t"], folder: null }], ["L2", { slug: "b", domain: "x", shortUrl: "x/b", tags: [], folder: "f" }]]);
  const settledBefore = Date.parse("2026-11-20T00:00:00Z");

  test("whole settled days from totals and the rest from cells answer exactly what cells alone answer", async () => {
    const asks: [RawQuery, "link" | "account"][] = [
      [{ from: "2026-10-27T05:30:00Z", to: "2026-11-24T13:00:00Z" }, "link"],
      [{ from: "2026-10-27T05:30:00Z", tz: "Europe/Berlin", interval: "week", bots: "include" }, "link"],
      [{ from: "2026-10-26", tz: "Asia/Kolkata", bots: "only", limit: "1" }, "link"],
      [{ from: "2026-10-28T12:00:00Z", interval: "month", groupBy: "country" }, "link"],
      [{ from: "2026-10-26", to: "2026-11-19T18:00:00Z", groupBy: "tag" }, "account"],
      [{ from: "2026-10-26" }, "account"],
      [{ from: "2026-10-26", groupBy: "via", bots: "include", interval: "week" }, "link"],
      [{ from: "2026-11-18", interval: "hour" }, "account"],
    ];
    for (const [raw, scope] of asks) {
      const l = scope === "account" ? links : undefined;
      const mixed = await answer(q(raw, scope), readsOf(cells, settledBefore, l));
      const cellsOnly = await answer(q(raw, scope), readsOf(cells, 0, l));
      expect(mixed).toEqual(cellsOnly);
      expect(mixed.totals.clicks).toBeGreaterThan(0);
    }
  });

  test("settled totals are read for the whole days; a query with filters reads cells only", async () => {
    const asked: string[] = [];
    const reads = readsOf(cells, settledBefore);
    const spy: AnalyticsReads = {
      ...reads,
      cells: (f, t) => (asked.push(`cells ${new Date(f).toISOString()}`), reads.cells(f, t)),
      settled: (d, f, t, g) => (asked.push(`settled ${d} ${g ?? "day"} ${new Date(f).toISOString()} ${new Date(t).toISOString()}`), reads.settled(d, f, t, g)),
    };
    await answer(q({ from: "2026-11-01T05:00:00Z", groupBy: "device" }), spy);
    // A UTC series by day: link totals from via's day rows; the device breakdown from its rows summed over the days.
    // The device breakdown from week rows (Monday 2, 9 and 16 November: the last holds only settled days, all inside).
    expect(asked).toEqual([
      "cells 2026-11-01T05:00:00.000Z", "settled via day 2026-11-02T00:00:00.000Z 2026-11-20T00:00:00.000Z",
      "settled device week 2026-11-02T00:00:00.000Z 2026-11-20T00:00:00.000Z", "cells 2026-11-20T00:00:00.000Z",
    ]);
    asked.length = 0;
    // Berlin's days are not UTC days: link totals from the hourly rows.
    await answer(q({ from: "2026-11-01T05:00:00Z", groupBy: "device", tz: "Europe/Berlin" }), spy);
    expect(asked[1]).toBe("settled null day 2026-11-02T00:00:00.000Z 2026-11-20T00:00:00.000Z");
    asked.length = 0;
    await answer(q({ from: "2026-11-01T05:00:00Z", country: "DE" }), spy);
    expect(asked).toEqual(["cells 2026-11-01T05:00:00.000Z"]);
    asked.length = 0;
    // A range from a UTC day's start has no hours before its settled days: no read of an empty range (an
    // account's read probes every link of it however few rows come back).
    await answer(q({ from: "2026-11-02", groupBy: "device" }, "account"), spy);
    expect(asked.filter((a) => a.startsWith("cells"))).toEqual(["cells 2026-11-20T00:00:00.000Z"]);
  });
});

describe("settled weeks and months", () => {
  // 100 days of clicks (August to November 2026) over two links, in varied combinations, bots among them.
  const cells: ClickCell[] = [];
  for (let i = 0; i < 100 * 24; i += 7) {
    const hour = Date.parse("2026-08-17T00:00:00Z") + i * HOUR;
    cells.push({
      linkId: i % 2 ? "L1" : "L2", hour, bot: i % 5 === 0, clicks: 1 + (i % 3), visitors: i % 2,
      dims: dims({ country: ["DE", "US", "FR", null][i % 4]!, via: i % 3 ? "link" : "qr", browser: ["Chrome", "Safari"][i % 2]! }),
    });
  }
  const settledBefore = Date.parse("2026-11-24T00:00:00Z");

  test("whole months and weeks from their rows, the edges from days, answer exactly what cells alone answer", async () => {
    const asks: RawQuery[] = [
      { from: "2026-08-27T00:00:00Z", to: "2026-11-24T15:00:00Z", interval: "day", groupBy: "country" },
      { from: "2026-08-17T09:00:00Z", to: "2026-11-25T00:00:00Z", interval: "week" },
      { from: "2026-08-31", to: "2026-11-23", interval: "month", bots: "include" },
      { from: "2026-09-01", to: "2026-11-01", interval: "month", groupBy: "via", bots: "only" },
      { from: "2026-08-20T13:00:00Z", to: "2026-10-05T00:00:00Z", interval: "week", tz: "Europe/Berlin", groupBy: "browser" },
      { from: "2026-09-03", to: "2026-09-10", interval: "day" },
      { from: "2026-08-27T00:00:00Z", to: "2026-11-24T00:00:00Z", interval: "month", groupBy: "country" },
      { from: "2026-11-03T00:00:00Z", to: "2026-11-24T00:00:00Z", interval: "week", bots: "include" },
      { from: "2026-11-03T00:00:00Z", to: "2026-11-25T00:00:00Z", interval: "week", groupBy: "via" },
    ];
    for (const raw of asks) {
      const mixed = await answer(q(raw), readsOf(cells, settledBefore));
      const cellsOnly = await answer(q(raw), readsOf(cells, 0));
      expect(mixed).toEqual(cellsOnly);
      expect(mixed.totals.clicks).toBeGreaterThan(0);
    }
  });

  test("a range is covered by whole months, then whole weeks, then days", () => {
    const d = (s: string) => Date.parse(`${s}T00:00:00Z`);
    const iso = (runs: [string, number, number][]) => runs.map(([g, f, t]) => `${g} ${new Date(f).toISOString().slice(0, 10)} ${new Date(t).toISOString().slice(0, 10)}`);
    // 27 August (a Thursday) to 24 November: days to September, September and October, Sunday 1 November, the
    // weeks of Monday 2 to 22 November, Monday 23.
    expect(iso(coverDays(d("2026-08-27"), d("2026-11-24"), ["month", "week", "day"]))).toEqual([
      "day 2026-08-27 2026-09-01", "month 2026-09-01 2026-11-01", "day 2026-11-01 2026-11-02", "week 2026-11-02 2026-11-23", "day 2026-11-23 2026-11-24",
    ]);
    // Ending at the first day not settled: the last month's (or week's) rows hold only days inside the range.
    expect(iso(coverDays(d("2026-08-27"), d("2026-11-24"), ["month", "week", "day"], d("2026-11-24")))).toEqual([
      "day 2026-08-27 2026-09-01", "month 2026-09-01 2026-11-24",
    ]);
    expect(iso(coverDays(d("2026-11-03"), d("2026-11-24"), ["month", "week", "day"], d("2026-11-24")))).toEqual([
      "day 2026-11-03 2026-11-09", "week 2026-11-09 2026-11-24",
    ]);
    // No whole week inside: days only.
    expect(iso(coverDays(d("2026-09-03"), d("2026-09-10"), ["month", "week", "day"]))).toEqual(["day 2026-09-03 2026-09-10"]);
    expect(coverDays(d("2026-09-03"), d("2026-09-03"), ["month", "week", "day"])).toEqual([]);
  });
});

describe("settled hours of the day after the settled days", () => {
  // Two days of clicks, every hour, over two links; the first day settled, today's first 14 hours hour-settled.
  const cells: ClickCell[] = [];
  for (let i = 0; i < 48; i++) {
    const hour = Date.parse("2026-11-23T00:00:00Z") + i * HOUR;
    for (const linkId of ["L1", "L2"]) {
      cells.push({
        linkId, hour, bot: i % 5 === 0, clicks: 1 + (i % 3), visitors: i % 2,
        dims: dims({ country: ["DE", "US", "FR", null][i % 4]!, via: i % 3 ? "link" : "qr", device: linkId === "L1" ? "mobile" : "desktop" }),
      });
    }
  }
  const day = Date.parse("2026-11-24T00:00:00Z");
  const hoursBefore = day + 14 * HOUR;
  const links = new Map<string, LinkLabel>([["L1", { slug: "a", domain: "x", shortUrl: "x/a", tags: ["t"], folder: null }], ["L2", { slug: "b", domain: "x", shortUrl: "x/b", tags: [], folder: "f" }]]);

  test("days, then settled hours, then cells answer exactly what cells alone answer", async () => {
    const asks: [RawQuery, "link" | "account"][] = [
      [{ from: "2026-11-23T00:00:00Z", to: "2026-11-24T23:00:00Z", interval: "day", groupBy: "country" }, "link"],
      [{ from: "2026-11-23T05:00:00Z", to: "2026-11-25T00:00:00Z", interval: "hour" }, "link"],
      [{ from: "2026-11-24T03:00:00Z", to: "2026-11-24T20:00:00Z", interval: "hour", bots: "include" }, "link"],
      [{ from: "2026-11-24T03:00:00Z", to: "2026-11-24T10:00:00Z", groupBy: "via", bots: "only" }, "link"],
      [{ from: "2026-11-23T00:00:00Z", to: "2026-11-24T18:00:00Z", tz: "Europe/Berlin", groupBy: "tag" }, "account"],
      [{ from: "2026-11-24T16:00:00Z", to: "2026-11-24T20:00:00Z" }, "account"],
      [{ from: "2026-11-23T00:00:00Z", to: "2026-11-24T14:00:00Z", interval: "week", groupBy: "country" }, "link"],
      [{ from: "2026-11-23T00:00:00Z", to: "2026-11-24T12:00:00Z", interval: "month", groupBy: "via" }, "link"],
      [{ from: "2026-11-24T00:00:00Z", to: "2026-11-25T00:00:00Z", interval: "day", groupBy: "country" }, "link"],
      [{ from: "2026-11-20T00:00:00Z", to: "2026-11-23T20:00:00Z", interval: "month", groupBy: "country" }, "link"],
      // Monday 23's week row holds today's settled hours too: a range ending before the last of them reads hours.
      [{ from: "2026-11-23T00:00:00Z", to: "2026-11-24T10:00:00Z", groupBy: "country" }, "link"],
    ];
    for (const [raw, scope] of asks) {
      const l = scope === "account" ? links : undefined;
      const mixed = await answer(q(raw, scope), readsOf(cells, day, l, hoursBefore));
      const cellsOnly = await answer(q(raw, scope), readsOf(cells, 0, l));
      expect(mixed).toEqual(cellsOnly);
      expect(mixed.totals.clicks).toBeGreaterThan(0);
    }
  });

  test("the span settled totals answer: whole days, then the hour-settled hours; cells before and after", () => {
    const t = (s: string) => Date.parse(s);
    const state = { settledBefore: day, settledHoursBefore: hoursBefore };
    const iso = (x: { from: number; days: number; to: number; partialDay: boolean }) => [...[x.from, x.days, x.to].map((v) => new Date(v).toISOString().slice(5, 16)), x.partialDay];
    expect(iso(settledSpan(t("2026-11-22T05:00:00Z"), t("2026-11-24T20:00:00Z"), state))).toEqual(["11-23T00:00", "11-24T00:00", "11-24T14:00", true]);
    expect(iso(settledSpan(t("2026-11-24T03:00:00Z"), t("2026-11-24T20:00:00Z"), state))).toEqual(["11-24T03:00", "11-24T03:00", "11-24T14:00", false]);
    expect(iso(settledSpan(t("2026-11-23T05:00:00Z"), t("2026-11-24T10:00:00Z"), state))).toEqual(["11-24T00:00", "11-24T00:00", "11-24T10:00", false]);
    // A range ending before the settled days' end: no hours; one starting after the settled hours: nothing settled.
    expect(iso(settledSpan(t("2026-11-20T00:00:00Z"), t("2026-11-23T12:00:00Z"), state))).toEqual(["11-20T00:00", "11-23T00:00", "11-23T00:00", false]);
    const after = settledSpan(t("2026-11-24T15:00:00Z"), t("2026-11-24T20:00:00Z"), state);
    expect(after.to).toBe(after.from);
  });
});

/** The raw click log's rows (shared/adapters/click-log.ts): grouping per (batch, link), rollup cells, and the row format. */
import { describe, expect, test } from "bun:test";
import { clickLogRows, parseClickLogRow, sumCells } from "../../shared/adapters/click-log.ts";
import type { StoredClick } from "../../shared/ports.ts";

const HOUR = 3_600_000;
const T = Date.UTC(2030, 0, 1, 12);
const c = (batch: string, linkId: string, over: Partial<StoredClick> = {}): StoredClick => ({
  batch, linkId, ts: T, country: "US", device: "desktop", browser: "Chrome", os: "Windows", referrer: null, variant: null, ...over,
});

describe("clickLogRows", () => {
  const cases: { name: string; clicks: StoredClick[]; rows: { linkId: string; batch: string; clicks: number; firstTs: number; lastTs: number; cells: number[] }[] }[] = [
    { name: "nothing", clicks: [], rows: [] },
    {
      name: "one batch of one link, one cell",
      clicks: [c("b", "L"), c("b", "L", { ts: T + 5 })],
      rows: [{ linkId: "L", batch: "b", clicks: 2, firstTs: T, lastTs: T + 5, cells: [2] }],
    },
    {
      name: "a batch with two links is two rows, in the order first seen",
      clicks: [c("b", "L2"), c("b", "L1"), c("b", "L2")],
      rows: [
        { linkId: "L2", batch: "b", clicks: 2, firstTs: T, lastTs: T, cells: [2] },
        { linkId: "L1", batch: "b", clicks: 1, firstTs: T, lastTs: T, cells: [1] },
      ],
    },
    {
      name: "two batches of one link are two rows",
      clicks: [c("b1", "L"), c("b2", "L"), c("b1", "L")],
      rows: [
        { linkId: "L", batch: "b1", clicks: 2, firstTs: T, lastTs: T, cells: [2] },
        { linkId: "L", batch: "b2", clicks: 1, firstTs: T, lastTs: T, cells: [1] },
      ],
    },
    {
      name: "cells split by hour, device, browser, country and variant; clicks out of time order",
      clicks: [
        c("b", "L", { ts: T + HOUR }),
        c("b", "L"),
        c("b", "L", { device: "mobile" }),
        c("b", "L", { browser: "Safari" }),
        c("b", "L", { country: null }),
        c("b", "L", { variant: 0 }),
        c("b", "L", { ts: T + 10, os: "Linux", referrer: "https://r.example" }), // os and referrer are not rollup keys
      ],
      rows: [{ linkId: "L", batch: "b", clicks: 7, firstTs: T, lastTs: T + HOUR, cells: [1, 2, 1, 1, 1, 1] }],
    },
  ];
  for (const k of cases) {
    test(k.name, () => {
      const rows = clickLogRows(k.clicks);
      expect(rows.map((r) => ({ linkId: r.linkId, batch: r.batch, clicks: r.clicks, firstTs: r.firstTs, lastTs: r.lastTs, cells: r.cells.map((x) => x.clicks) }))).toEqual(k.rows);
    });
  }

  test("an unknown country and no variant become the rollup keys '' and -1", () => {
    const [row] = clickLogRows([c("b", "L", { country: null, variant: null })]);
    expect(row!.cells).toEqual([{ hour: T, device: "desktop", browser: "Chrome", country: "", variant: -1, clicks: 1 }]);
  });

  test("rows read back as the clicks they were made of, every field and the order kept", () => {
    const clicks = [
      c("b", "L", { ts: T + 9, referrer: "https://r.example/?q=\"x\"&y=é", variant: 3, os: "iOS" }),
      c("b", "L", { ts: T + 1, country: null, referrer: null }),
    ];
    const [row] = clickLogRows(clicks);
    expect(parseClickLogRow("L", "b", row!.data)).toEqual(clicks);
  });
});

describe("sumCells", () => {
  test("adds the same cell across rows of a link, keeps links and cells apart", () => {
    const rows = clickLogRows([c("b1", "L"), c("b2", "L"), c("b2", "L", { device: "mobile" }), c("b1", "M")]);
    const sums = sumCells(rows).map((s) => [s.linkId, s.cell.device, s.cell.clicks]);
    expect(sums).toEqual([["L", "desktop", 2], ["L", "mobile", 1], ["M", "desktop", 1]]);
  });
});

describe("parseClickLogRow refuses what is not a log row", () => {
  const good = { ts: [T], country: [null], device: ["desktop"], browser: ["Chrome"], os: ["Linux"], referrer: [null], variant: [null] };
  const cases: [string, string][] = [
    ["not JSON", "{"],
    ["not an object", "[]"],
    ["a column missing", JSON.stringify({ ...good, os: undefined })],
    ["columns of different lengths", JSON.stringify({ ...good, device: ["desktop", "mobile"] })],
    ["a time that is no number", JSON.stringify({ ...good, ts: ["x"] })],
    ["a negative variant", JSON.stringify({ ...good, variant: [-1] })],
    ["a null device", JSON.stringify({ ...good, device: [null] })],
  ];
  for (const [name, data] of cases) {
    test(name, () => expect(() => parseClickLogRow("L", "b", data)).toThrow());
  }
  test("an empty row is no clicks", () => {
    expect(parseClickLogRow("L", "b", JSON.stringify({ ts: [], country: [], device: [], browser: [], os: [], referrer: [], variant: [] }))).toEqual([]);
  });
});

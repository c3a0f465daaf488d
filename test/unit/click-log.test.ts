/** The raw click log's rows and the sums written beside them (shared/adapters/click-log.ts). */
import { describe, expect, test } from "bun:test";
import {
  settledKey,
  byBatch, clickLogRow, parseClickLogRow, settledRows, sumCells,
} from "../../shared/adapters/click-log.ts";
import { DIMENSION_NAMES, encodeDims, type ClickDims } from "../../shared/clicks/dimensions.ts";
import type { StoredClick } from "../../shared/ports.ts";

const HOUR = 3_600_000;
const T = Date.UTC(2030, 0, 1, 12);
const NONE = Object.fromEntries(DIMENSION_NAMES.map((d) => [d, null])) as ClickDims;
const c = (batch: string, linkId: string, over: Partial<StoredClick> = {}, dims: Partial<ClickDims> = {}): StoredClick => ({
  batch, linkId, ts: T, dims: { ...NONE, country: "US", device: "desktop", ...dims }, bot: false, firstVisit: false, referrerUrl: null, ...over,
});

describe("byBatch and clickLogRow", () => {
  test("a call's clicks are grouped by batch in the order first seen; a row holds every link of its batch", () => {
    const clicks = [c("b2", "L"), c("b1", "M", { ts: T + 9 }), c("b2", "M", { ts: T - 5 }), c("b1", "L")];
    const groups = byBatch(clicks);
    expect([...groups.keys()]).toEqual(["b2", "b1"]);
    const row = clickLogRow("b2", groups.get("b2")!);
    expect({ ...row, data: undefined }).toEqual({ batch: "b2", firstTs: T - 5, lastTs: T, clicks: 2, data: undefined });
    expect(JSON.parse(row.data).links).toEqual(["L", "M"]);
  });

  test("a row reads back as the clicks it was made of, every field included; scope and range filter them", () => {
    const clicks = [
      c("b", "L", { firstVisit: true, referrerUrl: `https://r.example/?a="1",b\n` }, { city: "Zürich, \"old\" town", via: "qr" }),
      c("b", "M", { bot: true, ts: T + HOUR }, { country: null, variant: "2" }),
      c("b", "L", { ts: T + 2 * HOUR }),
    ];
    const row = clickLogRow("b", clicks);
    expect(parseClickLogRow("b", row.data, new Set(["L", "M"]))).toEqual(clicks);
    expect(parseClickLogRow("b", row.data, new Set(["M"]))).toEqual([clicks[1]!]);
    expect(parseClickLogRow("b", row.data, new Set(["L"]), T + 1, T + 2 * HOUR + 1)).toEqual([clicks[2]!]);
  });
});

describe("the log row's runs", () => {
  test("a busy link's batch is written as runs and reads back click for click", () => {
    const clicks = Array.from({ length: 1_000 }, (_, i) =>
      c("b", i < 600 ? "L" : "M", { ts: T + Math.floor(i / 100), firstVisit: i === 0 }, i % 500 === 499 ? { device: "mobile" } : {}));
    const row = clickLogRow("b", clicks);
    const data = JSON.parse(row.data);
    expect(data.link).toEqual({ runs: [0, 600, 1, 400] });
    expect(data.dims.device).toEqual({ runs: ["desktop", 499, "mobile", 1, "desktop", 499, "mobile", 1] });
    expect(data.dims.city).toEqual({ runs: [null, 1_000] });
    expect(row.data.length).toBeLessThan(1_000); // 86 bytes a click as plain columns
    expect(parseClickLogRow("b", row.data, new Set(["L", "M"]))).toEqual(clicks);
  });

  test("a column whose values mostly differ stays a plain array", () => {
    const clicks = Array.from({ length: 10 }, (_, i) => c("b", "L", { ts: T + i }, { city: `C${i}` }));
    const data = JSON.parse(clickLogRow("b", clicks).data);
    expect(data.dt).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(data.dims.city).toHaveLength(10);
    expect(parseClickLogRow("b", clickLogRow("b", clicks).data, new Set(["L"]))).toEqual(clicks);
  });
});

describe("sumCells and settledRows", () => {
  test("clicks are summed per link, hour, dimensions and bot flag, in key order; visitors count first visits", () => {
    const cells = sumCells([
      c("b", "L", { firstVisit: true }), c("b", "L"), c("b", "L", { bot: true }), c("b", "L", { ts: T + HOUR }),
      c("b", "L", {}, { device: "mobile" }), c("b", "M"), c("b", "L", { firstVisit: true }),
    ]);
    const key = encodeDims({ ...NONE, country: "US", device: "desktop" });
    expect(cells.map((x) => [x.linkId, x.hour - T, x.dims === key, x.bot, x.clicks, x.visitors])).toEqual([
      ["L", 0, true, false, 3, 2], ["L", 0, false, false, 1, 0], ["L", 0, true, true, 1, 0], ["L", HOUR, true, false, 1, 0],
      ["M", 0, true, false, 1, 0],
    ]);
  });

  test("settled rows: per day and dimension value ('' for null), and per hour with dimension ''", () => {
    const cells = sumCells([c("b", "L", { firstVisit: true }), c("b", "L", { ts: T + HOUR }, { country: null })]);
    const rows = settledRows(cells);
    const day = Date.UTC(2030, 0, 1);
    const find = (dimension: string, bucket: number, value: string) =>
      rows.filter((r) => r.dimension === dimension && r.bucket === bucket && r.value === value).map((r) => [r.clicks, r.visitors]);
    expect(find("", T, "")).toEqual([[1, 1]]);
    expect(find("", T + HOUR, "")).toEqual([[1, 0]]);
    expect(find("country", day, "US")).toEqual([[1, 1]]);
    expect(find("country", day, "")).toEqual([[1, 0]]);
    expect(find("device", day, "desktop")).toEqual([[2, 1]]);
    // Each day row is also added to its ISO week's (from Monday 2029-12-31) and calendar month's row.
    expect(find(settledKey("country", "week"), Date.UTC(2029, 11, 31), "US")).toEqual([[1, 1]]);
    expect(find(settledKey("device", "month"), day, "desktop")).toEqual([[2, 1]]);
    const dayRows = 2 + (DIMENSION_NAMES.length - 1);
    expect(rows).toHaveLength(2 + dayRows * 3);
  });
});

describe("parseClickLogRow", () => {
  test("rows moved from the per-link log (no link, bot or first-visit columns; a numeric variant) read with defaults", () => {
    const data = JSON.stringify({ links: ["L"], ts: [T], referrerUrl: ["https://x/"], dims: { country: ["DE"], variant: [1], device: ["mobile"] } });
    expect(parseClickLogRow("old:L", data, new Set(["L"]))).toEqual([
      { batch: "old:L", linkId: "L", ts: T, dims: { ...NONE, country: "DE", device: "mobile", variant: "1" }, bot: false, firstVisit: false, referrerUrl: "https://x/" },
    ]);
  });

  const bad: [string, unknown][] = [
    ["not an object", 5],
    ["no links", { ts: [1] }],
    ["a link index out of range", { links: ["L"], link: [1], ts: [1] }],
    ["columns of different lengths", { links: ["L"], ts: [1, 2], bot: [0] }],
    ["a flag that is not 0 or 1", { links: ["L"], ts: [1], bot: [2] }],
    ["an object as a dimension value", { links: ["L"], ts: [1], dims: { country: [{}] } }],
    ["runs adding up to more clicks than the row has", { n: 2, links: ["L"], t0: 1, dt: { runs: [0, 3] } }],
    ["runs adding up to fewer", { n: 2, links: ["L"], t0: 1, dt: [0, 0], bot: { runs: [0, 1] } }],
    ["a run of no clicks", { n: 1, links: ["L"], t0: 1, dt: { runs: [0, 1, 5, 0] } }],
    ["no first time", { n: 1, links: ["L"], dt: [0] }],
  ];
  for (const [name, data] of bad) {
    test(`refuses ${name}`, () => expect(() => parseClickLogRow("b", JSON.stringify(data), new Set(["L"]))).toThrow());
  }
});

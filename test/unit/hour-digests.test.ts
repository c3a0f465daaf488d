/** Hour digests' pure parts (shared/adapters/hour-digests.ts): a fold's rows from cells, and which link-hours are due. */
import { describe, expect, test } from "bun:test";
import { DIMENSION_NAMES, encodeDims, type ClickDims } from "../../shared/clicks/dimensions.ts";
import { BusyHours, DIGESTED, digestRows, DigestSums } from "../../shared/adapters/hour-digests.ts";

const dims = (over: Partial<ClickDims>): string => encodeDims({ ...(Object.fromEntries(DIMENSION_NAMES.map((d) => [d, null])) as ClickDims), ...over });
const rowsOf = (rows: ReturnType<typeof digestRows>, dimension: string) =>
  rows.filter((r) => r.dimension === dimension).map((r) => [r.value, r.bot, r.clicks, r.visitors]).sort();

describe("digestRows", () => {
  test("sums the cells per digested dimension, value and bot flag; unknown values as ''; others not kept", () => {
    const rows = digestRows([
      { dims: dims({ country: "DE", via: "qr", city: "Köln" }), bot: false, clicks: 3, visitors: 2 },
      { dims: dims({ country: "DE", via: "link" }), bot: false, clicks: 1, visitors: 1 },
      { dims: dims({ country: "DE", via: "link" }), bot: true, clicks: 5, visitors: 0 },
      { dims: dims({ via: "link" }), bot: false, clicks: 2, visitors: 0 },
    ]);
    expect(rowsOf(rows, "country")).toEqual([["", false, 2, 0], ["DE", false, 4, 3], ["DE", true, 5, 0]]);
    expect(rowsOf(rows, "city")).toEqual([]); // a dimension of many values (DimensionSpec.digested false)
    expect(DIGESTED).toContain("country");
    expect(DIGESTED).not.toContain("city");
    expect(rowsOf(rows, "via")).toEqual([["link", false, 3, 1], ["link", true, 5, 0], ["qr", false, 3, 2]]);
    // Every digested dimension sums to the cells' clicks.
    for (const d of DIGESTED) expect(rows.filter((r) => r.dimension === d).reduce((n, r) => n + r.clicks, 0)).toBe(11);
  });

  test("a key written before the last dimensions existed reads them as unknown", () => {
    const short = dims({ country: "FR" }).split("\u0001").slice(0, 3).join("\u0001");
    const rows = digestRows([{ dims: short, bot: false, clicks: 2, visitors: 1 }]);
    expect(rows).toHaveLength(DIGESTED.length);
    expect(rowsOf(rows, "country")).toEqual([["FR", false, 2, 1]]);
    expect(rowsOf(rows, "via")).toEqual([["", false, 2, 1]]);
  });
});

describe("BusyHours", () => {
  test("takes the link-hours with enough cells since their last fold, once; forgets settled hours", () => {
    const busy = new BusyHours();
    for (let i = 0; i < 70; i++) busy.note("a", 10);
    busy.note("a", 11, 64);
    busy.note("b", 10, 63);
    busy.note("c", 9, 500);
    expect(busy.take(64, 10).sort((x, y) => x.hour - y.hour)).toEqual([{ linkId: "a", hour: 10 }, { linkId: "a", hour: 11 }]);
    expect(busy.take(64, 10)).toEqual([]); // counted again from 0
    busy.note("b", 10);
    expect(busy.take(64, 10)).toEqual([{ linkId: "b", hour: 10 }]);
    expect(busy.take(1, 0)).toEqual([]); // c's hour 9 was forgotten when hour 10 was the first not settled
  });

  test("counts at most maxTracked link-hours at once; those counted go on counting", () => {
    const busy = new BusyHours(2);
    busy.note("a", 10);
    busy.note("b", 10);
    busy.note("c", 10, 500); // a third: not counted
    busy.note("a", 10, 300);
    expect(busy.take(256, 10)).toEqual([{ linkId: "a", hour: 10 }]);
    busy.note("c", 10, 500); // a's place is free again
    expect(busy.take(256, 10)).toEqual([{ linkId: "c", hour: 10 }]);
    busy.note("d", 11, 300);
    expect(busy.take(256, 11)).toEqual([{ linkId: "d", hour: 11 }]); // hour 10 (b) forgotten, its place freed
    busy.note("e", 11, 300);
    busy.note("f", 11, 300);
    expect(busy.take(256, 11).map((x) => x.linkId).sort()).toEqual(["e", "f"]);
  });
});

describe("DigestSums.addSet", () => {
  test("reads a cell set's text as the cells it holds", () => {
    const a = dims({ country: "DE", via: "qr" }), b = dims({ via: "link" });
    const fromSet = new DigestSums();
    fromSet.addSet([`3\u00022\u00020\u0002${a}`, `5\u00020\u00021\u0002${b}`, `1\u00021\u00020\u0002${b}`].join("\u0003"));
    const fromCells = digestRows([
      { dims: a, bot: false, clicks: 3, visitors: 2 }, { dims: b, bot: true, clicks: 5, visitors: 0 }, { dims: b, bot: false, clicks: 1, visitors: 1 },
    ]);
    expect(fromSet.rows()).toEqual(fromCells);
    expect(rowsOf(fromCells, "country")).toEqual([["", false, 1, 1], ["", true, 5, 0], ["DE", false, 3, 2]]);
  });
});

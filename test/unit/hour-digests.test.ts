/** Hour digests' pure parts (shared/adapters/hour-digests.ts): a fold's rows from cells, and which link-hours are due. */
import { describe, expect, test } from "bun:test";
import { DIMENSION_NAMES, encodeDims, type ClickDims } from "../../shared/clicks/dimensions.ts";
import { BusyHours, DIGESTED, DigestSums, type DigestRow } from "../../shared/adapters/hour-digests.ts";
import { cellSets, eachSetCell } from "../../shared/adapters/postgres/cell-sets.ts";
import type { StoredClick } from "../../shared/ports.ts";

/** The digest rows of some cells (a fold's sums). */
function digestRows(cells: { dims: string; bot: boolean; clicks: number; visitors: number }[]): DigestRow[] {
  const sums = new DigestSums();
  for (const c of cells) sums.add(c.dims, c.bot, c.clicks, c.visitors);
  return sums.rows();
}

const dims = (over: Partial<ClickDims>): string => encodeDims({ ...(Object.fromEntries(DIMENSION_NAMES.map((d) => [d, null])) as ClickDims), ...over });
const rowsOf = (rows: ReturnType<typeof digestRows>, dimension: string) =>
  rows.filter((r) => r.dimension === dimension).map((r) => [r.value, r.bot, r.clicks, r.visitors]).sort();

describe("DigestSums", () => {
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

describe("eachSetCell", () => {
  test("reads back the cells cellSets wrote into a set's text, so a fold sums them as the cells themselves", () => {
    const de = { ...(Object.fromEntries(DIMENSION_NAMES.map((d) => [d, null])) as ClickDims), country: "DE", via: "qr" };
    const none = Object.fromEntries(DIMENSION_NAMES.map((d) => [d, null])) as ClickDims;
    const click = (dims: ClickDims, bot: boolean, firstVisit: boolean): StoredClick => ({ batch: "b", linkId: "l", ts: 0, dims, bot, firstVisit, referrerUrl: null });
    const { sets } = cellSets([click(de, false, true), click(de, false, true), click(de, false, false), click(none, true, false), click(none, false, true)]);
    expect(sets).toHaveLength(1);
    const read: [string, boolean, number, number][] = [];
    eachSetCell(sets[0]!.cells, (dims, bot, clicks, visitors) => read.push([dims, bot, clicks, visitors]));
    expect(read.sort()).toEqual([[dims(de), false, 3, 2], [dims(none), false, 1, 1], [dims(none), true, 1, 0]].sort() as typeof read);
    const fromSet = new DigestSums();
    eachSetCell(sets[0]!.cells, (d, bot, c, v) => fromSet.add(d, bot, c, v));
    const byKey = (rows: DigestRow[]) => rows.map((r) => JSON.stringify(r)).sort();
    expect(byKey(fromSet.rows())).toEqual(byKey(digestRows(read.map(([d, bot, clicks, visitors]) => ({ dims: d, bot, clicks, visitors })))));
    expect(rowsOf(fromSet.rows(), "country")).toEqual([["", false, 1, 1], ["", true, 1, 0], ["DE", false, 3, 2]]);
  });
});

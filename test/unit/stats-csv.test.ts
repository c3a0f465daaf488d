/** CSV export pieces: RFC 4180 quoting with hostile values, formula neutralising, and the pulled stream. */
import { describe, expect, test } from "bun:test";
import { DIMENSION_NAMES, type ClickDims } from "../../shared/clicks/dimensions.ts";
import type { StoredClick } from "../../shared/ports/clicks.ts";
import { clicksCsvStream, CSV_HEADER, csvField } from "../../control/stats/csv.ts";
import { parseCsv } from "../app/stats-helpers.ts";

const HOSTILE = ['he said "hi"', "a,b", "line\nbreak", "cr\rhere", "=cmd|' /C calc'!A0", "+1", "-2+3", "@SUM(A1)", "\t=x", "plain"];

describe("csvField", () => {
  test("quotes fields with a comma, quote, CR or LF, doubling quotes; leaves others alone", () => {
    expect(csvField('he said "hi"')).toBe('"he said ""hi"""');
    expect(csvField("a,b")).toBe('"a,b"');
    expect(csvField("line\nbreak")).toBe('"line\nbreak"');
    expect(csvField("plain")).toBe("plain");
    expect(csvField(null)).toBe("");
  });

  test("a field a spreadsheet would run as a formula gets a leading apostrophe", () => {
    expect(csvField("=1+1")).toBe("'=1+1");
    expect(csvField("=HYPERLINK(\"x\",\"y\")")).toBe("\"'=HYPERLINK(\"\"x\"\",\"\"y\"\")\"");
    for (const v of ["+1", "-1", "@x", "\tx"]) expect(csvField(v)).toBe(`'${v}`);
  });
});

describe("clicksCsvStream", () => {
  const dims = Object.fromEntries(DIMENSION_NAMES.map((d) => [d, null])) as ClickDims;
  const click = (i: number, referrerUrl: string | null, linkId = "L1"): StoredClick => ({
    batch: "b", linkId, ts: Date.UTC(2026, 10, 24, 10, 0, i), dims: { ...dims, country: "DE", city: HOSTILE[i % HOSTILE.length]! }, bot: i % 2 === 1, firstVisit: true, referrerUrl,
  });

  test("header, then a row per click of a known link, each reading back as written (hostile values included)", async () => {
    async function* clicks() {
      for (let i = 0; i < 1_234; i++) yield click(i, `https://evil.test/?q=${HOSTILE[i % HOSTILE.length]}`, i === 7 ? "unknown" : "L1");
    }
    const rows = parseCsv(await new Response(clicksCsvStream(clicks(), (id) => (id === "L1" ? "spring" : undefined))).text());
    expect(rows[0]).toEqual(CSV_HEADER);
    expect(rows).toHaveLength(1 + 1_233);
    const city = CSV_HEADER.indexOf("City");
    expect(rows[1]).toEqual(["2026-11-24T10:00:00.000Z", "spring", "DE", "", HOSTILE[0]!, "", "", "", "", "", "", "", "false", 'https://evil.test/?q=he said "hi"']);
    const readBack = rows.slice(1).map((r) => r[city]);
    expect(new Set(readBack)).toEqual(new Set(HOSTILE.map((v) => (/^[=+\-@\t]/.test(v) ? `'${v}` : v))));
  });

  test("pulls as it is read: reading two chunks of an endless source takes at most one chunk more, and cancelling closes the source", async () => {
    let produced = 0;
    let closed = false;
    async function* endless() {
      try {
        for (;;) yield (produced++, click(produced, null));
      } finally {
        closed = true;
      }
    }
    const reader = clicksCsvStream(endless(), () => "s").getReader();
    await reader.read(); // the header
    const rows = new TextDecoder().decode((await reader.read()).value).split("\r\n").length - 1;
    expect(rows).toBeGreaterThan(0);
    expect(produced).toBeLessThanOrEqual(3 * rows + 1); // the chunks read and at most one more queued
    await reader.cancel();
    expect(closed).toBe(true);
  });

  test("an empty range is the header alone", async () => {
    async function* none(): AsyncIterable<StoredClick> {}
    expect(await new Response(clicksCsvStream(none(), () => "x")).text()).toBe(`${CSV_HEADER.join(",")}\r\n`);
  });
});

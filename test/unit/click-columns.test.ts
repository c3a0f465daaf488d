/** The compact forms of click batches (server thread → embedded writer thread, Redis stream bodies) lose nothing. */
import { describe, expect, test } from "bun:test";
import { clicksFromJson, clicksToJson, packClicks, unpackClicks } from "../../shared/clicks/columns.ts";
import type { ClickEvent } from "../../shared/ports.ts";

const base: ClickEvent = { id: "a-1", linkId: "L1", ts: 1_893_499_200_123, ua: "Mozilla/5.0", ip: "8.8.8.8", country: null, referrer: null, variant: null };

const cases: [string, ClickEvent[]][] = [
  ["an empty batch", []],
  ["one click with every nullable field null", [base]],
  ["every field set, variant 0", [{ ...base, country: "DE", referrer: "https://ref.example/", variant: 0, ip: null }]],
  [
    "repeated strings across clicks and fields (one string table entry each)",
    [base, { ...base, id: "a-2", variant: 3 }, { ...base, id: "a-3", linkId: "L2", referrer: "Mozilla/5.0", ua: "" }],
  ],
  ["unicode and an empty User-Agent", [{ ...base, ua: "", referrer: "https://exämple.com/ü?q=✓" }]],
];

describe("packClicks / unpackClicks (the writer thread hop)", () => {
  test.each(cases)("round-trips %s through a real structured clone", (_name, events) => {
    const { packed, transfer } = packClicks(events);
    expect(transfer.length).toBe(3);
    expect(typeof packed.text).toBe("string");
    expect(unpackClicks(structuredClone(packed, { transfer }))).toEqual(events);
  });

  test("keeps strings apart whatever they contain (lengths, not separators)", () => {
    const odd = [{ ...base, id: "x", ua: "a\nb\u0000c", referrer: "" }, { ...base, id: "", ua: "\n", referrer: "𝒳" }];
    expect(unpackClicks(packClicks(odd).packed)).toEqual(odd);
  });
});

describe("clicksToJson / clicksFromJson (Redis stream entry bodies)", () => {
  test.each(cases.filter(([, events]) => events.length > 0))("round-trips %s", (_name, events) => {
    expect(clicksFromJson(JSON.parse(clicksToJson(events)))).toEqual(events);
  });

  const good = () => JSON.parse(clicksToJson([base, { ...base, id: "a-2", variant: 1 }]));
  const broken: [string, (b: any) => unknown][] = [
    ["not an object", () => "text"],
    ["null", () => null],
    ["another version", (b) => ({ ...b, v: 3 })],
    ["ids not strings", (b) => ({ ...b, ids: [1, 2] })],
    ["ts shorter than ids", (b) => ({ ...b, ts: [1] })],
    ["ts not numbers", (b) => ({ ...b, ts: ["x", "y"] })],
    ["fields of the wrong length", (b) => ({ ...b, f: b.f.slice(1) })],
    ["a fractional field", (b) => ({ ...b, f: [0.5, ...b.f.slice(1)] })],
    ["a string index past the table", (b) => ({ ...b, f: [99, ...b.f.slice(1)] })],
    ["a missing link id", (b) => ({ ...b, f: [-1, ...b.f.slice(1)] })],
    ["a variant below -1", (b) => ({ ...b, f: [...b.f.slice(0, 5), -2, ...b.f.slice(6)] })],
    ["strings not strings", (b) => ({ ...b, s: [1, 2, 3] })],
  ];
  test.each(broken)("refuses a body with %s (undefined, never a throw)", (_name, mangle) => {
    expect(clicksFromJson(mangle(good()))).toBeUndefined();
  });

  test("is several times smaller than the events as JSON when User-Agents repeat", () => {
    const ua = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
    const events = Array.from({ length: 256 }, (_, i) => ({ ...base, id: `abc-${i.toString(36)}`, ua, ts: base.ts + i }));
    expect(clicksToJson(events).length * 3).toBeLessThan(JSON.stringify(events).length);
  });
});

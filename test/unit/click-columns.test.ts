/** The compact forms of click batches (server thread → embedded writer thread, Redis stream bodies) lose nothing. */
import { describe, expect, test } from "bun:test";
import { clicksFromJson, clicksToJson, packClicks, unpackClicks } from "../../shared/clicks/columns.ts";
import type { ClickEvent } from "../../shared/ports.ts";

const base: ClickEvent = { id: "a-1", linkId: "L1", ts: 1_893_499_200_123, ua: "Mozilla/5.0", ip: "8.8.8.8", country: null, referrer: null, variant: null, rule: null, qr: false };

const cases: [string, ClickEvent[]][] = [
  ["an empty batch", []],
  ["one click with every nullable field null", [base]],
  ["every field set, variant 0", [{ ...base, country: "DE", referrer: "https://ref.example/", variant: 0, ip: null }]],
  ["a matched rule and a QR code's click beside a plain one", [{ ...base, rule: 0, qr: true }, { ...base, id: "a-2", rule: 7 }, base]],
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

  test("a field equal to the click before's is sent once and read back as that click's string", () => {
    const run = [
      base, { ...base, id: "a-2" }, { ...base, id: "a-3", ip: null }, { ...base, id: "a-4", ip: "8.8.8.8", referrer: "r" }, { ...base, id: "a-5", referrer: "r" },
      { ...base, id: "", ua: "" }, { ...base, id: "", ua: "" },
    ];
    const { packed } = packClicks(run.map((e) => ({ ...e, ua: `${e.ua}` })));
    // A run's string is sent once; "8.8.8.8" twice, a null between; the empty strings take no text.
    expect(packed.text).toBe("a-1L1Mozilla/5.08.8.8.8a-2a-3a-48.8.8.8ra-5");
    const back = unpackClicks(packed);
    expect(back).toEqual(run);
    expect(back[1]!.ua).toBe(back[0]!.ua);
  });
});

describe("clicksToJson / clicksFromJson (Redis stream entry bodies)", () => {
  /** Read back, a click's id is its place in the entry (the entry is the batch); every other field is kept. */
  // Ids are not kept: the queue names a click by its entry and place (LazyQueuedClick) when asked.
  const asRead = (events: ClickEvent[]) => events.map((e) => ({ ...e, id: "" }));

  test.each(cases.filter(([, events]) => events.length > 0))("round-trips %s", (_name, events) => {
    expect(clicksFromJson(JSON.parse(clicksToJson(events)))).toEqual(asRead(events));
  });

  test("times before the first click's and fractional ms survive (offsets from the first)", () => {
    const events = [{ ...base, ts: 1_893_499_200_500 }, { ...base, ts: 1_893_499_200_100 }, { ...base, ts: 1_893_499_200_100.25 }];
    expect(clicksFromJson(JSON.parse(clicksToJson(events)))!.map((e) => e.ts)).toEqual(events.map((e) => e.ts));
  });

  /** Version 3, as redirectors before rules and QR codes were recorded wrote it: still read (no rule, not via QR). */
  const v3 = () => ({ v: 3, t0: base.ts, dt: [0, 5], f: [0, 1, 2, -1, -1, -1, 0, 1, 2, -1, -1, 1], s: ["L1", "Mozilla/5.0", "8.8.8.8"] });
  test("reads version 3 bodies: no rule, not via a QR code", () => {
    expect(clicksFromJson(v3())).toEqual(asRead([base, { ...base, ts: base.ts + 5, variant: 1 }]));
  });

  /** Version 2, as redirectors before version 3 wrote it: still read, so a rolling deploy loses nothing. */
  const v2 = () => ({ v: 2, ids: ["a-1", "a-2"], ts: [base.ts, base.ts + 1], f: [0, 1, 2, -1, -1, -1, 0, 1, 2, -1, -1, 1], s: ["L1", "Mozilla/5.0", "8.8.8.8"] });
  test("reads version 2 bodies, with their times", () => {
    expect(clicksFromJson(v2())).toEqual(asRead([base, { ...base, ts: base.ts + 1, variant: 1 }]));
  });

  const good = () => JSON.parse(clicksToJson([base, { ...base, id: "a-2", variant: 1 }]));
  const broken: [string, () => unknown][] = [
    ["not an object", () => "text"],
    ["null", () => null],
    ["another version", () => ({ ...good(), v: 5 })],
    ["version 3 with version 4's columns", () => ({ ...good(), v: 3 })],
    ["no t0", () => ({ ...good(), t0: undefined })],
    ["offsets not numbers", () => ({ ...good(), dt: ["x", 0] })],
    ["fields of the wrong length", () => { const b = good(); return { ...b, f: b.f.slice(1) }; }],
    ["a fractional field", () => { const b = good(); return { ...b, f: [0.5, ...b.f.slice(1)] }; }],
    ["a string index past the table", () => { const b = good(); return { ...b, f: [99, ...b.f.slice(1)] }; }],
    ["a missing link id", () => { const b = good(); return { ...b, f: [-1, ...b.f.slice(1)] }; }],
    ["a variant below -1", () => { const b = good(); return { ...b, f: [...b.f.slice(0, 5), -2, ...b.f.slice(6)] }; }],
    ["a rule below -1", () => { const b = good(); return { ...b, f: [...b.f.slice(0, 6), -2, ...b.f.slice(7)] }; }],
    ["a QR flag other than 0 or 1", () => { const b = good(); return { ...b, f: [...b.f.slice(0, 7), 2, ...b.f.slice(8)] }; }],
    ["strings not strings", () => ({ ...good(), s: [1, 2, 3] })],
    ["version 2: ids not strings", () => ({ ...v2(), ids: [1, 2] })],
    ["version 2: ts shorter than ids", () => ({ ...v2(), ts: [1] })],
    ["version 2: ts not numbers", () => ({ ...v2(), ts: ["x", "y"] })],
  ];
  test.each(broken)("refuses a body with %s (undefined, never a throw)", (_name, body) => {
    expect(clicksFromJson(body())).toBeUndefined();
  });

  test("is several times smaller than the events as JSON when User-Agents repeat, and smaller than version 2", () => {
    const ua = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
    const events = Array.from({ length: 256 }, (_, i) => ({ ...base, id: `abc12345-${i.toString(36)}`, ua, ts: base.ts + i * 7 }));
    const body = clicksToJson(events);
    expect(body.length * 3).toBeLessThan(JSON.stringify(events).length);
    const withIds = { ...JSON.parse(body), v: 2, ids: events.map((e) => e.id), ts: events.map((e) => e.ts), t0: undefined, dt: undefined };
    expect(body.length / JSON.stringify(withIds).length).toBeLessThan(0.7);
  });
});

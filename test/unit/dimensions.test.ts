/** The encoded cell key: values in declaration order, null as empty, and keys written before a dimension existed. */
import { describe, expect, test } from "bun:test";
import { DIMENSION_NAMES, cleanDimValue, decodeDims, dimValueReader, encodeDims, type ClickDims } from "../../shared/clicks/dimensions.ts";

const dims = (over: Partial<ClickDims>): ClickDims => Object.fromEntries(DIMENSION_NAMES.map((d) => [d, over[d] ?? null])) as ClickDims;

describe("cell keys", () => {
  test("round trip with every value and with nulls", () => {
    const full = dims({ country: "DE", region: "DE-BY", city: "München", device: "mobile", browser: "Safari", os: "iOS", referrer: "news.ycombinator.com", variant: "1", rule: "0", via: "qr" });
    expect(decodeDims(encodeDims(full))).toEqual(full);
    expect(decodeDims(encodeDims(dims({})))).toEqual(dims({}));
    expect(encodeDims(dims({ country: "DE" }))).toBe(["DE", ...Array(DIMENSION_NAMES.length - 1).fill("")].join("\u0001"));
  });

  test("a key written before later dimensions existed reads them as null", () => {
    expect(decodeDims("US\u0001\u0001\u0001desktop")).toEqual(dims({ country: "US", device: "desktop" }));
    expect(DIMENSION_NAMES.map((d) => dimValueReader(d)("US\u0001\u0001\u0001desktop"))).toEqual(DIMENSION_NAMES.map((d) => decodeDims("US\u0001\u0001\u0001desktop")[d]));
  });

  test("one dimension's value read out of a key is the decoded key's", () => {
    const full = dims({ country: "DE", region: "DE-BY", city: "München", device: "mobile", browser: "Safari", os: "iOS", referrer: "news.ycombinator.com", variant: "1", rule: "0", via: "qr" });
    for (const key of [encodeDims(full), encodeDims(dims({})), encodeDims(dims({ city: "Köln", via: "link" })), encodeDims(dims({ country: "US" }))]) {
      expect(DIMENSION_NAMES.map((d) => dimValueReader(d)(key))).toEqual(DIMENSION_NAMES.map((d) => decodeDims(key)[d]));
    }
  });

  test("values are cleaned of control characters (the separator among them) and cut to 200", () => {
    expect(cleanDimValue("a\u0001b\nc")).toBe("abc");
    expect(cleanDimValue("\u0001")).toBeNull();
    expect(cleanDimValue("x".repeat(300))).toHaveLength(200);
    expect(cleanDimValue(undefined)).toBeNull();
  });
});

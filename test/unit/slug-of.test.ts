/** slugOf: the redirector's slug parser (no URL object, no regular expression). */
import { describe, expect, test } from "bun:test";
import { slugOf } from "../../redirector/slug.ts";

const B = "http://sho.rt:3000";
const cases: [string, string | null][] = [
  [`${B}/abc`, "abc"],
  [`${B}/A-z_09`, "A-z_09"],
  [`${B}/abc?utm=1`, "abc"],
  [`${B}/abc#frag`, "abc"],
  [`${B}/abc?x#y`, "abc"],
  [`${B}/${"a".repeat(40)}`, "a".repeat(40)],
  [`${B}/${"a".repeat(40)}?q`, "a".repeat(40)],
  [`${B}/${"a".repeat(41)}`, null],
  [`${B}/`, null],
  [`${B}/?q=1`, null],
  [`${B}`, null],
  [`${B}/abc/def`, null],
  [`${B}/abc/`, "abc"],
  [`${B}/abc/?utm=1`, "abc"],
  [`${B}/abc/#frag`, "abc"],
  [`${B}/abc//`, null],
  [`${B}/abc/d/`, null],
  [`${B}//`, null],
  [`${B}/${"a".repeat(40)}/`, "a".repeat(40)],
  [`${B}/${"a".repeat(41)}/`, null],
  [`${B}/ab.c`, null],
  [`${B}/ab%20c`, null],
  [`${B}/caf\u00e9`, null],
  [`${B}/\u0660`, null],
  [`${B}//abc`, null],
  ["https://example.com/x", "x"],
];

describe("slugOf", () => {
  test.each(cases)("%s → %p", (url, slug) => {
    expect(slugOf(url)).toBe(slug);
  });
});

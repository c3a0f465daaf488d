/** Identifiers: shape, uniqueness, and ids that sort by creation time (so indexes keyed by them grow at the end). */
import { describe, expect, test } from "bun:test";
import { isWellFormedApiKey, newApiKey, newId } from "../../shared/ids.ts";

describe("newId", () => {
  test("21 base62 characters, unique", () => {
    const ids = Array.from({ length: 10_000 }, newId);
    for (const id of ids.slice(0, 100)) expect(id).toMatch(/^[0-9A-Za-z]{21}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test("a later id sorts after an earlier one, as text (byte order, as SQLite and a C collation compare)", async () => {
    const first = newId();
    await Bun.sleep(2);
    const second = newId();
    expect(first < second).toBe(true);
    expect(Buffer.compare(Buffer.from(first), Buffer.from(second))).toBe(-1);
  });
});

describe("API keys", () => {
  test("ck_ + 32 base62 + a checksum that catches a typo", () => {
    const key = newApiKey();
    expect(key).toMatch(/^ck_[0-9A-Za-z]{38}$/);
    expect(isWellFormedApiKey(key)).toBe(true);
    const typo = key.slice(0, 10) + (key[10] === "a" ? "b" : "a") + key.slice(11);
    expect(isWellFormedApiKey(typo)).toBe(false);
  });
});

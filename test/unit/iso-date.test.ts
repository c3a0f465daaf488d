/** parseIsoDateTime: what a link's expiresAt and startsAt accept, and the moment each means. */
import { describe, expect, test } from "bun:test";
import { parseIsoDateTime } from "../../shared/time.ts";

const at = (iso: string) => Date.parse(iso);

describe("parseIsoDateTime", () => {
  test.each([
    ["UTC with Z", "2030-01-01T10:00:00Z", at("2030-01-01T10:00:00Z")],
    ["fraction", "2030-01-01T10:00:00.123456Z", at("2030-01-01T10:00:00.123Z")],
    ["positive offset", "2030-01-01T10:00:00+02:00", at("2030-01-01T08:00:00Z")],
    ["negative offset without colon", "2030-01-01T10:00-0530", at("2030-01-01T15:30:00Z")],
    ["no zone: UTC, whatever the server's zone", "2030-01-01T10:00", at("2030-01-01T10:00:00Z")],
    ["a space instead of T, lower-case z", "2030-01-01 10:00:00z", at("2030-01-01T10:00:00Z")],
    ["a bare date: midnight UTC", "2030-01-01", at("2030-01-01T00:00:00Z")],
    ["February 29 of a leap year", "2028-02-29T00:00:00Z", at("2028-02-29T00:00:00Z")],
    ["surrounding spaces", "  2030-01-01T00:00:00Z ", at("2030-01-01T00:00:00Z")],
    ["offset across the date line", "2030-01-01T00:00:00+14:00", at("2029-12-31T10:00:00Z")],
  ])("%s", (_name, input, expected) => {
    expect(parseIsoDateTime(input)).toBe(expected);
  });

  test.each([
    ["February 30", "2030-02-30T00:00:00Z"],
    ["February 29 of a common year", "2030-02-29T00:00:00Z"],
    ["month 13", "2030-13-01T00:00:00Z"],
    ["day 0", "2030-01-00T00:00:00Z"],
    ["hour 24", "2030-01-01T24:00:00Z"],
    ["minute 60", "2030-01-01T10:60:00Z"],
    ["second 60", "2030-01-01T10:00:60Z"],
    ["offset beyond 14 hours", "2030-01-01T10:00:00+15:00"],
    ["offset minutes 60", "2030-01-01T10:00:00+01:60"],
    ["words", "next tuesday"],
    ["epoch number as text", "1893456000000"],
    ["RFC 2822", "Tue, 01 Jan 2030 00:00:00 GMT"],
    ["empty", ""],
    ["one-digit month", "2030-1-01"],
  ])("refused: %s", (_name, input) => {
    expect(parseIsoDateTime(input)).toBeNull();
  });
});

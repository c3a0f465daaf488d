/** parseStatsQuery and the zone arithmetic under it: defaults, every bad parameter's code, DST-correct intervals. */
import { describe, expect, test } from "bun:test";
import { AppError } from "../../shared/errors.ts";
import { parseStatsQuery, type RawQuery, type StatsScope } from "../../control/stats/query.ts";
import { Zone } from "../../control/stats/zone-time.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = Date.parse("2026-11-25T03:20:00Z");

function codeOf(raw: RawQuery, scope: StatsScope = "link"): string {
  try {
    parseStatsQuery(raw, NOW, scope);
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).status).toBe(400);
    return (e as AppError).code;
  }
  throw new Error("parsed without an error");
}

describe("parseStatsQuery defaults", () => {
  test("nothing given: the last 30 days to now, daily, UTC, bots excluded, top 10", () => {
    expect(parseStatsQuery({}, NOW, "link")).toEqual({
      from: NOW - 30 * DAY, to: NOW, interval: "day", tz: "UTC", groupBy: null, filters: {}, bots: "exclude", limit: 10,
    });
  });

  test("interval=hour alone: the last 24 hours; a range of up to 2 days is hourly, longer daily", () => {
    expect(parseStatsQuery({ interval: "hour" }, NOW, "link")).toMatchObject({ from: NOW - DAY, to: NOW, interval: "hour" });
    expect(parseStatsQuery({ from: "2026-11-23T03:20:00Z" }, NOW, "link").interval).toBe("hour");
    expect(parseStatsQuery({ from: "2026-11-23T03:19:59Z" }, NOW, "link").interval).toBe("day");
  });

  test("a date, or a time without an offset, is wall-clock time in tz; an offset or Z is taken as given", () => {
    const q = parseStatsQuery({ from: "2026-03-29", to: "2026-03-30T00:00", tz: "Europe/Berlin" }, NOW, "link");
    expect(q.from).toBe(Date.parse("2026-03-28T23:00:00Z"));
    expect(q.to).toBe(Date.parse("2026-03-29T22:00:00Z"));
    expect(parseStatsQuery({ from: "2026-11-01T09:00:00.5+05:30", to: "2026-11-02T00:00:00Z" }, NOW, "link").from).toBe(Date.parse("2026-11-01T03:30:00.500Z"));
  });

  test("the zone's canonical name is kept; empty parameters count as absent", () => {
    expect(parseStatsQuery({ tz: "asia/kolkata", from: "", bots: "" }, NOW, "link")).toMatchObject({ tz: "Asia/Kolkata", from: NOW - 30 * DAY, bots: "exclude" });
  });

  test("filters: comma means any of, (none) means unknown, country codes in capitals, a repeated parameter adds values", () => {
    const q = parseStatsQuery({ country: "de,FR", referrer: "(none),news.ycombinator.com", device: ["mobile", "tablet"], groupBy: "os", bots: "only", limit: "100" }, NOW, "link");
    expect(q.filters).toEqual({ country: ["DE", "FR"], referrer: [null, "news.ycombinator.com"], device: ["mobile", "tablet"] });
    expect(q).toMatchObject({ groupBy: "os", bots: "only", limit: 100 });
  });

  test("the account scope also groups and filters by link, tag and folder", () => {
    expect(parseStatsQuery({ groupBy: "tag", folder: "(none)", link: "a,b" }, NOW, "account")).toMatchObject({ groupBy: "tag", filters: { folder: [null], link: ["a", "b"] } });
  });
});

describe("parseStatsQuery errors", () => {
  test("invalid_range: unparsable or impossible dates, reversed or empty ranges", () => {
    for (const from of ["yesterday", "2026-13-01", "2026-02-30", "2026-11-01T25:00", "2026-11-01T10:00+25:00", "1764040000000"]) {
      expect(codeOf({ from })).toBe("invalid_range");
    }
    expect(codeOf({ to: "next week" })).toBe("invalid_range");
    expect(codeOf({ from: "2026-11-02", to: "2026-11-01" })).toBe("invalid_range");
    expect(codeOf({ from: "2026-11-01", to: "2026-11-01" })).toBe("invalid_range");
    expect(codeOf({ from: "2026-12-01" })).toBe("invalid_range"); // after now, the default to
  });

  test("too_many_points: more than 1,000 points, an unbounded from included", () => {
    expect(codeOf({ from: "0001-01-01" })).toBe("too_many_points");
    expect(codeOf({ from: "0001-01-01", interval: "month" })).toBe("too_many_points");
    expect(codeOf({ from: "2026-09-01", interval: "hour" })).toBe("too_many_points");
    expect(parseStatsQuery({ from: "2024-03-01", interval: "day" }, NOW, "link").interval).toBe("day"); // 1,000 days
    expect(codeOf({ from: "2024-02-29", interval: "day" })).toBe("too_many_points"); // 1,001
  });

  test("unknown_dimension: a groupBy or filter that is no dimension; link, tag and folder only for the account", () => {
    expect(codeOf({ groupBy: "colour" })).toBe("unknown_dimension");
    expect(codeOf({ colour: "red" })).toBe("unknown_dimension");
    expect(codeOf({ groupBy: "tag" })).toBe("unknown_dimension");
    expect(codeOf({ folder: "x" })).toBe("unknown_dimension");
    expect(codeOf({ groupBy: "Country" }, "account")).toBe("unknown_dimension");
  });

  test("unknown_time_zone: not an IANA zone", () => {
    expect(codeOf({ tz: "Mars/Olympus" })).toBe("unknown_time_zone");
    expect(codeOf({ tz: "CEST+1" })).toBe("unknown_time_zone");
  });

  test("invalid_parameter: interval, bots, limit, a repeated single parameter, empty filter values", () => {
    for (const raw of [{ interval: "year" }, { bots: "no" }, { limit: "0" }, { limit: "101" }, { limit: "1e2" }, { limit: " 5" }, { tz: ["UTC", "UTC"] }, { country: "DE,,FR" }, { country: "x".repeat(201) }]) {
      expect(codeOf(raw as RawQuery)).toBe("invalid_parameter");
    }
  });
});

describe("Zone", () => {
  const starts = (tz: string, interval: "hour" | "day" | "week" | "month", from: string, to: string) => {
    const z = new Zone(tz);
    return z.intervals(interval, Date.parse(from), Date.parse(to))!.map((s) => z.iso(s));
  };

  test("Berlin's spring-forward day has 23 hours, its fall-back day 25", () => {
    expect(starts("Europe/Berlin", "day", "2026-03-28T00:00:00+01:00", "2026-03-31T00:00:00+02:00")).toEqual([
      "2026-03-28T00:00:00+01:00", "2026-03-29T00:00:00+01:00", "2026-03-30T00:00:00+02:00",
    ]);
    expect(starts("Europe/Berlin", "hour", "2026-03-29T00:00:00+01:00", "2026-03-30T00:00:00+02:00")).toHaveLength(23);
    const fallBack = starts("Europe/Berlin", "hour", "2026-10-25T00:00:00+02:00", "2026-10-26T00:00:00+01:00");
    expect(fallBack).toHaveLength(25);
    expect(fallBack.slice(2, 4)).toEqual(["2026-10-25T02:00:00+02:00", "2026-10-25T02:00:00+01:00"]);
  });

  test("weeks start on Monday, months on the 1st, in the zone (New York)", () => {
    expect(starts("America/New_York", "week", "2026-11-25T12:00:00Z", "2026-12-01T00:00:00Z")).toEqual(["2026-11-23T00:00:00-05:00", "2026-11-30T00:00:00-05:00"]);
    expect(starts("America/New_York", "month", "2026-01-15T00:00:00Z", "2026-04-10T00:00:00Z")).toEqual([
      "2026-01-01T00:00:00-05:00", "2026-02-01T00:00:00-05:00", "2026-03-01T00:00:00-05:00", "2026-04-01T00:00:00-04:00",
    ]);
  });

  test("a half-hour zone: Kolkata's days start at 18:30 UTC; its hours are UTC hours, shown at half past", () => {
    expect(starts("Asia/Kolkata", "day", "2026-11-24T20:00:00Z", "2026-11-25T20:00:00Z")).toEqual(["2026-11-25T00:00:00+05:30", "2026-11-26T00:00:00+05:30"]);
    expect(starts("Asia/Kolkata", "hour", "2026-11-25T00:10:00Z", "2026-11-25T01:10:00Z")).toEqual(["2026-11-25T05:30:00+05:30", "2026-11-25T06:30:00+05:30"]);
  });

  test("a day starting in a skipped hour starts at the change (Santiago skips midnight)", () => {
    const z = new Zone("America/Santiago");
    // 2026-09-06: clocks go from 00:00 -04:00 to 01:00 -03:00.
    const day = z.startOf("day", Date.parse("2026-09-06T12:00:00Z"));
    expect(z.iso(day)).toBe("2026-09-06T01:00:00-03:00");
    expect(z.next("day", day) - day).toBe(23 * HOUR);
  });
});

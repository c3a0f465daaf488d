/**
 * The analytics API checks, run by stats-analytics.test.ts over SQLite and stats-analytics-postgres.test.ts over
 * Postgres: clicks written with store.recordClicks, asked through app.handle.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DIMENSION_NAMES, type ClickDims } from "../../shared/clicks/dimensions.ts";
import type { StoredClick } from "../../shared/ports.ts";
import { LinkStats } from "../../shared/schemas.ts";
import { Value } from "@sinclair/typebox/value";
import { CSV_HEADER } from "../../control/stats/csv.ts";
import { Analytics } from "../../control/stats/schemas.ts";
import { BASE_URL, jsonOf, problemOf, type InProcessControlPlane } from "../helpers/in-process.ts";
import { parseCsv } from "./stats-helpers.ts";

export const NOW = Date.UTC(2026, 10, 25, 3, 20);

const dims = (d: Partial<ClickDims>): ClickDims => ({ ...(Object.fromEntries(DIMENSION_NAMES.map((n) => [n, null])) as ClickDims), via: "link", ...d });

/** Referrer addresses a spreadsheet or a naive CSV reader would trip on. */
export const HOSTILE_REFERRERS = ['https://news.ycombinator.com/item?id=1,"quoted"', "https://t.co/x\r\n=cmd|' /C calc'!A0", "=HYPERLINK(\"http://evil.test\")", "@SUM(1+1)"];

export function runAnalyticsApiSuite(name: string, start: () => Promise<InProcessControlPlane>) {
  describe(`analytics API (${name})`, () => {
    let cp: InProcessControlPlane;
    let key: string;
    let ids: Record<string, string>;
    const get = async (path: string) => {
      const res = await cp.request("GET", path, { key });
      expect(res.status).toBe(200);
      return jsonOf(res);
    };

    beforeAll(async () => {
      cp = await start();
      key = (await cp.createKey("stats-a@example.com")).key;
      const other = await cp.createKey("stats-b@example.com");
      await cp.request("POST", "/api/v1/links", { key, json: { url: "https://example.com/a", slug: "alpha", tags: ["sale", "news"], folder: "2026" } });
      await cp.request("POST", "/api/v1/links", { key, json: { url: "https://example.com/b", slug: "beta" } });
      await cp.request("POST", "/api/v1/links", { key: other.key, json: { url: "https://example.com/o", slug: "others" } });
      ids = {};
      for (const slug of ["alpha", "beta", "others"]) ids[slug] = (await cp.deps.store.getLink(cp.deps.config.defaultDomain, slug))!.id;
      const click = (slug: string, at: string, d: Partial<ClickDims>, o: Partial<StoredClick> = {}): StoredClick =>
        ({ batch: "b1", linkId: ids[slug]!, ts: Date.parse(at), dims: dims(d), bot: false, firstVisit: true, referrerUrl: null, ...o });
      await cp.deps.store.recordClicks([
        click("alpha", "2026-10-24T22:30:00Z", { country: "DE", device: "mobile", referrer: "news.ycombinator.com" }, { referrerUrl: HOSTILE_REFERRERS[0]! }),
        click("alpha", "2026-10-25T00:30:00Z", { country: "US", device: "desktop" }), // 02:30+02:00 in Berlin
        click("alpha", "2026-10-25T01:30:00Z", { country: "US", device: "desktop" }, { firstVisit: false }), // 02:30+01:00
        click("alpha", "2026-10-25T22:59:00Z", { country: "FR", device: "tablet", referrer: "t.co" }, { referrerUrl: HOSTILE_REFERRERS[1]! }),
        click("alpha", "2026-10-25T23:00:00Z", { country: "DE", device: "mobile" }, { bot: true, referrerUrl: HOSTILE_REFERRERS[2]! }), // the 26th in Berlin
        click("beta", "2026-11-20T10:00:00Z", { country: "DE", device: "desktop" }, { referrerUrl: HOSTILE_REFERRERS[3]! }),
        click("beta", "2026-11-24T10:00:00Z", { device: "mobile", referrer: "t.co", via: "qr" }),
        click("others", "2026-11-24T10:00:00Z", { country: "DE" }),
      ]);
    });
    afterAll(() => cp?.close());

    const berlinDays = "/api/v1/links/alpha/stats?from=2026-10-25&to=2026-10-27&tz=Europe/Berlin&interval=day";

    async function checkAnswers() {
      const days = await get(berlinDays);
      expect(days).toMatchObject({ slug: "alpha", from: "2026-10-25T00:00:00+02:00", to: "2026-10-27T00:00:00+01:00", interval: "day", tz: "Europe/Berlin", bots: "exclude", totals: { clicks: 4, visitors: 3 } });
      expect(days.series).toEqual([{ start: "2026-10-25T00:00:00+02:00", clicks: 4, visitors: 3 }, { start: "2026-10-26T00:00:00+01:00", clicks: 0, visitors: 0 }]);
      expect(days.breakdowns.country.rows).toEqual([{ value: "US", clicks: 2, visitors: 1 }, { value: "DE", clicks: 1, visitors: 1 }, { value: "FR", clicks: 1, visitors: 1 }]);
      expect((await get(`${berlinDays}&bots=include`)).series.map((p: any) => p.clicks)).toEqual([4, 1]);
      expect((await get(`${berlinDays}&bots=only`)).totals).toEqual({ clicks: 1, visitors: 1 });

      const top = await get("/api/v1/stats?from=2026-10-01&groupBy=link");
      // The OpenAPI and MCP output schema describes what is answered.
      for (const answer of [days, top]) expect([...Value.Errors(Analytics, answer)]).toEqual([]);
      expect(Object.keys(top.breakdowns)).toEqual(["link"]);
      expect(top.breakdowns.link.rows).toEqual([
        { value: ids.alpha, slug: "alpha", domain: new URL(BASE_URL).host, shortUrl: `${BASE_URL}/alpha`, clicks: 4, visitors: 3 },
        { value: ids.beta, slug: "beta", domain: new URL(BASE_URL).host, shortUrl: `${BASE_URL}/beta`, clicks: 2, visitors: 2 },
      ]);
      expect((await get("/api/v1/stats?from=2026-10-01&groupBy=tag")).breakdowns.tag.rows.map((r: any) => [r.value, r.clicks])).toEqual([["news", 4], ["sale", 4], [null, 2]]);

      // New York leaves summer time at 02:00 on 1 November, so that month still starts at -04:00.
      const months = await get("/api/v1/stats?from=2026-09-15&interval=month&tz=America/New_York&bots=include");
      expect(months.series.map((p: any) => [p.start, p.clicks])).toEqual([["2026-09-01T00:00:00-04:00", 0], ["2026-10-01T00:00:00-04:00", 5], ["2026-11-01T00:00:00-04:00", 2]]);
      expect(months.breakdowns.via.rows).toEqual([{ value: "link", clicks: 6, visitors: 5 }, { value: "qr", clicks: 1, visitors: 1 }]);
    }

    test("series in the zone across Berlin's 25-hour day, bots excluded, included or alone; top links and tags of the account; months in New York", checkAnswers);

    test("the fall-back day by hour has 25 points; clicks land in the repeated hour they happened in", async () => {
      const hours = await get("/api/v1/links/alpha/stats?from=2026-10-25&to=2026-10-26&tz=Europe/Berlin&interval=hour");
      expect(hours.series).toHaveLength(25);
      expect(hours.series.slice(2, 4).map((p: any) => [p.start, p.clicks])).toEqual([["2026-10-25T02:00:00+02:00", 1], ["2026-10-25T02:00:00+01:00", 1]]);
    });

    test("filters, groupBy and limit: referrer=(none), country OR, the rest of a breakdown in other", async () => {
      expect((await get("/api/v1/links/alpha/stats?from=2026-10-20&referrer=(none)")).totals.clicks).toBe(2);
      expect((await get("/api/v1/links/alpha/stats?from=2026-10-20&country=us,FR&device=desktop")).totals.clicks).toBe(2);
      expect((await get("/api/v1/links/alpha/stats?from=2026-10-20&country=US&country=FR&referrer=%28none%29,t.co")).totals.clicks).toBe(3);
      const ref = await get("/api/v1/links/alpha/stats?from=2026-10-20&groupBy=referrer&limit=1");
      expect(ref.breakdowns).toEqual({ referrer: { rows: [{ value: null, clicks: 2, visitors: 1 }], other: { clicks: 2, visitors: 2 } } });
      expect((await get("/api/v1/stats?from=2026-10-20&tag=(none)")).totals.clicks).toBe(2);
    });

    test("after the days are settled, the same questions get the same answers", async () => {
      await cp.deps.store.settleDays(Date.UTC(2026, 10, 22));
      expect(await cp.deps.store.settledBefore()).toBe(Date.UTC(2026, 10, 22));
      await checkAnswers();
    });

    test("without parameters a link's stats keep their original shape (all time, bots included)", async () => {
      const body = await get("/api/v1/links/alpha/stats");
      expect(Value.Check(LinkStats, body)).toBe(true);
      expect({ ...body, last24h: body.last24h.length }).toEqual({
        slug: "alpha", totalClicks: 5, byDevice: { desktop: 2, mobile: 2, tablet: 1 }, byBrowser: { unknown: 5 },
        byCountry: { DE: 2, US: 2, FR: 1 }, byVariant: {}, last24h: 24,
      });
    });

    test("every bad parameter is a 400 problem with its code; unknown or another account's link is not_found", async () => {
      const bad: [string, number, Parameters<typeof problemOf>[2]][] = [
        ["/api/v1/links/alpha/stats?from=yesterday", 400, "invalid_range"],
        ["/api/v1/stats?from=2026-11-02&to=2026-11-01", 400, "invalid_range"],
        ["/api/v1/links/alpha/stats?from=0001-01-01", 400, "too_many_points"],
        ["/api/v1/stats?from=2026-01-01&interval=hour", 400, "too_many_points"],
        ["/api/v1/links/alpha/stats?groupBy=colour", 400, "unknown_dimension"],
        ["/api/v1/links/alpha/stats?groupBy=tag", 400, "unknown_dimension"],
        ["/api/v1/stats?colour=red", 400, "unknown_dimension"],
        ["/api/v1/stats?tz=Mars/Olympus", 400, "unknown_time_zone"],
        ["/api/v1/links/alpha/stats?bots=no", 400, "invalid_parameter"],
        ["/api/v1/stats?limit=101", 400, "invalid_parameter"],
        ["/api/v1/stats?interval=year", 400, "invalid_parameter"],
        ["/api/v1/stats?bots=include&bots=only", 400, "invalid_parameter"],
        ["/api/v1/links/alpha/clicks.csv?from=2026-11-02&to=2026-11-01", 400, "invalid_range"],
        ["/api/v1/clicks.csv?groupBy=link", 400, "invalid_parameter"],
        ["/api/v1/clicks.csv?from=soon", 400, "invalid_range"],
        ["/api/v1/links/alpha/clicks.csv?tz=Mars/Olympus", 400, "unknown_time_zone"],
        ["/api/v1/links/alpha/stats?limit=abc", 400, "invalid_parameter"],
        ["/api/v1/links/alpha/stats?country=DE,,FR", 400, "invalid_parameter"],
        ["/api/v1/links/others/stats?from=2026-10-01", 404, "not_found"],
        ["/api/v1/links/others/clicks.csv", 404, "not_found"],
      ];
      for (const [path, status, code] of bad) await problemOf(await cp.request("GET", path, { key }), status, code);
      await problemOf(await cp.request("GET", "/api/v1/stats"), 401, "unauthorized");
      await problemOf(await cp.request("POST", "/api/v1/clicks.csv", { key }), 405, "method_not_allowed");
    });

    test("CSV of a link and of the account: header, one row per click, hostile referrers read back exactly", async () => {
      const res = await cp.request("GET", "/api/v1/links/alpha/clicks.csv?from=2026-10-24&to=2026-10-26T00:00:00Z", { key });
      expect([res.status, res.headers.get("content-type"), res.headers.get("content-disposition")]).toEqual([
        200, "text/csv; charset=utf-8", 'attachment; filename="clink-alpha-clicks-2026-10-24-to-2026-10-26.csv"',
      ]);
      expect(res.headers.get("ratelimit-limit")).not.toBeNull();
      const rows = parseCsv(await res.text());
      expect(rows[0]).toEqual(CSV_HEADER);
      const at = (col: string) => CSV_HEADER.indexOf(col);
      expect(rows.slice(1).map((r) => [r[0], r[1], r[at("Country")], r[at("Bot")], r[at("Referrer URL")]])).toEqual([
        ["2026-10-24T22:30:00.000Z", "alpha", "DE", "false", HOSTILE_REFERRERS[0]],
        ["2026-10-25T00:30:00.000Z", "alpha", "US", "false", ""],
        ["2026-10-25T01:30:00.000Z", "alpha", "US", "false", ""],
        ["2026-10-25T22:59:00.000Z", "alpha", "FR", "false", HOSTILE_REFERRERS[1]],
        ["2026-10-25T23:00:00.000Z", "alpha", "DE", "true", `'${HOSTILE_REFERRERS[2]}`],
      ]);
      const all = parseCsv(await (await cp.request("GET", "/api/v1/clicks.csv", { key })).text());
      expect(all.slice(1).map((r) => r[1]).sort()).toEqual(["alpha", "alpha", "alpha", "alpha", "alpha", "beta", "beta"]);
      expect(all.slice(1).find((r) => r[0] === "2026-11-20T10:00:00.000Z")![at("Referrer URL")]).toBe(`'${HOSTILE_REFERRERS[3]}`);
    });
  });
}

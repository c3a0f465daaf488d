/**
 * The analytics pages' rendering as pure functions of hand-made Analytics answers and page URLs: the URL state
 * and its presets, a card for every declared dimension whose rows filter the page, removable filter chips, the
 * chart's figures as text, controls that keep the state, and refused questions in words for people.
 */
import { describe, expect, test } from "bun:test";
import { DIMENSION_NAMES, DIMENSIONS } from "../../shared/clicks/dimensions.ts";
import { AppError } from "../../shared/errors.ts";
import type { Analytics } from "../../control/stats/analytics-types.ts";
import { defaultValueLabel, dimensionCards, filterChips, groupCard, totalTiles, type CardContext } from "../../control/dashboard/analytics-cards.ts";
import { pageUrl, parsePageQuery, rangeDates, rangeProblems, resolveRange, serviceQuery } from "../../control/dashboard/analytics-query.ts";
import { csvHref, rangeControls } from "../../control/dashboard/analytics-range.ts";
import { seriesChart, seriesSummary } from "../../control/dashboard/charts.ts";

const HOUR = 3_600_000;
const NOW = Date.UTC(2030, 0, 15, 12, 30);
const XSS = "<img src=x onerror=alert(1)>";
const PATH = "/dashboard/links/spring/stats";

const q = (search: string) => parsePageQuery(new URLSearchParams(search));
const ctxOf = (search: string): CardContext => ({ path: PATH, q: q(search), labelOf: defaultValueLabel, baseDomain: "s" });
/** Attribute values as a browser reads them (the page escapes & in URLs). */
const unescape = (html: string) => html.replaceAll("&amp;", "&");

function analytics(fields: Partial<Analytics> = {}): Analytics {
  return {
    slug: "spring", from: "2030-01-14T13:00:00Z", to: "2030-01-15T13:00:00Z", interval: "hour", tz: "UTC", bots: "exclude", filters: {},
    totals: { clicks: 12, visitors: 7 },
    series: [
      { start: "2030-01-15T10:00:00+00:00", clicks: 2, visitors: 2 },
      { start: "2030-01-15T11:00:00+00:00", clicks: 0, visitors: 0 },
      { start: "2030-01-15T12:00:00+00:00", clicks: 10, visitors: 5 },
    ],
    breakdowns: {
      country: { rows: [{ value: "DE", clicks: 8, visitors: 4 }, { value: null, clicks: 1, visitors: 1 }], other: { clicks: 3, visitors: 2 } },
      referrer: { rows: [{ value: XSS, clicks: 2, visitors: 1 }], other: { clicks: 0, visitors: 0 } },
      device: { rows: [{ value: "mobile", clicks: 12, visitors: 7 }], other: { clicks: 0, visitors: 0 } },
    },
    ...fields,
  };
}

describe("the page's state in its URL", () => {
  test("defaults are left out of links; filters, range, interval and bots survive a round trip", () => {
    expect(pageUrl(PATH, q(""))).toBe(PATH);
    const state = q("range=custom&from=2030-01-01&to=2030-01-10&interval=week&bots=include&country=DE&device=mobile&country=FR&nonsense=1");
    expect(state.filters).toEqual([["country", "DE"], ["device", "mobile"], ["country", "FR"]]);
    expect(pageUrl(PATH, state)).toBe(`${PATH}?range=custom&from=2030-01-01&to=2030-01-10&interval=week&bots=include&country=DE&device=mobile&country=FR`);
    expect(q("range=bogus").range).toBe("24h");
  });

  test("presets end with the current hour or today (UTC); custom days are whole; the service gets the API's parameters", () => {
    expect(resolveRange(q(""), NOW)).toEqual({ from: Date.UTC(2030, 0, 14, 13), to: Date.UTC(2030, 0, 15, 13), interval: "hour", tz: "UTC" });
    expect(resolveRange(q("range=7d"), NOW)).toEqual({ from: Date.UTC(2030, 0, 9), to: Date.UTC(2030, 0, 16), interval: "day", tz: "UTC" });
    expect(resolveRange(q("range=90d&interval=week"), NOW).interval).toBe("week");
    const custom = resolveRange(q("range=custom&from=2030-01-01&to=2030-01-01"), NOW);
    expect(custom).toEqual({ from: Date.UTC(2030, 0, 1), to: Date.UTC(2030, 0, 2), interval: "hour", tz: "UTC" });
    expect(serviceQuery(q("bots=only&country=DE&country=FR&os=iOS"), custom)).toEqual({
      from: "2030-01-01T00:00:00.000Z", to: "2030-01-02T00:00:00.000Z", interval: "hour", tz: "UTC", bots: "only", country: ["DE", "FR"], os: ["iOS"],
    });
  });

  test("a time zone moves the days: presets and custom days start at its midnights, across a DST change", () => {
    const berlin = resolveRange(q("range=7d&tz=europe/berlin"), NOW);
    expect(berlin).toEqual({ from: Date.UTC(2030, 0, 8, 23), to: Date.UTC(2030, 0, 15, 23), interval: "day", tz: "Europe/Berlin" });
    expect(rangeDates(berlin)).toEqual({ from: "2030-01-09", to: "2030-01-15" });
    // 2030-03-31 is the spring change in Berlin: the range starts at +01:00 and ends at +02:00.
    const spring = resolveRange(q("range=custom&from=2030-03-30&to=2030-03-31&tz=Europe/Berlin"), NOW);
    expect([new Date(spring.from).toISOString(), new Date(spring.to).toISOString()]).toEqual(["2030-03-29T23:00:00.000Z", "2030-03-31T22:00:00.000Z"]);
    expect(serviceQuery(q("tz=Europe/Berlin"), spring).tz).toBe("Europe/Berlin");
    expect(pageUrl(PATH, q("tz=Europe/Berlin&range=30d"))).toBe(`${PATH}?range=30d&tz=Europe%2FBerlin`);
    const html = rangeControls({ path: PATH, q: q("tz=Europe/Berlin&country=DE"), resolved: berlin, problems: [], csvHref: null });
    expect(html).toContain("<option selected>Europe/Berlin</option>");
    expect(html).toContain('<input type="hidden" name="country" value="DE">\n<div><label for="range-tz">'); // the zone form keeps the rest
  });

  test("an interval that would draw more bars than the service allows is shown but not offered", () => {
    const r = resolveRange(q("range=90d"), NOW);
    const html = unescape(rangeControls({ path: PATH, q: q("range=90d"), resolved: r, problems: [], csvHref: null }));
    expect(html).toContain('<span class="seg seg-off" title="too many bars for this range">Hour<span class="sr-only"> (too many bars for this range)</span></span>');
    expect(html).toContain(`<a class="seg" href="${PATH}?range=90d&interval=week">Week</a>`);
    expect(html).not.toContain("interval=hour");
  });

  test("refused questions read as sentences for people, each pointing at its control; the service's words never show", () => {
    let typed: unknown;
    try {
      resolveRange(q("range=custom&from=yesterday&to=2030-01-01"), NOW);
    } catch (e) {
      typed = e;
    }
    expect(rangeProblems(typed as AppError)).toEqual([{ field: "from", text: "Enter the first day as a date, like 2026-11-01." }]);
    const raw = "Expected string to match 'date-time' format: from must precede to (got 1893456000000)";
    const cases: [AppError, string | null, RegExp][] = [
      [new AppError("invalid_range", raw), "to", /last day must be on or after the first day/],
      [new AppError("too_many_points", raw), "interval", /too many bars/],
      [new AppError("unknown_dimension", raw), null, /filter of this page is not one we know/],
      [new AppError("unknown_time_zone", raw), "tz", /Choose a time zone from the list/],
      [new AppError("invalid_parameter", raw, { errors: [{ path: "/bots", message: raw }] }), "bots", /people only/],
      [new AppError("invalid_parameter", raw, { errors: [{ path: "/limit", message: raw }] }), null, /start again from the plain page/],
    ];
    for (const [error, field, words] of cases) {
      const [problem] = rangeProblems(error);
      expect(problem!.field).toBe(field as never);
      expect(problem!.text).toMatch(words);
      const html = rangeControls({ path: PATH, q: q(""), resolved: null, problems: rangeProblems(error), csvHref: null });
      expect(html).toContain("data-error-summary");
      expect(html).not.toContain("Expected");
      expect(html).not.toContain("Download CSV");
    }
    const marked = rangeControls({ path: PATH, q: q("range=custom&from=2030-02-01&to=2030-01-01"), resolved: null, problems: rangeProblems(new AppError("invalid_range")), csvHref: null });
    expect(marked).toContain('id="range-to" name="to" aria-invalid="true" aria-describedby="range-to-error" value="2030-01-01" required>');
    expect(marked).toContain('<a href="#range-to">Last day: The last day must be on or after the first day.</a>');
  });
});

describe("cards and chips", () => {
  test("a card for every declared dimension, titled by its label, in declaration order, empty ones saying so", () => {
    const html = dimensionCards(ctxOf(""), analytics());
    const headings = [...html.matchAll(/<h3 id="bd-(\w+)">([^<]*)<\/h3>/g)].map((m) => [m[1], m[2]]);
    expect(headings).toEqual(DIMENSION_NAMES.map((d) => [d, DIMENSIONS[d].label]));
    expect(html.match(/No clicks in this range\./g)?.length).toBe(DIMENSION_NAMES.length - 3);
  });

  test("rows filter the page (keeping its state), an active row removes its filter, unknown filters by (none), Other is no link, values are escaped", () => {
    const html = unescape(dimensionCards(ctxOf("range=7d&country=DE"), analytics()));
    expect(html).toContain(`href="${PATH}?range=7d&country=DE&device=mobile" title="Filter by Device: Mobile">Mobile</a>`);
    expect(html).toContain(`href="${PATH}?range=7d" class="active" aria-current="true" title="Remove the filter Country: DE">DE</a>`);
    expect(html).toContain(`href="${PATH}?range=7d&country=DE&country=%28none%29" title="Filter by Country: Unknown">Unknown</a>`);
    expect(html).toContain('<span title="Other">Other</span></th><td class="bbar">');
    expect(html).toContain("<td class=\"bnum\">3</td><td class=\"bnum\">2</td>"); // Other: clicks, visitors
    expect(html).not.toContain(XSS);
    expect(html).toContain(`&${new URLSearchParams({ referrer: XSS })}"`);
  });

  test("chips name each filter and link to the page without it; clear all keeps the range", () => {
    const html = unescape(filterChips(ctxOf("range=30d&device=mobile&via=qr")));
    expect(html).toContain(`<a class="chip" href="${PATH}?range=30d&via=qr" aria-label="Remove the filter Device: Mobile">Device: Mobile <span aria-hidden="true">×</span></a>`);
    expect(html).toContain(`href="${PATH}?range=30d&device=mobile" aria-label="Remove the filter Arrived via: QR code"`);
    expect(html).toContain(`<a class="small" href="${PATH}?range=30d">Clear all filters</a>`);
    expect(filterChips(ctxOf("range=30d"))).toBe("");
  });

  test("top links go to each link's page over the same range and dimension filters; tags and folders filter the overview", () => {
    const ctx: CardContext = { ...ctxOf(""), q: parsePageQuery(new URLSearchParams("range=7d&bots=include&os=iOS&folder=Ads"), ["os", "tag", "folder"]), path: "/dashboard/analytics" };
    const rows = [
      { value: "id1", slug: "spring", domain: "s", shortUrl: "http://s/spring", clicks: 5, visitors: 3 },
      { value: "id2", slug: "spring", domain: "go.s", shortUrl: "https://go.s/spring", clicks: 2, visitors: 2 },
      { value: "gone", clicks: 1, visitors: 1 },
    ];
    const links = unescape(groupCard(ctx, "link", { rows, other: { clicks: 0, visitors: 0 } }));
    expect(links).toContain('href="/dashboard/links/spring/stats?range=7d&bots=include&os=iOS"');
    // The same slug on a custom domain: its own row, named and opened with its domain.
    expect(links).toContain('href="/dashboard/links/spring/stats?domain=go.s&range=7d&bots=include&os=iOS"');
    expect(links).toContain(">go.s/spring<");
    expect(links).toContain("A deleted link");
    const tags = unescape(groupCard(ctx, "tag", { rows: [{ value: "Q1 launch", clicks: 2, visitors: 2 }, { value: null, clicks: 1, visitors: 1 }], other: { clicks: 0, visitors: 0 } }));
    expect(tags).toContain('href="/dashboard/analytics?range=7d&bots=include&os=iOS&folder=Ads&tag=Q1+launch" title="Filter by Tag: Q1 launch">Q1 launch</a>');
    expect(tags).toContain('tag=%28none%29" title="Filter by Tag: No tag">No tag</a>');
    const folders = unescape(groupCard(ctx, "folder", { rows: [{ value: "Ads", clicks: 2, visitors: 2 }], other: { clicks: 0, visitors: 0 } }));
    expect(folders).toContain('href="/dashboard/analytics?range=7d&bots=include&os=iOS" class="active" aria-current="true" title="Remove the filter Folder: Ads">Ads</a>');
    expect(groupCard(ctx, "folder", undefined)).toContain("No clicks in this range.");
  });

  test("totals show unique visitors beside clicks, and whose clicks they are", () => {
    const html = totalTiles(analytics({ bots: "include", totals: { clicks: 1234, visitors: 56 } }));
    expect(html).toContain('Clicks (people and bots)</div><div class="num" id="total-clicks">1,234</div>');
    expect(html).toContain('Unique visitors</div><div class="num" id="total-visitors">56</div>');
  });
});

describe("the time-series chart", () => {
  test("an accessible name and description with the figures, a bar and a table row per point", () => {
    const a = analytics();
    const html = seriesChart(a.series, "hour", "UTC");
    expect(seriesSummary(a.series, "hour", "UTC")).toBe("12 clicks and 7 unique visitors from 2030-01-15 10:00 to 2030-01-15 12:00 (UTC); the busiest hour was 2030-01-15 12:00 with 10 clicks.");
    expect(html).toContain('role="img" aria-labelledby="series-title" aria-describedby="series-desc"');
    expect(html).toContain('<desc id="series-desc">12 clicks and 7 unique visitors');
    expect(html.match(/<rect class="bar"/g)?.length).toBe(2);
    expect(html.match(/<rect class="bar-zero"/g)?.length).toBe(1);
    expect(html).toContain('<tr><th scope="row">2030-01-15 12:00</th><td>10</td><td>5</td></tr>');
    expect(seriesSummary([{ start: "2030-01-01T00:00:00+01:00", clicks: 0, visitors: 0 }], "month", "Europe/Berlin")).toBe("No clicks from 2030-01 to 2030-01 (Europe/Berlin).");
  });

  test("the CSV link carries the range shown, as the API's from and to", () => {
    const r = resolveRange(q("range=7d"), NOW);
    expect(csvHref("/dashboard/links/spring/clicks.csv", r)).toBe("/dashboard/links/spring/clicks.csv?from=2030-01-09T00%3A00%3A00.000Z&to=2030-01-16T00%3A00%3A00.000Z");
    const html = unescape(rangeControls({ path: PATH, q: q("range=7d&country=DE"), resolved: r, problems: [], csvHref: csvHref("/x.csv", r) }));
    expect(html).toContain(`<a class="seg" href="${PATH}?range=7d&country=DE" aria-current="true">7 days</a>`);
    expect(html).toContain(`<a class="seg" href="${PATH}?range=7d&interval=week&country=DE">Week</a>`);
    expect(html).toContain(`<a class="seg" href="${PATH}?country=DE">24 hours</a>`);
    expect(html).toContain(`<a class="seg" href="${PATH}?range=7d&bots=only&country=DE">Bots only</a>`);
    expect(html).toContain('<input type="date" id="range-from" name="from" value="2030-01-09" required>');
    expect(html).toContain('<input type="hidden" name="range" value="custom"><input type="hidden" name="country" value="DE">');
    expect(html).toContain("Download CSV");
  });
});

/**
 * The analytics pages through the Elysia app in process, over clicks written to the real store: a link's page and
 * the account overview answer for their range (kept in every link of the page), filters and the bots switch
 * change the figures, a refused range is the page again with words for people, and the CSV downloads stream the
 * API's export behind the session.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DIMENSION_NAMES, DIMENSIONS, type ClickDims } from "../../shared/clicks/dimensions.ts";
import type { StoredClick } from "../../shared/ports/clicks.ts";
import { Visitor } from "../helpers/dashboard-visitor.ts";
import { BASE_URL, passwordOf, START_TIME, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const EMAIL = "stats-pages@example.com";
const PAGE = "/dashboard/links/spring/stats";

let cp: InProcessControlPlane;
let v: Visitor;

const dims = (d: Partial<ClickDims>): ClickDims => ({ ...(Object.fromEntries(DIMENSION_NAMES.map((n) => [n, null])) as ClickDims), ...d });
let batch = 0;
function click(linkId: string, ts: number, d: Partial<ClickDims>, extra: Partial<StoredClick> = {}): StoredClick {
  return { batch: `b${++batch}`, linkId, ts, dims: dims(d), bot: false, firstVisit: true, referrerUrl: null, ...extra };
}

/** A number shown in a tile, by the tile's id. */
const tile = (html: string, id: string) => /id="([^"]+)">([^<]*)</g.exec(html.slice(html.indexOf(`id="${id}"`)))?.[2];
const unescape = (html: string) => html.replaceAll("&amp;", "&");

async function signIn(email: string): Promise<Visitor> {
  await cp.account(email);
  const visitor = new Visitor(BASE_URL, (r) => cp.handle(r));
  const res = await visitor.submit("/dashboard/signin", "/dashboard/signin", { email, password: passwordOf(email) });
  expect(res.status).toBe(303);
  return visitor;
}

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  const { key } = await cp.createKey(EMAIL);
  const create = (json: object) => cp.request("POST", "/api/v1/links", { key, json });
  expect((await create({ url: "https://example.com/spring", slug: "spring", tags: ["launch"], folder: "Ads", abUrls: [{ url: "https://a.example.com/", weight: 1 }, { url: "https://b.example.com/", weight: 1 }] })).status).toBe(201);
  expect((await create({ url: "https://example.com/autumn", slug: "autumn", tags: ["docs"] })).status).toBe(201);
  const idOf = async (slug: string) => (await cp.deps.store.getLink(cp.deps.config.defaultDomain, slug))!.id;
  const [spring, autumn] = [await idOf("spring"), await idOf("autumn")];
  const now = START_TIME; // 12:30 UTC
  const phone = { country: "DE", device: "mobile", os: "iOS", browser: "Mobile Safari", referrer: "news.ycombinator.com", variant: "0", via: "link" };
  await cp.deps.store.recordClicks([
    click(spring, now - 10 * 60_000, phone, { referrerUrl: 'https://news.ycombinator.com/item?id=1,"2"' }),
    click(spring, now - 20 * 60_000, phone, { firstVisit: false }),
    click(spring, now - 3 * HOUR, { ...phone, via: "qr", variant: "1" }),
    click(spring, now - 5 * HOUR, { country: "FR", device: "desktop", os: "Windows", browser: "Firefox", variant: "1", via: "link" }),
    click(spring, now - 2 * HOUR, { country: "US", device: "other", via: "link" }, { bot: true }),
    click(spring, now - 3 * DAY, { country: "DE", device: "desktop", via: "link" }),
    click(autumn, now - HOUR, { country: "US", device: "desktop", via: "link" }),
    click(autumn, now - 2 * HOUR, { country: "US", device: "desktop", via: "link" }),
  ]);
  v = await signIn(EMAIL);
});
afterAll(() => cp?.close());

describe("a link's stats page", () => {
  test("the last 24 hours by default: clicks and unique visitors of people, a card for every dimension, the range in every link", async () => {
    const page = await v.get(PAGE);
    expect(page.status).toBe(200);
    expect([tile(page.html, "total-clicks"), tile(page.html, "total-visitors")]).toEqual(["4", "3"]);
    for (const d of DIMENSION_NAMES) expect(page.html).toContain(`<h3 id="bd-${d}">${DIMENSIONS[d].label}</h3>`);
    const html = unescape(page.html);
    expect(html).toContain(`<a class="seg" href="${PAGE}" aria-current="true">24 hours</a>`);
    expect(html).toContain(`href="${PAGE}?country=DE" title="Filter by Country: DE">DE</a>`);
    expect(html).toContain("1: a.example.com/"); // variants worded with the link's own destinations
    expect(html).toContain("QR code");
    expect(html).toContain(`href="/dashboard/links/spring/clicks.csv?from=2030-01-14T13%3A00%3A00.000Z&to=2030-01-15T13%3A00%3A00.000Z" download>Download CSV</a>`);
  });

  test("7 days: the older click counts, and filter links, interval links and the CSV keep the range", async () => {
    const page = await v.get(`${PAGE}?range=7d`);
    expect([page.status, tile(page.html, "total-clicks")]).toEqual([200, "5"]);
    const html = unescape(page.html);
    expect(html).toContain(`href="${PAGE}?range=7d&country=DE" title="Filter by Country: DE">DE</a>`);
    expect(html).toContain(`href="${PAGE}?range=7d&interval=hour">Hour</a>`);
    expect(html).toContain("clicks.csv?from=2030-01-09T00%3A00%3A00.000Z&to=2030-01-16T00%3A00%3A00.000Z");
    expect(html.match(/<tr><th scope="row">2030-01-\d\d<\/th>/g)?.length).toBe(7); // one row per day in the figures
  });

  test("a time zone: the days are its days, in the chart, the figures and every link", async () => {
    const page = await v.get(`${PAGE}?range=7d&tz=Europe/Berlin`);
    expect([page.status, tile(page.html, "total-clicks")]).toEqual([200, "5"]);
    expect(page.html).toContain("(per day, Europe/Berlin)");
    expect([...page.html.matchAll(/<tr><th scope="row">(2030-01-\d\d)<\/th>/g)].map((m) => m[1])).toEqual(["2030-01-09", "2030-01-10", "2030-01-11", "2030-01-12", "2030-01-13", "2030-01-14", "2030-01-15"]);
    expect(unescape(page.html)).toContain(`href="${PAGE}?range=7d&tz=Europe%2FBerlin&country=DE"`);
    expect(unescape(page.html)).toContain("clicks.csv?from=2030-01-08T23%3A00%3A00.000Z&to=2030-01-15T23%3A00%3A00.000Z");
  });

  test("filters narrow the figures and show as removable chips; the bots switch counts bots only or too", async () => {
    const de = await v.get(`${PAGE}?range=7d&country=DE&device=mobile`);
    expect(tile(de.html, "total-clicks")).toBe("3");
    const html = unescape(de.html);
    expect(html).toContain(`<a class="chip" href="${PAGE}?range=7d&device=mobile" aria-label="Remove the filter Country: DE">`);
    expect(html).toContain(`href="${PAGE}?range=7d&country=DE" class="active" aria-current="true" title="Remove the filter Device: Mobile">Mobile</a>`);
    expect(tile((await v.get(`${PAGE}?via=qr`)).html, "total-clicks")).toBe("1");
    expect(tile((await v.get(`${PAGE}?bots=only`)).html, "total-clicks")).toBe("1");
    expect(tile((await v.get(`${PAGE}?bots=include`)).html, "total-clicks")).toBe("5");
  });

  test("a refused range is the page again with status 400 and words for people, the field marked; never the service's text", async () => {
    const cases: [string, string, string][] = [
      ["range=custom&from=2030-01-10&to=2030-01-01", "The last day must be on or after the first day.", 'id="range-to" name="to" aria-invalid="true" aria-describedby="range-to-error" value="2030-01-01"'],
      ["range=custom&from=someday&to=2030-01-01", "Enter the first day as a date, like 2026-11-01.", 'id="range-from" name="from" aria-invalid="true" aria-describedby="range-from-error" value="someday"'],
      ["range=90d&interval=hour", "That is too many bars for one chart", "Interval: That is too many bars"],
      ["bots=sometimes", "Choose people only, people and bots, or bots only.", "Bots: Choose"],
      ["tz=Mars/Olympus_Mons", "Choose a time zone from the list.", 'id="range-tz" name="tz" aria-invalid="true"'],
    ];
    for (const [query, words, marked] of cases) {
      const page = await v.get(`${PAGE}?${query}`);
      expect([query, page.status]).toEqual([query, 400]);
      expect(page.html).toContain("data-error-summary");
      expect(page.html).toContain(words);
      expect(page.html).toContain(marked);
      expect(page.html).not.toMatch(/must be before|must be one of|more than 1000|ISO 8601/);
      expect(page.html).not.toContain("Download CSV");
    }
  });

  test("the CSV download streams the link's clicks in the range, quoted, behind the session only", async () => {
    const from = new Date(START_TIME - DAY).toISOString();
    const res = await v.get(`/dashboard/links/spring/clicks.csv?from=${from}&to=${new Date(START_TIME + HOUR).toISOString()}`);
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "text/csv; charset=utf-8"]);
    const lines = res.html.trimEnd().split("\r\n");
    expect(lines[0]).toContain("Slug,Country");
    expect(lines).toHaveLength(1 + 5); // the bot's click is a click of the log too
    expect(res.html).toContain('"https://news.ycombinator.com/item?id=1,""2"""');
    const refused = await v.get("/dashboard/links/spring/clicks.csv?from=2030-01-10&to=2030-01-01");
    expect(refused.status).toBe(400);
    expect(refused.html).toContain("The last day must be on or after the first day.");
    const stranger = await signIn("stranger@example.com");
    for (const path of ["/dashboard/links/spring/clicks.csv", PAGE]) expect((await stranger.get(path)).status).toBe(404);
    const anonymous = await new Visitor(BASE_URL, (r) => cp.handle(r)).get("/dashboard/links/spring/clicks.csv");
    expect(anonymous.status).toBe(303);
  });
});

describe("the account overview", () => {
  test("every link's clicks, top links to each link's page with the range, top tags and folders that filter, every dimension", async () => {
    const page = await v.get("/dashboard/analytics?range=7d");
    expect(page.status).toBe(200);
    expect(page.html).toContain('<a href="/dashboard/analytics" aria-current="page">Analytics</a>');
    expect(tile(page.html, "total-clicks")).toBe("7");
    const html = unescape(page.html);
    expect(html).toContain('href="/dashboard/links/spring/stats?range=7d" title="Filter by Link: spring">spring</a>');
    expect(html).toContain('href="/dashboard/links/autumn/stats?range=7d"');
    expect(html).toContain('href="/dashboard/analytics?range=7d&tag=docs" title="Filter by Tag: docs">docs</a>');
    expect(html).toContain('href="/dashboard/analytics?range=7d&folder=Ads" title="Filter by Folder: Ads">Ads</a>');
    for (const d of DIMENSION_NAMES) expect(page.html).toContain(`<h3 id="bd-${d}">${DIMENSIONS[d].label}</h3>`);
    expect(html).toContain("/dashboard/analytics/clicks.csv?from=2030-01-09T00%3A00%3A00.000Z");
  });

  test("a tag filter keeps only its links' clicks; a bad range is refused in words", async () => {
    const docs = await v.get("/dashboard/analytics?range=7d&tag=docs");
    expect(tile(docs.html, "total-clicks")).toBe("2");
    expect(docs.html).toContain('aria-label="Remove the filter Tag: docs"');
    const bad = await v.get("/dashboard/analytics?range=custom&from=2030-01-10&to=2030-01-01");
    expect([bad.status, bad.html.includes("The last day must be on or after the first day.")]).toEqual([400, true]);
  });

  test("the account's CSV holds every link's clicks", async () => {
    const res = await v.get(`/dashboard/analytics/clicks.csv?from=${new Date(START_TIME - 7 * DAY).toISOString()}`);
    expect(res.status).toBe(200);
    const lines = res.html.trimEnd().split("\r\n").slice(1);
    expect(lines).toHaveLength(8);
    expect(lines.filter((l) => l.includes(",autumn,"))).toHaveLength(2);
  });
});

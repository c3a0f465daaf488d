/** GET /api/v1/links/{slug}/stats through the Elysia app in process (§3.4), over clicks written to the real store. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { DIMENSION_NAMES, type ClickDims } from "../../shared/clicks/dimensions.ts";
import type { StoredClick } from "../../shared/ports.ts";
import { jsonOf, problemOf, START_TIME, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

const HOUR = 3_600_000;
/** START_TIME is 12:30; its hour starts at 12:00. */
const CURRENT_HOUR = START_TIME - (START_TIME % HOUR);

let cp: InProcessControlPlane;
let key: string;

type ClickFields = Partial<Pick<ClickDims, "country" | "device" | "browser" | "variant">>;

function click(linkId: string, ts: number, fields: ClickFields = {}): StoredClick {
  const dims = { ...(Object.fromEntries(DIMENSION_NAMES.map((d) => [d, null])) as ClickDims), country: "US", device: "desktop", browser: "Chrome", os: "Windows", ...fields };
  return { batch: "b1", linkId, ts, dims, bot: false, firstVisit: true, referrerUrl: null };
}

beforeAll(async () => {
  cp = await startControlPlane();
  key = (await cp.createKey("alice@example.com")).key;
  await cp.request("POST", "/api/v1/links", { key, json: { url: "https://example.com/s", slug: "stats-link" } });
  await cp.request("POST", "/api/v1/links", { key, json: { url: "https://example.com/q", slug: "quiet-link" } });
  const { id } = (await cp.deps.store.getLink(cp.deps.config.defaultDomain, "stats-link"))!;
  await cp.deps.store.recordClicks([
    click(id, START_TIME - 1000, { device: "mobile", browser: "Safari", country: "DE", variant: "0" }),
    click(id, START_TIME - 2000, { device: "mobile", browser: "Safari", country: "DE", variant: "1" }),
    click(id, CURRENT_HOUR - 1, { country: null }), // the previous hour's last millisecond
    click(id, CURRENT_HOUR - 23 * HOUR), // the oldest hour shown
    click(id, CURRENT_HOUR - 24 * HOUR), // counted in the totals, outside the 24 hours
  ]);
});
afterAll(() => cp?.close());

test("totals by device, browser, country and variant, and exactly 24 hourly buckets ending with the current hour", async () => {
  const res = await cp.request("GET", "/api/v1/links/stats-link/stats", { key });
  expect(res.status).toBe(200);
  const hours = Array.from({ length: 24 }, (_, i) => ({ hour: new Date(CURRENT_HOUR - (23 - i) * HOUR).toISOString(), clicks: 0 }));
  hours[0].clicks = 1;
  hours[22].clicks = 1;
  hours[23].clicks = 2;
  expect(await jsonOf(res)).toEqual({
    slug: "stats-link",
    totalClicks: 5,
    byDevice: { desktop: 3, mobile: 2 },
    byBrowser: { Chrome: 3, Safari: 2 },
    byCountry: { US: 2, DE: 2, unknown: 1 },
    byVariant: { "0": 1, "1": 1 },
    last24h: hours,
  });
});

test("an hour later the buckets move on: the oldest click leaves last24h but stays in the totals", async () => {
  cp.clock.advance(HOUR);
  const body = await jsonOf(await cp.request("GET", "/api/v1/links/stats-link/stats", { key }));
  cp.clock.advance(-HOUR);
  expect(body.totalClicks).toBe(5);
  expect(body.last24h[0]).toEqual({ hour: new Date(CURRENT_HOUR - 22 * HOUR).toISOString(), clicks: 0 });
  expect(body.last24h.slice(21).map((h: { clicks: number }) => h.clicks)).toEqual([1, 2, 0]);
});

test("a link without clicks answers zeros: empty breakdowns and 24 empty hours", async () => {
  const body = await jsonOf(await cp.request("GET", "/api/v1/links/quiet-link/stats", { key }));
  expect({ ...body, last24h: undefined }).toEqual({ slug: "quiet-link", totalClicks: 0, byDevice: {}, byBrowser: {}, byCountry: {}, byVariant: {}, last24h: undefined });
  expect(body.last24h.map((h: { clicks: number }) => h.clicks)).toEqual(Array(24).fill(0));
});

test("an unknown slug and another account's link answer 404 not_found", async () => {
  await problemOf(await cp.request("GET", "/api/v1/links/no-such/stats", { key }), 404, "not_found");
  const other = await cp.createKey("bob@example.com");
  await problemOf(await cp.request("GET", "/api/v1/links/stats-link/stats", { key: other.key }), 404, "not_found");
});

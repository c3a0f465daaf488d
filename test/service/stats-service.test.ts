/** control/stats/service.ts called directly: the 24 hourly buckets (pure) and a link's stats read for its owner only. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLink } from "../../control/links/service.ts";
import { getLinkStats, last24Hours } from "../../control/stats/service.ts";
import { rejectionOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

const HOUR = 3_600_000;
const NOON = Date.UTC(2030, 0, 15, 12);

describe("last24Hours", () => {
  test("24 buckets, oldest first, the last the current hour; hours without clicks are 0 and hours outside are ignored", () => {
    const buckets = last24Hours([{ hour: NOON - 24 * HOUR, clicks: 9 }, { hour: NOON - 23 * HOUR, clicks: 1 }, { hour: NOON, clicks: 3 }], NOON + 59 * 60_000);
    expect(buckets).toHaveLength(24);
    expect(buckets[0]).toEqual({ hour: "2030-01-14T13:00:00.000Z", clicks: 1 });
    expect(buckets[23]).toEqual({ hour: "2030-01-15T12:00:00.000Z", clicks: 3 });
    expect(buckets.slice(1, 23).every((b) => b.clicks === 0)).toBe(true);
  });

  test("exactly on the hour, that hour is the current one", () => {
    expect(last24Hours([], NOON).at(-1)).toEqual({ hour: "2030-01-15T12:00:00.000Z", clicks: 0 });
    expect(last24Hours([], NOON - 1).at(-1)).toEqual({ hour: "2030-01-15T11:00:00.000Z", clicks: 0 });
  });
});

describe("getLinkStats", () => {
  let cp: InProcessControlPlane;
  beforeAll(async () => {
    cp = await startControlPlane({ now: NOON + 30 * 60_000 });
  });
  afterAll(() => cp?.close());

  test("reads the owner's link's rollups up to the clock's hour; another account gets not_found", async () => {
    const owner = (await cp.createKey("owner@example.com")).caller;
    await createLink(cp.deps, owner, { url: "https://example.com/", slug: "svc-stats" });
    const { id } = (await cp.deps.store.getLink(cp.deps.config.defaultDomain, "svc-stats"))!;
    const click = { linkId: id, country: "FR", device: "tablet", browser: "Firefox", os: "Android", referrer: null, variant: null };
    await cp.deps.store.recordClicks([{ ...click, batch: "b1", ts: NOON + 60_000 }, { ...click, batch: "b1", ts: NOON - HOUR }]);
    const stats = await getLinkStats(cp.deps, owner, "svc-stats");
    expect({ ...stats, last24h: stats.last24h.slice(-2) }).toEqual({
      slug: "svc-stats", totalClicks: 2, byDevice: { tablet: 2 }, byBrowser: { Firefox: 2 }, byCountry: { FR: 2 }, byVariant: {},
      last24h: [{ hour: "2030-01-15T11:00:00.000Z", clicks: 1 }, { hour: "2030-01-15T12:00:00.000Z", clicks: 1 }],
    });
    const stranger = (await cp.createKey("stranger@example.com")).caller;
    expect((await rejectionOf(getLinkStats(cp.deps, stranger, "svc-stats"))).code).toBe("not_found");
  });
});

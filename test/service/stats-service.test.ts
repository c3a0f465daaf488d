/**
 * control/stats/service.ts called directly: the original per-link stats, a link's and the account's analytics,
 * each for the owner only.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLink } from "../../control/links/service.ts";
import { getAccountAnalytics, getLinkAnalytics, getLinkStats } from "../../control/stats/service.ts";
import { DIMENSION_NAMES, type ClickDims } from "../../shared/clicks/dimensions.ts";
import type { Caller } from "../../control/deps.ts";
import { rejectionOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

const HOUR = 3_600_000;
const NOON = Date.UTC(2030, 0, 15, 12);

describe("stats service", () => {
  let cp: InProcessControlPlane;
  let owner: Caller;
  let stranger: Caller;
  beforeAll(async () => {
    cp = await startControlPlane({ now: NOON + 30 * 60_000 });
    owner = (await cp.createKey("owner@example.com")).caller;
    stranger = (await cp.createKey("stranger@example.com")).caller;
    await createLink(cp.deps, owner, { url: "https://example.com/", slug: "svc-stats", tags: ["t"] });
    const { id } = (await cp.deps.store.getLink(cp.deps.config.defaultDomain, "svc-stats"))!;
    const dims = { ...(Object.fromEntries(DIMENSION_NAMES.map((d) => [d, null])) as ClickDims), country: "FR", device: "tablet", browser: "Firefox", os: "Android" };
    const click = { batch: "b1", linkId: id, dims, firstVisit: true, referrerUrl: null };
    await cp.deps.store.recordClicks([
      { ...click, bot: false, ts: NOON + 60_000 },
      { ...click, bot: false, ts: NOON - HOUR },
      { ...click, bot: true, ts: NOON - 2 * HOUR, firstVisit: false },
    ]);
  });
  afterAll(() => cp?.close());

  test("getLinkStats: the original shape, bots included, the last 24 hours up to the clock's hour", async () => {
    const stats = await getLinkStats(cp.deps, owner, "svc-stats");
    expect({ ...stats, last24h: stats.last24h.slice(-3) }).toEqual({
      slug: "svc-stats", totalClicks: 3, byDevice: { tablet: 3 }, byBrowser: { Firefox: 3 }, byCountry: { FR: 3 }, byVariant: {},
      last24h: [{ hour: "2030-01-15T10:00:00.000Z", clicks: 1 }, { hour: "2030-01-15T11:00:00.000Z", clicks: 1 }, { hour: "2030-01-15T12:00:00.000Z", clicks: 1 }],
    });
    expect(stats.last24h).toHaveLength(24);
  });

  test("getLinkAnalytics and getAccountAnalytics answer the same question the same way; bots excluded by default", async () => {
    const link = await getLinkAnalytics(cp.deps, owner, "svc-stats", { interval: "hour", groupBy: "device" });
    expect(link.totals).toEqual({ clicks: 2, visitors: 2 });
    // The last 24 hours from 12:30 meet 25 UTC hours: yesterday's 12:00 (its second half) to today's 12:00.
    expect(link.series).toHaveLength(25);
    const account = await getAccountAnalytics(cp.deps, owner, { interval: "hour", groupBy: "device" });
    expect({ slug: "svc-stats", ...account } as object).toEqual(link);
    expect((await getAccountAnalytics(cp.deps, owner, { groupBy: "tag", bots: "include" })).breakdowns.tag!.rows).toEqual([{ value: "t", clicks: 3, visitors: 2 }]);
  });

  test("another account gets not_found for the link and nothing of it account-wide", async () => {
    expect((await rejectionOf(getLinkStats(cp.deps, stranger, "svc-stats"))).code).toBe("not_found");
    expect((await rejectionOf(getLinkAnalytics(cp.deps, stranger, "svc-stats", { interval: "day" }))).code).toBe("not_found");
    expect((await getAccountAnalytics(cp.deps, stranger, { bots: "include" })).totals).toEqual({ clicks: 0, visitors: 0 });
  });
});

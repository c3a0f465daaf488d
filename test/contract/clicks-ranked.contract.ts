/**
 * Store contract, clicks role: account totals and ranked link totals (readAccountTotals, readRankedLinks,
 * sumLinkTotals, readRecentLinkTotals), a link's settled totals summed per value over buckets (readSettledSums) and its cells per hour and value (readCellSums) and an account's cells of the hours not settled yet (readCells). They are derived from the
 * settled `via` rows, so each check compares them with those rows as readSettled answers them, after settling,
 * settling hours, a late click and a link's deletion. Runs after the settle contract (one settle state per
 * database): its days come after that contract's.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { DIMENSION_NAMES, type Dimension } from "../../shared/clicks/dimensions.ts";
import { grainStart, type RankGrain, type Store } from "../../shared/ports.ts";
import { click, collect, HOUR, linkFor, type StoreContext, T0 } from "./store-harness.ts";

const DAY = 24 * HOUR;
/** The first day these tests use: after every day of the settle contract. */
const D0 = Math.floor(T0 / DAY) * DAY + 480 * DAY;

type Sums = Map<string, [number, number]>;
const bump = (m: Sums, key: string, clicks: number, visitors: number) => {
  const [c, v] = m.get(key) ?? [0, 0];
  m.set(key, [c + clicks, v + visitors]);
};
const sorted = (m: Sums) => [...m].filter(([, [c, v]]) => c !== 0 || v !== 0).sort(([a], [b]) => (a < b ? -1 : 1));

export function runClickRankedContract(ctx: StoreContext): void {
  let store: Store;
  beforeAll(() => {
    store = ctx.store;
  });

  /** Checks the account's totals and ranked lists in [from, to) against its links' settled via rows. */
  async function expectConsistent(accountId: string, from: number, to: number) {
    const perDay: Sums = new Map();
    const links = new Map<string, Sums>();
    for (const grain of ["day", "month"] as const) {
      const perLink: Sums = new Map();
      for await (const r of store.readSettled({ accountId }, "via", grain === "day" ? from : grainStart("month", from), to, grain)) {
        if (grain === "day") bump(perDay, `${r.bucket}|${r.bot}`, r.clicks, r.visitors);
        bump(perLink, `${r.bucket}|${r.bot}|${r.linkId}`, r.clicks, r.visitors);
      }
      links.set(grain, perLink);
    }
    const accountRows: Sums = new Map();
    for await (const r of store.readAccountTotals(accountId, from, to)) bump(accountRows, `${r.bucket}|${r.bot}`, r.clicks, r.visitors);
    expect(sorted(accountRows)).toEqual(sorted(perDay));

    for (const [grain, perLink] of links as Map<RankGrain, Sums>) {
      const lists = new Set([...perLink.keys()].map((k) => k.split("|").slice(0, 2).join("|")));
      for (const list of lists) {
        const [bucket, bot] = list.split("|");
        const ranked = await store.readRankedLinks(accountId, grain, Number(bucket), bot === "true", 0, 1_000);
        // Best first; ties in any one order, the same on every page.
        expect(ranked.map((r) => r.clicks)).toEqual(ranked.map((r) => r.clicks).sort((a, b) => b - a));
        const want = sorted(new Map([...perLink].filter(([k]) => k.startsWith(`${list}|`)).map(([k, v]) => [k.split("|")[2]!, v])));
        expect(sorted(new Map(ranked.map((r) => [r.linkId, [r.clicks, r.visitors]])))).toEqual(want);
        const paged = [...(await store.readRankedLinks(accountId, grain, Number(bucket), bot === "true", 0, 1)), ...(await store.readRankedLinks(accountId, grain, Number(bucket), bot === "true", 1, 1_000))];
        expect(paged).toEqual(ranked);
      }
    }
  }

  /** Checks the link's cells summed per hour, bot and value of `dim` (readCellSums) against its cells summed; the rows' count. */
  async function expectCellSums(linkId: string, from: number, to: number, dim: Dimension): Promise<number> {
    const want: Sums = new Map();
    for await (const cell of store.readCells({ linkId }, from, to)) bump(want, `${cell.hour}|${cell.bot}|${cell.dims[dim]}`, cell.clicks, cell.visitors);
    const got: Sums = new Map();
    for (const r of await store.readCellSums(linkId, from, to, dim)) {
      expect(got.has(`${r.hour}|${r.bot}|${r.value}`)).toBe(false);
      bump(got, `${r.hour}|${r.bot}|${r.value}`, r.clicks, r.visitors);
    }
    expect(sorted(got)).toEqual(sorted(want));
    return got.size;
  }

  describe("clicks: account totals and ranked link totals", () => {
    test("follow settled days, settled hours, late clicks, imported cells and deleted links; another account's links are not in them", async () => {
      const day = D0;
      const accountId = await ctx.newAccount();
      const [l1, l2, l3] = [linkFor(accountId), linkFor(accountId), linkFor(accountId)];
      const other = linkFor(await ctx.newAccount());
      await ctx.insertOk([l1, l2, l3, other]);
      const n = (linkId: string, ts: number, count: number, over: Parameters<typeof click>[1] = {}) =>
        Array.from({ length: count }, (_, i) => click(linkId, { ts: ts + i, firstVisit: i === 0, ...over }));
      await store.recordClicks([
        ...n(l1.id, day + HOUR, 4), ...n(l1.id, day + 2 * HOUR, 1, { bot: true }), ...n(l1.id, day + DAY + HOUR, 2),
        ...n(l2.id, day + 3 * HOUR, 3), ...n(l2.id, day + DAY + 5 * HOUR, 4, { dims: { via: "qr" } }),
        ...n(l3.id, day + DAY + 7 * HOUR, 1), ...n(other.id, day + HOUR, 10),
      ]);
      await store.settleDays(day + 2 * DAY);
      await expectConsistent(accountId, day, day + 2 * DAY);
      const dayRanked = await store.readRankedLinks(accountId, "day", day, false, 0, 10);
      expect(dayRanked.map((r) => [r.linkId, r.clicks, r.visitors])).toEqual([[l1.id, 4, 1], [l2.id, 3, 1]]);
      expect(await store.readRankedLinks(accountId, "day", day, true, 0, 10)).toEqual([{ linkId: l1.id, clicks: 1, visitors: 1 }]);
      const sums = async (bots: boolean[]) =>
        new Map((await store.sumLinkTotals(accountId, [l1.id, l2.id, l3.id, other.id], [{ grain: "day", from: day, to: day + 2 * DAY }], bots)).map((r) => [r.linkId, r.clicks]));
      expect(await sums([false])).toEqual(new Map([[l1.id, 6], [l2.id, 7], [l3.id, 1]]));
      expect(await sums([false, true])).toEqual(new Map([[l1.id, 7], [l2.id, 7], [l3.id, 1]]));
      expect(await sums([true])).toEqual(new Map([[l1.id, 1]]));
      // Months: a day's clicks in its month's list, summed with a month run.
      const month = grainStart("month", day);
      const monthSums = await store.sumLinkTotals(accountId, [l2.id], [{ grain: "month", from: month, to: month + 1 }], [false]);
      expect(monthSums[0]!.clicks).toBe(grainStart("month", day + DAY) === month ? 7 : 3);

      // A dimension's rows summed per value over runs of buckets (readSettledSums) equal the rows read bucket by bucket.
      const runs = [{ grain: "day" as const, from: day, to: day + DAY }, { grain: "month" as const, from: grainStart("month", day + DAY), to: grainStart("month", day + DAY) + 1 }];
      for (const link of [l1, l2]) {
        const want: Sums = new Map();
        for (const r of runs) for await (const t of store.readSettled({ linkId: link.id }, "via", r.from, r.to, r.grain)) bump(want, `${t.value}|${t.bot}`, t.clicks, t.visitors);
        const got: Sums = new Map();
        for await (const t of store.readSettledSums(link.id, "via", runs)) {
          expect([t.linkId, t.dimension, t.bucket]).toEqual([link.id, "via", day]);
          expect(got.has(`${t.value}|${t.bot}`)).toBe(false);
          bump(got, `${t.value}|${t.bot}`, t.clicks, t.visitors);
        }
        expect(sorted(got)).toEqual(sorted(want));
      }
      expect(await collect(store.readSettledSums(l1.id, "via", []))).toEqual([]);
      // Only the bot flags asked for: l1 has a bot click on the first day.
      const flags = async (bots: boolean[]) => (await collect(store.readSettledSums(l1.id, "via", runs, bots))).map((t) => [t.value, t.bot, t.clicks]).sort();
      const both = await flags([false, true]);
      expect(both.some(([, bot]) => bot === true)).toBe(true);
      expect(await flags([false])).toEqual(both.filter(([, bot]) => bot === false));
      expect(await flags([true])).toEqual(both.filter(([, bot]) => bot === true));
      expect(await flags([])).toEqual([]);
      // A link's cells summed per hour, bot and one dimension's value (readCellSums) equal its cells summed.
      for (const [link, dim] of [[l1, "via"], [l2, "via"], [l1, "country"]] as const) await expectCellSums(link.id, day, day + 2 * DAY, dim);
      expect(await store.readCellSums(l2.id, day + 2 * HOUR, day + 3 * HOUR, "via")).toEqual([]);

      // Hours of the next day settled by settleHours are in that day's totals; cells after them are read by hour.
      await store.recordClicks([...n(l3.id, day + 2 * DAY + HOUR, 2), ...n(l2.id, day + 2 * DAY + 6 * HOUR, 1), ...n(other.id, day + 2 * DAY + 6 * HOUR, 1)]);
      expect(await store.settleHours(day + 2 * DAY + 5 * HOUR)).toBe(day + 2 * DAY + 5 * HOUR);
      await expectConsistent(accountId, day, day + 3 * DAY);
      expect(await store.readRankedLinks(accountId, "day", day + 2 * DAY, false, 0, 10)).toEqual([{ linkId: l3.id, clicks: 2, visitors: 1 }]);
      const recent = await collect(store.readCells({ accountId }, day + 2 * DAY + 5 * HOUR, day + 3 * DAY));
      expect(recent.map((c) => [c.linkId, c.hour, c.clicks])).toEqual([[l2.id, day + 2 * DAY + 6 * HOUR, 1]]);
      expect(await store.readRecentLinkTotals(accountId, day + 2 * DAY + 5 * HOUR, day + 2 * DAY + 7 * HOUR)).toEqual([
        { linkId: l2.id, hour: day + 2 * DAY + 6 * HOUR, bot: false, clicks: 1, visitors: 1 },
      ]);
      // Hours already settled, or too many of them, are not answered this way.
      expect(await store.readRecentLinkTotals(accountId, day + 2 * DAY + 4 * HOUR, day + 2 * DAY + 7 * HOUR)).toBeNull();
      expect(await store.readRecentLinkTotals(accountId, day + 2 * DAY + 5 * HOUR, day + 9 * DAY)).toBeNull();

      // A late click into a settled day, and one into a settled hour.
      await store.recordClicks([...n(l3.id, day + 3 * HOUR, 5, { batch: "late-1" }), ...n(l1.id, day + 2 * DAY + 2 * HOUR, 1, { batch: "late-2" })]);
      await expectConsistent(accountId, day, day + 3 * DAY);
      expect((await store.readRankedLinks(accountId, "day", day, false, 0, 1))[0]).toEqual({ linkId: l3.id, clicks: 5, visitors: 1 });

      // Cells imported into a settled day (an import into a database that settled it) reach them as well.
      const imported = { linkId: l2.id, hour: day + 4 * HOUR, dims: click(l2.id).dims, bot: false, clicks: 9, visitors: 2 };
      await store.importRecords([{ type: "cell", data: imported }]);
      await expectConsistent(accountId, day, day + 3 * DAY);
      expect((await store.readRankedLinks(accountId, "day", day, false, 0, 1))[0]).toEqual({ linkId: l2.id, clicks: 12, visitors: 3 });

      // A deleted link leaves its account's totals and every list.
      await store.deleteLink(l3.id);
      await expectConsistent(accountId, day, day + 3 * DAY);
      let accountClicks = 0;
      for await (const r of store.readAccountTotals(accountId, day, day + 3 * DAY)) accountClicks += r.clicks;
      expect(accountClicks).toBe(8 + 16); // l1: 4 + 1 bot + 2 + 1 late; l2: 3 + 4 + 9 imported (its click of hour 6 is not settled)
      expect((await sums([false, true])).has(l3.id)).toBe(false);
    });

    test("a link's cells summed per hour, bot flag and value (readCellSums) equal its cells summed, for every dimension", async () => {
      const day = D0 + 8 * DAY;
      const link = linkFor(await ctx.newAccount());
      await ctx.insertOk([link]);
      // Every dimension's values vary from click to click, null among them (first, middle and last place of the key).
      const valueOf = (i: number, j: number) => ((i + j) % 3 === 0 ? null : `v${(i * 7 + j) % 4}`);
      const dims = (i: number) => Object.fromEntries(DIMENSION_NAMES.map((d, j) => [d, valueOf(i, j)]));
      await store.recordClicks(Array.from({ length: 60 }, (_, i) =>
        click(link.id, { ts: day + (i % 2) * HOUR + i, bot: i % 5 === 0, firstVisit: i % 4 === 0, dims: dims(i) })));
      for (const dim of DIMENSION_NAMES) expect(await expectCellSums(link.id, day, day + 2 * HOUR, dim)).toBeGreaterThan(4);
      // Only the hours asked for.
      const second = await store.readCellSums(link.id, day + HOUR, day + 2 * HOUR, "country");
      expect(second.length).toBeGreaterThan(0);
      expect(second.every((r) => r.hour === day + HOUR)).toBe(true);
    });

    test("hour digests: a busy link-hour folded sums the same, with cells written after each fold, imported ones, and once settled", async () => {
      const day = D0 + 16 * DAY;
      await store.settleDays(day); // the days before: this day is the first not settled, its hours settle by the hour
      const link = linkFor(await ctx.newAccount());
      await ctx.insertOk([link]);
      const valueOf = (i: number, j: number) => ((i + j) % 3 === 0 ? null : `v${(i * 5 + j) % 6}`);
      const clicks = (from: number, n: number, hour: number, batch: string) => Array.from({ length: n }, (_, k) => {
        const i = from + k;
        // A city of its own for most clicks (as a busy link's cells are mostly one click each), null for some.
        const dims = Object.fromEntries(DIMENSION_NAMES.map((d, j) => [d, d === "city" ? (i % 9 === 0 ? null : `c${i}`) : valueOf(i, j)]));
        return click(link.id, { ts: day + hour * HOUR + i, batch, bot: i % 7 === 0, firstVisit: i % 3 === 0, dims });
      });
      const everyDim = async (from: number, to: number) => {
        for (const dim of DIMENSION_NAMES) await expectCellSums(link.id, from, to, dim);
      };
      await store.recordClicks([...clicks(0, 80, 2, "digest-1"), ...clicks(0, 10, 3, "digest-1")]);
      await everyDim(day, day + DAY);
      // Folded: the link-hours with at least the cells asked for since their last fold (both hours, one cell each at least).
      expect(await store.foldBusyHours(1)).toBeGreaterThanOrEqual(2);
      await everyDim(day, day + DAY);
      expect(await store.foldBusyHours(1)).toBe(0); // nothing written since
      // Written after the fold: new cells and more clicks in folded ones are read beside the digest.
      await store.recordClicks([...clicks(40, 60, 2, "digest-2")]);
      await everyDim(day + 2 * HOUR, day + 3 * HOUR);
      await everyDim(day, day + DAY);
      expect(await store.foldBusyHours(50)).toBe(1); // about 60 cells written to hour 2 since its fold, none to hour 3
      await everyDim(day, day + DAY);
      // Imported cells of a folded hour (an import of an export) count as well.
      await store.importRecords([{ type: "cell", data: { linkId: link.id, hour: day + 2 * HOUR, dims: click(link.id).dims, bot: false, clicks: 9, visitors: 2 } }]);
      await everyDim(day, day + DAY);
      await store.foldBusyHours(1); // folded or not (a store may count only the cells its click writes made), the same sums
      await everyDim(day, day + DAY);
      // Settled hours (their digests dropped) and a range across settled and unsettled hours.
      await store.recordClicks([...clicks(100, 20, 3, "digest-3")]);
      expect(await store.settleHours(day + 3 * HOUR)).toBe(day + 3 * HOUR);
      await everyDim(day, day + DAY);
      await everyDim(day + 2 * HOUR, day + 3 * HOUR);
      await store.settleDays(day + DAY);
      await everyDim(day, day + DAY);
      // A deleted link's cells and digests go with it.
      await store.recordClicks([...clicks(0, 30, 30, "digest-4")]);
      expect(await store.foldBusyHours(1)).toBeGreaterThanOrEqual(1);
      await store.deleteLink(link.id);
      expect(await store.readCellSums(link.id, day, day + 2 * DAY, "country")).toEqual([]);
    });
  });
}

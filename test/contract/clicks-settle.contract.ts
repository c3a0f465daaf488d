/**
 * Store contract, clicks role: settled totals (settleDays, readSettled, late clicks). The settled state is one per
 * database, so each test works on days after the previous test's, far after every other suite's clicks.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { DIMENSION_NAMES, type Dimension } from "../../shared/clicks/dimensions.ts";
import { grainStart, type ClickScope, type Store } from "../../shared/ports.ts";
import { click, collect, HOUR, linkFor, type StoreContext, T0 } from "./store-harness.ts";

const DAY = 24 * HOUR;
/** The first day these tests use: 400 days after T0's day. */
const D0 = Math.floor(T0 / DAY) * DAY + 400 * DAY;

export function runClickSettleContract(ctx: StoreContext): void {
  let store: Store;
  beforeAll(() => {
    store = ctx.store;
  });

  /** The settled rows of the scope in [from, to) as sorted entries, per dimension ("" for the hourly totals). */
  async function settledOf(scope: ClickScope, from: number, to: number): Promise<[string, number[]][]> {
    const got = new Map<string, number[]>();
    for (const dim of [null, ...DIMENSION_NAMES]) {
      for await (const r of store.readSettled(scope, dim, from, to)) {
        expect(r.dimension).toBe(dim);
        got.set(`${r.linkId}|${dim ?? ""}|${r.bucket}|${r.value}|${r.bot}`, [r.clicks, r.visitors]);
      }
    }
    return [...got].sort(([a], [b]) => (a < b ? -1 : 1));
  }

  /** What the settled rows must be: the cells' sums, per day and dimension value, and per hour. */
  async function expectedFromCells(scope: ClickScope, from: number, to: number): Promise<[string, number[]][]> {
    const want = new Map<string, number[]>();
    const add = (key: string, clicks: number, visitors: number) => {
      const [c, v] = want.get(key) ?? [0, 0];
      want.set(key, [c! + clicks, v! + visitors]);
    };
    for await (const cell of store.readCells(scope, from, to)) {
      add(`${cell.linkId}||${cell.hour}|null|${cell.bot}`, cell.clicks, cell.visitors);
      const day = Math.floor(cell.hour / DAY) * DAY;
      for (const d of DIMENSION_NAMES) add(`${cell.linkId}|${d}|${day}|${cell.dims[d]}|${cell.bot}`, cell.clicks, cell.visitors);
    }
    return [...want].sort(([a], [b]) => (a < b ? -1 : 1));
  }

  async function newLink(accountId?: string) {
    const link = linkFor(accountId ?? (await ctx.newAccount()));
    await ctx.insertOk([link]);
    return link;
  }

  /** Clicks over two days and a third, with bots, first visits and a mix of values. */
  const spread = (linkId: string, day: number) => [
    click(linkId, { ts: day + 1_000, firstVisit: true }),
    click(linkId, { ts: day + 1_500, dims: { device: "mobile", os: "iOS", referrer: "t.co" } }),
    click(linkId, { ts: day + 5 * HOUR, bot: true, dims: { country: null, device: "other" } }),
    click(linkId, { ts: day + DAY + 23 * HOUR, dims: { variant: "1", rule: "0", via: "qr" }, firstVisit: true }),
    click(linkId, { ts: day + 2 * DAY + HOUR }),
  ];

  describe("clicks: settled totals", () => {
    test("settleDays sums whole days per dimension value and per hour, equal to the cells; a second call changes nothing", async () => {
      const link = await newLink();
      await store.recordClicks(spread(link.id, D0));
      const settled = await store.settleDays(D0 + 2 * DAY + 7 * HOUR); // a day start or not: whole days only
      expect(settled).toBe(D0 + 2 * DAY);
      expect(await store.settledBefore()).toBe(D0 + 2 * DAY);
      const rows = await settledOf({ linkId: link.id }, D0, D0 + 2 * DAY);
      expect(rows).toEqual(await expectedFromCells({ linkId: link.id }, D0, D0 + 2 * DAY));
      expect(rows.find(([k]) => k === `${link.id}|device|${D0}|mobile|false`)?.[1]).toEqual([1, 0]);
      expect(rows.find(([k]) => k === `${link.id}|country|${D0}|null|true`)?.[1]).toEqual([1, 0]);
      expect(rows.find(([k]) => k === `${link.id}||${D0}|null|false`)?.[1]).toEqual([2, 1]);
      // The third day is not over: nothing of it is settled.
      expect(await settledOf({ linkId: link.id }, D0 + 2 * DAY, D0 + 3 * DAY)).toEqual([]);

      expect(await store.settleDays(D0 + 2 * DAY)).toBe(D0 + 2 * DAY);
      expect(await store.settleDays(D0)).toBe(D0 + 2 * DAY); // an earlier bound never goes back
      expect(await settledOf({ linkId: link.id }, D0, D0 + 2 * DAY)).toEqual(rows);
    });

    test("two calls at once settle each day once", async () => {
      const day = D0 + 10 * DAY;
      const link = await newLink();
      await store.recordClicks(spread(link.id, day));
      const other = await ctx.open();
      const answers = await Promise.all([store.settleDays(day + 2 * DAY), other.settleDays(day + 2 * DAY)]);
      expect(answers).toEqual([day + 2 * DAY, day + 2 * DAY]);
      expect(await settledOf({ linkId: link.id }, day, day + 2 * DAY)).toEqual(await expectedFromCells({ linkId: link.id }, day, day + 2 * DAY));
    });

    test("a late click into a settled day is added to its settled totals; a redelivery of it is not", async () => {
      const day = D0 + 20 * DAY;
      const link = await newLink();
      await store.recordClicks(spread(link.id, day));
      await store.settleDays(day + 2 * DAY);
      const late = [click(link.id, { ts: day + 3 * HOUR, dims: { browser: "Firefox" }, firstVisit: true }), click(link.id, { ts: day + 3 * HOUR, bot: true })];
      const batch = late.map((c) => ({ ...c, batch: `late-${link.id}` }));
      await store.recordClicks(batch);
      await store.recordClicks(batch);
      const rows = await settledOf({ linkId: link.id }, day, day + 2 * DAY);
      expect(rows).toEqual(await expectedFromCells({ linkId: link.id }, day, day + 2 * DAY));
      expect(rows.find(([k]) => k === `${link.id}|browser|${day}|Firefox|false`)?.[1]).toEqual([1, 1]);
      expect(rows.find(([k]) => k === `${link.id}||${day + 3 * HOUR}|null|true`)?.[1]).toEqual([1, 0]);
      expect((await store.getLinkById(link.id))?.hits).toBe(7);
    });

    test("cells imported into a settled day are added to its settled totals; imported again, they are skipped", async () => {
      const day = D0 + 40 * DAY;
      const link = await newLink();
      await store.recordClicks(spread(link.id, day));
      await store.settleDays(day + 2 * DAY);
      const dims = { ...click(link.id).dims, country: "JP" };
      const cell = { type: "cell" as const, data: { linkId: link.id, hour: day + 2 * HOUR, dims, bot: false, clicks: 4, visitors: 3 } };
      await store.importRecords([cell]);
      await store.importRecords([cell]);
      const rows = await settledOf({ linkId: link.id }, day, day + 2 * DAY);
      expect(rows).toEqual(await expectedFromCells({ linkId: link.id }, day, day + 2 * DAY));
      expect(rows.find(([k]) => k === `${link.id}|country|${day}|JP|false`)?.[1]).toEqual([4, 3]);
    });

    test("an account's settled totals are its own links' only", async () => {
      const day = D0 + 30 * DAY;
      const mine = await ctx.newAccount();
      const [a, b, other] = [await newLink(mine), await newLink(mine), await newLink()];
      await store.recordClicks([...spread(a.id, day), ...spread(b.id, day), ...spread(other.id, day)]);
      await store.settleDays(day + 2 * DAY);
      const rows = await settledOf({ accountId: mine }, day, day + 2 * DAY);
      expect(rows).toEqual(await expectedFromCells({ accountId: mine }, day, day + 2 * DAY));
      expect(new Set(rows.map(([k]) => k.split("|")[0]))).toEqual(new Set([a.id, b.id]));
      const country: Dimension = "country";
      const values = (await collect(store.readSettled({ linkId: a.id }, country, day, day + DAY))).map((r) => `${r.value} ${r.bot}`);
      expect(values.sort()).toEqual(["US false", "null true"]);
    });

    test("week and month rows hold the sums of their day rows, for settled days and late clicks alike", async () => {
      const day = D0 + 50 * DAY;
      const mine = await ctx.newAccount();
      const [a, b] = [await newLink(mine), await newLink(mine)];
      await store.recordClicks([...spread(a.id, day), ...spread(b.id, day), ...spread((await newLink()).id, day)]);
      await store.settleDays(day + 3 * DAY);
      const late = click(a.id, { ts: day + DAY + 2 * HOUR, dims: { country: "JP" }, firstVisit: true });
      await store.recordClicks([late]);
      const ALL = 2 ** 50;
      for (const scope of [{ linkId: a.id }, { accountId: mine }] as ClickScope[]) {
        for (const d of DIMENSION_NAMES) {
          const days = await collect(store.readSettled(scope, d, 0, ALL));
          for (const grain of ["week", "month"] as const) {
            const want = new Map<string, number[]>();
            for (const r of days) {
              const key = `${r.linkId}|${r.dimension}|${grainStart(grain, r.bucket)}|${r.value}|${r.bot}`;
              const [c, v] = want.get(key) ?? [0, 0];
              want.set(key, [c! + r.clicks, v! + r.visitors]);
            }
            const got = (await collect(store.readSettled(scope, d, 0, ALL, grain))).map((r): [string, number[]] => [`${r.linkId}|${r.dimension}|${r.bucket}|${r.value}|${r.bot}`, [r.clicks, r.visitors]]);
            expect(got.sort(([x], [y]) => (x < y ? -1 : 1))).toEqual([...want].sort(([x], [y]) => (x < y ? -1 : 1)));
          }
        }
      }
      // The first link's country over its settled days, summed by month: US 3 clicks (2 first visits), JP 1 (late), unknown 1 bot.
      const month = await collect(store.readSettled({ linkId: a.id }, "country", 0, ALL, "month"));
      const byValue = new Map<string, number[]>();
      for (const r of month) byValue.set(`${r.value} ${r.bot}`, [(byValue.get(`${r.value} ${r.bot}`)?.[0] ?? 0) + r.clicks, (byValue.get(`${r.value} ${r.bot}`)?.[1] ?? 0) + r.visitors]);
      expect(Object.fromEntries(byValue)).toEqual({ "US false": [4, 2], "JP false": [1, 1], "null true": [1, 0] });
    });

    test("settleHours settles the hours of the first day not settled into its rows and hourly ones; late clicks reach them; settleDays adds the rest", async () => {
      const day = D0 + 60 * DAY;
      const link = await newLink();
      const scope = { linkId: link.id };
      await store.recordClicks([...spread(link.id, day), click(link.id, { ts: day + 4 * HOUR, dims: { country: "DE" }, firstVisit: true })]);
      expect(await store.settleDays(day)).toBe(day);
      expect(await store.settleHours(day + 6 * HOUR + 300_000)).toBe(day + 6 * HOUR);
      expect(await store.settledHoursBefore()).toBe(day + 6 * HOUR);
      expect(await store.settledBefore()).toBe(day);
      /** Hourly rows per dimension (and link totals) of [from, to) as sorted entries, and what the cells say they must be. */
      const hourRows = async () => {
        const got = new Map<string, number[]>();
        for (const dim of [null, ...DIMENSION_NAMES]) {
          for await (const r of store.readSettled(scope, dim, day, day + DAY, "hour")) got.set(`${dim ?? ""}|${r.bucket}|${r.value}|${r.bot}`, [r.clicks, r.visitors]);
        }
        return [...got].sort(([a], [b]) => (a < b ? -1 : 1));
      };
      const hourCells = async (to: number) => {
        const want = new Map<string, number[]>();
        const add = (key: string, c: number, v: number) => {
          const [x, y] = want.get(key) ?? [0, 0];
          want.set(key, [x! + c, y! + v]);
        };
        for await (const cell of store.readCells(scope, day, to)) {
          for (const dim of [null, ...DIMENSION_NAMES]) add(`${dim ?? ""}|${cell.hour}|${dim ? cell.dims[dim] : null}|${cell.bot}`, cell.clicks, cell.visitors);
        }
        return [...want].sort(([a], [b]) => (a < b ? -1 : 1));
      };
      expect(await hourRows()).toEqual(await hourCells(day + 6 * HOUR));
      expect((await hourRows()).find(([k]) => k === `country|${day + 4 * HOUR}|DE|false`)?.[1]).toEqual([1, 1]);
      // The day's rows (and its week's and month's) hold the settled hours too.
      expect(await settledOf(scope, day, day + DAY)).toEqual(await expectedFromCells(scope, day, day + 6 * HOUR));

      // A late click into a settled hour (and its redelivery) and one into an hour not settled yet.
      const late = [click(link.id, { ts: day + 3 * HOUR, dims: { browser: "Firefox" }, firstVisit: true, batch: `late-h-${link.id}` })];
      await store.recordClicks(late);
      await store.recordClicks(late);
      await store.recordClicks([click(link.id, { ts: day + 7 * HOUR })]);
      expect(await hourRows()).toEqual(await hourCells(day + 6 * HOUR));
      expect((await hourRows()).find(([k]) => k === `browser|${day + 3 * HOUR}|Firefox|false`)?.[1]).toEqual([1, 1]);
      expect(await settledOf(scope, day, day + DAY)).toEqual(await expectedFromCells(scope, day, day + 6 * HOUR));
      const month = await collect(store.readSettled(scope, "browser", 0, 2 ** 50, "month"));
      expect(month.filter((r) => r.value === "Firefox").map((r) => r.clicks)).toEqual([1]);

      // At most the rest of that day; then settleDays makes its day rows and leaves no hourly dimension rows.
      expect(await store.settleHours(day + 3 * DAY)).toBe(day + DAY);
      expect(await hourRows()).toEqual(await hourCells(day + DAY));
      expect(await store.settleDays(day + DAY)).toBe(day + DAY);
      expect(await store.settledHoursBefore()).toBe(day + DAY);
      expect((await hourRows()).filter(([k]) => !k.startsWith("|"))).toEqual([]);
      expect(await settledOf(scope, day, day + DAY)).toEqual(await expectedFromCells(scope, day, day + DAY));
    });

    test("settleHours from two stores at once settles each hour once", async () => {
      const day = D0 + 61 * DAY;
      const link = await newLink();
      await store.recordClicks(spread(link.id, day));
      await store.settleDays(day);
      const other = await ctx.open();
      expect(await Promise.all([store.settleHours(day + 8 * HOUR), other.settleHours(day + 8 * HOUR)])).toEqual([day + 8 * HOUR, day + 8 * HOUR]);
      const totals = await collect(store.readSettled({ linkId: link.id }, null, day, day + DAY));
      expect(totals.map((r) => `${r.bucket - day} ${r.bot} ${r.clicks}`).sort()).toEqual([`0 false 2`, `${5 * HOUR} true 1`].sort());
    });
  });
}

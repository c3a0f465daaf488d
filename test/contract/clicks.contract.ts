/** Store contract, clicks role (ClickStore): recording, rollup cells, the raw click log and its retention. */
import { beforeAll, describe, expect, test } from "bun:test";
import type { LinkRecord } from "../../shared/link.ts";
import type { ClickCell, ClickScope, Store, StoredClick } from "../../shared/ports.ts";
import { runClickSettleContract } from "./clicks-settle.contract.ts";
import { runClickRankedContract } from "./clicks-ranked.contract.ts";
import { click, collect, HOUR, linkFor, NO_DIMS, type StoreContext, T0, uid } from "./store-harness.ts";

const EVER = Number.MAX_SAFE_INTEGER;

/** Cells summed per key (readCells may give a key more than once) in a stable order, for comparisons. */
export const sortCells = (cells: ClickCell[]) => {
  const byKey = new Map<string, ClickCell>();
  for (const c of cells) {
    const key = `${c.linkId}|${c.hour}|${JSON.stringify(c.dims)}|${c.bot}`;
    const sum = byKey.get(key);
    byKey.set(key, sum ? { ...sum, clicks: sum.clicks + c.clicks, visitors: sum.visitors + c.visitors } : c);
  }
  return [...byKey].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, c]) => c);
};

export function runClickContract(ctx: StoreContext): void {
  let store: Store;
  beforeAll(() => {
    store = ctx.store;
  });
  const { newAccount, insertOk, rawClicksOf, clicksOf } = ctx;
  const cellsOf = async (scope: ClickScope, from = 0, to = EVER) => sortCells(await collect(store.readCells(scope, from, to)));

  describe("clicks", () => {
    async function newLink(over: Partial<LinkRecord> = {}, accountId?: string): Promise<LinkRecord> {
      const link = linkFor(accountId ?? (await newAccount()), over);
      await insertOk([link]);
      return link;
    }

    test("clicks come back as cells per hour, dimensions and bot flag, with every dimension, and count as hits", async () => {
      const link = await newLink({ hits: 10 });
      const all = { country: "DE", region: "DE-BY", city: "München", device: "mobile", browser: "Safari", os: "iOS",
        referrer: "news.ycombinator.com", variant: "1", rule: "0", via: "qr" };
      const b = uid();
      await store.recordClicks([
        click(link.id, { batch: b, ts: T0 + 1_000, dims: all, firstVisit: true }),
        click(link.id, { batch: b, ts: T0 + 59 * 60_000, dims: all }),
        click(link.id, { batch: b, ts: T0 + 2_000, dims: all, bot: true }),
        click(link.id, { batch: b, ts: T0 + HOUR + 5, dims: { country: null, variant: null }, firstVisit: true }),
      ]);
      expect((await store.getLinkById(link.id))?.hits).toBe(14);
      const base = { country: "US", device: "desktop", browser: "Chrome", os: "Windows", via: "link" };
      expect(await cellsOf({ linkId: link.id })).toEqual(sortCells([
        { linkId: link.id, hour: T0, dims: all, bot: false, clicks: 2, visitors: 1 },
        { linkId: link.id, hour: T0, dims: all, bot: true, clicks: 1, visitors: 0 },
        { linkId: link.id, hour: T0 + HOUR, dims: { ...NO_DIMS, ...base, country: null }, bot: false, clicks: 1, visitors: 1 },
      ]));
      expect(await cellsOf({ linkId: link.id }, T0 + HOUR, T0 + 2 * HOUR)).toHaveLength(1);
      expect(await cellsOf({ linkId: link.id }, T0 + 2 * HOUR, EVER)).toEqual([]);
    });

    test("a redelivered batch counts once; several batches in one call each count; a later call adds to the same cell", async () => {
      const link = await newLink();
      const b1 = [click(link.id, { batch: "b1" }), click(link.id, { batch: "b1", firstVisit: true })];
      const b2 = [click(link.id, { batch: `b2-${uid()}` })];
      await store.recordClicks([...b1.map((c) => ({ ...c, batch: `b1-${link.id}` })), ...b2]);
      await store.recordClicks(b1.map((c) => ({ ...c, batch: `b1-${link.id}` })));
      await store.recordClicks(b2);
      expect(await clicksOf(link.id)).toBe(3);
      expect((await store.getLinkById(link.id))?.hits).toBe(3);
      await store.recordClicks([click(link.id, { firstVisit: true })]);
      expect(await cellsOf({ linkId: link.id })).toEqual([
        { linkId: link.id, hour: T0, dims: click(link.id).dims, bot: false, clicks: 4, visitors: 2 },
      ]);
      expect((await rawClicksOf(link.id)).length).toBe(4);
    });

    test("clicks of a deleted or unknown link are dropped; the rest of their batch is kept", async () => {
      const keep = await newLink();
      const gone = await newLink();
      await store.deleteLink(gone.id);
      const batch = uid();
      await store.recordClicks([click(gone.id, { batch }), click(keep.id, { batch }), click(uid(), { batch })]);
      expect(await clicksOf(keep.id)).toBe(1);
      expect(await clicksOf(gone.id)).toBe(0);
      expect((await store.getLinkById(keep.id))?.hits).toBe(1);
      expect(await rawClicksOf(gone.id)).toEqual([]);
      expect((await rawClicksOf(keep.id)).map((c) => c.linkId)).toEqual([keep.id]);
    });

    test("an account's cells and raw clicks are its own links' only", async () => {
      const mine = await newAccount();
      const [a, b] = [await newLink({}, mine), await newLink({}, mine)];
      const other = await newLink();
      const batch = uid(); // one batch with clicks of both accounts, as the drain delivers them
      await store.recordClicks([
        click(a.id, { batch }), click(b.id, { batch, ts: T0 + HOUR }), click(other.id, { batch }), click(a.id, { batch }),
      ]);
      const cells = await cellsOf({ accountId: mine });
      expect(cells.map((c) => [c.linkId, c.hour, c.clicks])).toEqual(
        [[a.id, T0, 2], [b.id, T0 + HOUR, 1]].sort((x, y) => (`${x[0]}${x[1]}` < `${y[0]}${y[1]}` ? -1 : 1)),
      );
      expect((await cellsOf({ linkId: a.id })).map((c) => c.clicks)).toEqual([2]);
      const log = await collect(store.readClickLog({ accountId: mine }, 0, EVER));
      expect(log.map((c) => c.linkId).sort()).toEqual([a.id, a.id, b.id].sort());
      expect((await collect(store.readClickLog({ accountId: await newAccount() }, 0, EVER)))).toEqual([]);
      expect(await cellsOf({ accountId: uid() })).toEqual([]);
    });

    test("the raw log gives back every field, hostile strings included, within [from, to), oldest batch first", async () => {
      const link = await newLink();
      const hostile = `a,"b"'c'; DROP TABLE links; -- ü 😀 \\ \u2028`; // a dimension value holds no control character
      const early: StoredClick[] = [
        click(link.id, { batch: `e-${link.id}`, ts: T0, referrerUrl: `https://x.example/?q=${hostile}\r\n,"`, dims: { city: hostile, referrer: "x.example" } }),
        click(link.id, { batch: `e-${link.id}`, ts: T0 + 10, bot: true, firstVisit: true, dims: { ...NO_DIMS } }),
      ];
      const late = [click(link.id, { batch: `l-${link.id}`, ts: T0 + 3 * HOUR, dims: { variant: "0", rule: "2", via: "qr" } })];
      await store.recordClicks(late);
      await store.recordClicks(early);
      expect(await rawClicksOf(link.id)).toEqual([...early, ...late]);
      expect(await collect(store.readClickLog({ linkId: link.id }, T0 + 10, T0 + 3 * HOUR))).toEqual([early[1]!]);
      expect(await collect(store.readClickLog({ linkId: link.id }, T0 + 3 * HOUR, T0 + 3 * HOUR + 1))).toEqual(late);
      expect(await collect(store.readClickLog({ linkId: uid() }, 0, EVER))).toEqual([]);
    });

    test("pruneClickLog deletes batches whose newest click is older than the bound, and says how many clicks went", async () => {
      // Far before every other test's clicks, so the count is this test's own.
      const link = await newLink();
      const old = T0 - 1_000 * 24 * HOUR;
      await store.recordClicks([click(link.id, { batch: `p1-${link.id}`, ts: old }), click(link.id, { batch: `p1-${link.id}`, ts: old + 5 })]);
      await store.recordClicks([click(link.id, { batch: `p2-${link.id}`, ts: old + 5 }), click(link.id, { batch: `p2-${link.id}`, ts: old + 100 })]);
      expect(await store.pruneClickLog(old + 5)).toBe(0);
      expect(await store.pruneClickLog(old + 6)).toBe(2);
      expect((await rawClicksOf(link.id)).map((c) => c.ts)).toEqual([old + 5, old + 100]);
      expect(await store.pruneClickLog(old + 6)).toBe(0);
      // Cells are kept for ever: stats stay whole after the raw log is gone.
      expect(await clicksOf(link.id)).toBe(4);
    });

    test("recorded clicks' cells imported back into the same store are skipped, as imported cells are", async () => {
      const link = await newLink();
      await store.recordClicks([click(link.id, { firstVisit: true }), click(link.id, { dims: { country: "JP" } })]);
      await store.recordClicks([click(link.id)]);
      const cells = await cellsOf({ linkId: link.id });
      expect(cells.map((c) => c.clicks).sort()).toEqual([1, 2]);
      const result = await store.importRecords(cells.map((data) => ({ type: "cell" as const, data })));
      expect(result.cell).toEqual({ inserted: 0, skipped: 2 });
      expect(await cellsOf({ linkId: link.id })).toEqual(cells);
    });

    test("batches from concurrent writers all count, on the same cells", async () => {
      const link = await newLink();
      const other = await ctx.open();
      await Promise.all(
        Array.from({ length: 8 }, (_, i) => (i % 2 ? store : other).recordClicks([click(link.id), click(link.id, { firstVisit: true })])),
      );
      expect(await cellsOf({ linkId: link.id })).toEqual([
        { linkId: link.id, hour: T0, dims: click(link.id).dims, bot: false, clicks: 16, visitors: 8 },
      ]);
      expect((await store.getLinkById(link.id))?.hits).toBe(16);
    });
  });

  runClickSettleContract(ctx);
  runClickRankedContract(ctx);
}

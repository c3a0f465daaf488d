/** Store contract, clicks-and-stats role (ClickStore). */
import { beforeAll, describe, expect, test } from "bun:test";
import type { LinkRecord } from "../../shared/link.ts";
import type { Store, StoredClick } from "../../shared/ports.ts";
import { click, HOUR, linkFor, type StoreContext, T0, uid } from "./store-harness.ts";

export function runClickContract(ctx: StoreContext): void {
  let store: Store;
  beforeAll(() => {
    store = ctx.store;
  });
  const { newAccount, insertOk, rawClicksOf } = ctx;

  describe("clicks and stats", () => {
    async function newLink(over: Partial<LinkRecord> = {}): Promise<LinkRecord> {
      const link = linkFor(await newAccount(), over);
      await insertOk([link]);
      return link;
    }

    test("recorded clicks count as hits and roll up by device, browser, country, variant and hour", async () => {
      const link = await newLink({ hits: 10 });
      await store.recordClicks([
        click(link.id, { ts: T0 + 1_000, device: "desktop", browser: "Chrome", country: "US", variant: 0 }),
        click(link.id, { ts: T0 + 59 * 60_000, device: "mobile", browser: "Safari", country: "US", variant: 1 }),
        click(link.id, { ts: T0 + HOUR, device: "mobile", browser: "Safari", country: null, variant: 1 }),
        click(link.id, { ts: T0 + HOUR + 5, device: "mobile", browser: "Chrome", country: "DE", variant: null }),
        click(link.id, { ts: T0 + 3 * HOUR + 1, device: "tablet", browser: "Firefox", country: "DE", variant: 0 }),
      ]);
      expect((await store.getLinkById(link.id))?.hits).toBe(15);
      expect(await store.getStats(link.id, T0 + HOUR)).toEqual({
        total: 5,
        byDevice: { desktop: 1, mobile: 3, tablet: 1 },
        byBrowser: { Chrome: 2, Safari: 2, Firefox: 1 },
        byCountry: { US: 2, DE: 2, unknown: 1 }, // unknown country is reported under "unknown"
        byVariant: { "0": 2, "1": 2 }, // only clicks that were served an A/B variant
        hourly: [
          { hour: T0 + HOUR, clicks: 2 },
          { hour: T0 + 3 * HOUR, clicks: 1 },
        ],
      });
      // Totals cover all time; hourly starts at fromHour.
      const all = await store.getStats(link.id, 0);
      expect(all.total).toBe(5);
      expect(all.hourly).toEqual([
        { hour: T0, clicks: 2 },
        { hour: T0 + HOUR, clicks: 2 },
        { hour: T0 + 3 * HOUR, clicks: 1 },
      ]);
      expect((await store.getStats(link.id, T0 + 4 * HOUR)).hourly).toEqual([]);
    });

    test("clicks accumulate across batches", async () => {
      const link = await newLink();
      await store.recordClicks([click(link.id), click(link.id)]);
      await store.recordClicks([click(link.id)]);
      expect((await store.getLinkById(link.id))?.hits).toBe(3);
      const stats = await store.getStats(link.id, T0);
      expect(stats.total).toBe(3);
      expect(stats.hourly).toEqual([{ hour: T0, clicks: 3 }]);
    });

    test("a redelivered batch is written once, whole: its clicks are neither lost nor counted twice", async () => {
      const link = await newLink();
      const b1 = [click(link.id, { batch: "b1" }), click(link.id, { batch: "b1" }), click(link.id, { batch: "b1", ts: T0 + HOUR })];
      await store.recordClicks(b1);
      await store.recordClicks(b1);
      // Delivered again beside a new batch: only the new one counts.
      await store.recordClicks([...b1, click(link.id, { batch: "b2" })]);
      expect((await store.getLinkById(link.id))?.hits).toBe(4);
      const stats = await store.getStats(link.id, 0);
      expect(stats.total).toBe(4);
      expect(stats.hourly).toEqual([{ hour: T0, clicks: 3 }, { hour: T0 + HOUR, clicks: 1 }]);
      expect((await rawClicksOf(link.id)).map((c) => c.batch)).toEqual(["b1", "b1", "b1", "b2"]);
    });

    test("a batch with clicks of several links is kept per link; redelivered, it counts for none of them again", async () => {
      const a = await newLink();
      const b = await newLink();
      const batch = [click(a.id, { batch: "mixed" }), click(b.id, { batch: "mixed" }), click(a.id, { batch: "mixed" })];
      await store.recordClicks(batch);
      await store.recordClicks(batch);
      expect((await store.getLinkById(a.id))?.hits).toBe(2);
      expect((await store.getLinkById(b.id))?.hits).toBe(1);
      expect((await rawClicksOf(a.id)).length).toBe(2);
      expect(await rawClicksOf(b.id)).toEqual([{ ...batch[1]! }]);
    });

    test("many batches in one call: new ones are all counted, known ones among them are not", async () => {
      const link = await newLink();
      const batchOf = (name: string, n: number) => Array.from({ length: n }, () => click(link.id, { batch: name }));
      const first = Array.from({ length: 60 }, (_, i) => batchOf(`f${i}`, 3));
      await store.recordClicks(first.flat());
      expect((await store.getStats(link.id, 0)).total).toBe(180);
      // 40 known batches interleaved with 50 new ones, each batch's clicks together.
      const later = Array.from({ length: 50 }, (_, i) => batchOf(`l${i}`, 2));
      const mixed = later.flatMap((b, i) => (i < 40 ? [...first[i]!, ...b] : b));
      await store.recordClicks(mixed);
      expect((await store.getLinkById(link.id))?.hits).toBe(280);
      expect((await store.getStats(link.id, 0)).total).toBe(280);
    });

    test("rawClicks gives back every stored click with its fields, batch by batch, oldest first", async () => {
      const link = await newLink();
      const early = [
        click(link.id, { batch: "early", ts: T0 + 5, country: "US", device: "mobile", browser: "Safari", os: "iOS", referrer: "https://news.example/a?b=1", variant: 1 }),
        click(link.id, { batch: "early", ts: T0 + 9, country: null, device: "desktop", browser: "Firefox", os: "Linux", referrer: null, variant: null }),
      ];
      const late = [click(link.id, { batch: "late", ts: T0 + HOUR, country: "DE", referrer: "\u00e9t\u00e9 \"quoted\"", variant: 0 })];
      await store.recordClicks(late);
      await store.recordClicks(early);
      await store.recordClicks([click(uid(), { batch: "orphan" })]); // unknown link: nothing stored
      expect(await rawClicksOf(link.id)).toEqual([...early, ...late]);
    });

    test("raw clicks of several links and batches written together keep every character of their texts", async () => {
      const [a, b] = [await newLink(), await newLink()];
      const odd = ['say "hi"', "back\\slash\\", "line\nbreak\ttab", "ctl\u0001\u0002", "{braces},[commas]", "NULL", "", "\u00e9t\u00e9 \ud83d\ude80"];
      const clicks = odd.flatMap((referrer, i) => [
        click(a.id, { batch: `m${i % 3}`, ts: T0 + i, referrer, browser: `B "${i}"` }),
        click(b.id, { batch: `m${i % 3}`, ts: T0 + i, referrer, os: `os\\${i}` }),
      ]);
      await store.recordClicks(clicks);
      const byBatchThenTime = (x: StoredClick, y: StoredClick) => x.batch.localeCompare(y.batch) || x.ts - y.ts;
      expect((await rawClicksOf(a.id)).sort(byBatchThenTime)).toEqual(clicks.filter((c) => c.linkId === a.id).sort(byBatchThenTime));
      expect((await rawClicksOf(b.id)).sort(byBatchThenTime)).toEqual(clicks.filter((c) => c.linkId === b.id).sort(byBatchThenTime));
    });

    test("the same batch delivered twice concurrently is counted once", async () => {
      const link = await newLink();
      const batch = Array.from({ length: 20 }, () => click(link.id));
      await Promise.all([store.recordClicks(batch), store.recordClicks(batch)]);
      expect((await store.getLinkById(link.id))?.hits).toBe(20);
      expect((await store.getStats(link.id, 0)).total).toBe(20);
    });

    test("clicks of deleted or unknown links are dropped without failing the batch", async () => {
      const kept = await newLink();
      const gone = await newLink();
      await store.deleteLink(gone.id);
      await store.recordClicks([click(gone.id), click(kept.id), click(uid()), click(kept.id)]);
      expect((await store.getLinkById(kept.id))?.hits).toBe(2);
      expect((await store.getStats(gone.id, 0)).total).toBe(0);
    });

    test("recordClicks of nothing is a no-op", async () => {
      await store.recordClicks([]);
    });

    test("stats of a link without clicks are zeros", async () => {
      const link = await newLink();
      const empty = { total: 0, byDevice: {}, byBrowser: {}, byCountry: {}, byVariant: {}, hourly: [] };
      expect(await store.getStats(link.id, 0)).toEqual(empty);
      expect(await store.getStats(uid(), 0)).toEqual(empty);
    });

    test("stats are per link", async () => {
      const a = await newLink();
      const b = await newLink();
      await store.recordClicks([click(a.id), click(b.id), click(b.id)]);
      expect((await store.getStats(a.id, 0)).total).toBe(1);
      expect((await store.getStats(b.id, 0)).total).toBe(2);
    });

    test("a consumer-sized batch of 2,000 clicks is written quickly and summed exactly", async () => {
      const link = await newLink();
      const devices = ["desktop", "mobile", "tablet"];
      const batch = Array.from({ length: 2000 }, (_, i) =>
        click(link.id, { ts: T0 + (i % 48) * HOUR + i, device: devices[i % 3]!, country: i % 5 ? "FR" : null }),
      );
      const started = performance.now();
      await store.recordClicks(batch);
      expect(performance.now() - started).toBeLessThan(3000);
      const stats = await store.getStats(link.id, T0 + 24 * HOUR);
      expect(stats.total).toBe(2000);
      expect(stats.byCountry).toEqual({ FR: 1600, unknown: 400 });
      expect(stats.byDevice.desktop).toBe(667);
      expect(stats.hourly).toHaveLength(24);
      const since = batch.filter((c) => c.ts >= T0 + 24 * HOUR).length;
      expect(stats.hourly.reduce((s, h) => s + h.clicks, 0)).toBe(since);
      expect((await store.getLinkById(link.id))?.hits).toBe(2000);
    });
  });
}

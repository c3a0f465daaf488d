/** Click storage upkeep (control/clicks/maintenance.ts) against a real SQLite store, and CLICK_RETENTION_DAYS. */
import { afterAll, describe, expect, test } from "bun:test";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { ConfigError, loadConfig } from "../../shared/config.ts";
import { maintainClicks, startClickMaintenance } from "../../control/clicks/maintenance.ts";
import { newLinkRecord } from "../../shared/link.ts";
import { DIMENSION_NAMES, type ClickDims } from "../../shared/clicks/dimensions.ts";
import type { StoredClick } from "../../shared/ports.ts";

const DAY = 86_400_000;
const NOW = Date.UTC(2030, 5, 10, 15, 30);
const TODAY = Date.UTC(2030, 5, 10);
const dims = Object.fromEntries(DIMENSION_NAMES.map((d) => [d, null])) as ClickDims;
const click = (batch: string, ts: number): StoredClick => ({ batch, linkId: "l", ts, dims, bot: false, firstVisit: false, referrerUrl: null });

const stores: SqliteStore[] = [];
afterAll(async () => {
  for (const s of stores) await s.close();
});

async function storeWithClicks(): Promise<SqliteStore> {
  const store = new SqliteStore(":memory:");
  stores.push(store);
  await store.migrate();
  await store.createAccount({ id: "a", email: "a@x.io", passwordHash: "h", createdAt: 0 });
  await store.insertLinks([newLinkRecord({ id: "l", accountId: "a", domain: "d", slug: "s", target: "https://e.com", createdAt: 0 })]);
  await store.recordClicks([click("old", NOW - 100 * DAY), click("recent", NOW - 3 * DAY), click("today", NOW - 60_000)]);
  return store;
}

const pick = (s: SqliteStore) => ({
  settledBefore: () => s.settledBefore(), settleHours: (before: number) => s.settleHours(before), pruneClickLog: (before: number) => s.pruneClickLog(before),
  foldBusyHours: (minCells?: number) => s.foldBusyHours(minCells),
});

const logCount = async (store: SqliteStore) => {
  let n = 0;
  for await (const _ of store.readClickLog({ linkId: "l" }, 0, Number.MAX_SAFE_INTEGER)) n++;
  return n;
};

describe("click maintenance", () => {
  test("a pass settles every day before today and deletes raw clicks older than the retention", async () => {
    const store = await storeWithClicks();
    const errors: unknown[] = [];
    await maintainClicks({ store, retentionDays: 90, now: () => NOW, onError: (e) => errors.push(e) });
    expect(errors).toEqual([]);
    expect(await store.settledBefore()).toBe(TODAY);
    expect(await logCount(store)).toBe(2);
    let settled = 0;
    for await (const r of store.readSettled({ linkId: "l" }, null, 0, TODAY)) settled += r.clicks;
    expect(settled).toBe(2); // today's click waits for its day to end
  });

  test("a pass also settles today's whole hours, so only the current hour is read from cells", async () => {
    const store = await storeWithClicks();
    await store.recordClicks([click("this-morning", TODAY + 9 * 3_600_000)]);
    await maintainClicks({ store, retentionDays: 0, now: () => NOW, onError: (e) => { throw e; } });
    const hour = NOW - (NOW % 3_600_000);
    expect(await store.settledHoursBefore()).toBe(hour);
    let today = 0;
    for await (const r of store.readSettled({ linkId: "l" }, null, TODAY, hour)) today += r.clicks;
    expect(today).toBe(1); // the 09:00 click; the one a minute ago is in the current hour, still cells only
  });

  test("retention 0 keeps raw clicks for ever", async () => {
    const store = await storeWithClicks();
    await maintainClicks({ store, retentionDays: 0, now: () => NOW, onError: () => {} });
    expect(await logCount(store)).toBe(3);
  });

  test("a failing store is reported, never thrown, and the prune still runs when settling fails", async () => {
    const errors: unknown[] = [];
    const pruned: number[] = [];
    const store = {
      settledBefore: () => Promise.resolve(TODAY - DAY),
      settleDays: () => Promise.reject(new Error("database away")),
      settleHours: () => Promise.resolve(0),
      pruneClickLog: (before: number) => (pruned.push(before), Promise.resolve(0)),
    };
    await maintainClicks({ store, retentionDays: 1, now: () => NOW, onError: (e) => errors.push(e) });
    expect(errors.map((e) => (e as Error).message)).toEqual(["database away"]);
    expect(pruned).toEqual([NOW - DAY]);
  });

  test("a backlog is settled a day per settleDays call, oldest first, with other tasks run between days", async () => {
    const store = await storeWithClicks();
    const events: string[] = [];
    const settleDays = store.settleDays.bind(store);
    let other = false;
    const recording = {
      settledBefore: () => store.settledBefore(),
      settleHours: (before: number) => store.settleHours(before),
      pruneClickLog: (before: number) => store.pruneClickLog(before),
      settleDays: async (before: number) => {
        // A task queued before this day's transaction must run before the next one (the redirector's click writes).
        if (!other) setTimeout(() => events.push("other task"), 0);
        other = true;
        events.push(`settle ${(before - TODAY) / DAY}`);
        return settleDays(before);
      },
    };
    const firstCellDay = async () => TODAY - 100 * DAY;
    await maintainClicks({ store: recording, firstCellDay, retentionDays: 0, now: () => NOW, onError: (e) => { throw e; } });
    const days = Array.from({ length: 100 }, (_, i) => `settle ${i - 99}`);
    expect(events).toEqual([days[0], "other task", ...days.slice(1)]);
    expect(await store.settledBefore()).toBe(TODAY);
    // Every day settled once: the settled clicks are the two clicks before today, as with one call.
    let settled = 0;
    for await (const r of store.readSettled({ linkId: "l" }, null, 0, TODAY)) settled += r.clicks;
    expect(settled).toBe(2);
    // The next pass goes on from the state: nothing left, no call.
    events.length = 0;
    await maintainClicks({ store: recording, firstCellDay, retentionDays: 0, now: () => NOW, onError: (e) => { throw e; } });
    expect(events).toEqual([]);
  });

  test("without a way to find the first day, a first settle covers every day at once; with no cells, no call", async () => {
    const store = await storeWithClicks();
    const calls: number[] = [];
    const recording = { ...pick(store), settleDays: (before: number) => (calls.push(before), store.settleDays(before)) };
    await maintainClicks({ store: recording, retentionDays: 0, now: () => NOW, onError: () => {} });
    expect(calls).toEqual([TODAY]);
    const empty = new SqliteStore(":memory:");
    stores.push(empty);
    await empty.migrate();
    calls.length = 0;
    const none = { ...pick(empty), settleDays: (before: number) => (calls.push(before), empty.settleDays(before)) };
    await maintainClicks({ store: none, firstCellDay: async () => null, retentionDays: 0, now: () => NOW, onError: () => {} });
    expect(calls).toEqual([]);
  });

  test("stop() during a long settle ends the pass after the day under way; a later pass goes on from there", async () => {
    const store = await storeWithClicks();
    let calls = 0;
    let stopped: Promise<void> | null = null;
    const stopping = {
      ...pick(store),
      settleDays: (before: number) => {
        if (++calls === 3) stopped = loop.stop(); // while the third day is being settled
        return store.settleDays(before);
      },
    };
    const firstCellDay = async () => TODAY - 100 * DAY;
    const loop = startClickMaintenance({ store: stopping, firstCellDay, retentionDays: 1, now: () => NOW, onError: () => {} });
    while (stopped === null) await Bun.sleep(1);
    await stopped;
    expect(calls).toBe(3);
    expect(await store.settledBefore()).toBe(TODAY - 97 * DAY);
    expect(await logCount(store)).toBe(3); // the prune waits for the next pass too
    await maintainClicks({ store, firstCellDay, retentionDays: 1, now: () => NOW, onError: () => {} });
    expect(await store.settledBefore()).toBe(TODAY);
  });

  test("the loop folds busy link-hours every foldEveryMs besides its passes, never two at once; a failed fold is reported", async () => {
    const store = await storeWithClicks();
    let folds = 0, busy = 0, most = 0;
    const errors: unknown[] = [];
    const track = async <T>(work: () => Promise<T>) => {
      most = Math.max(most, ++busy);
      try {
        return await work();
      } finally {
        busy--;
      }
    };
    const recording = {
      ...pick(store),
      settleDays: (before: number) => track(() => store.settleDays(before)),
      foldBusyHours: (minCells?: number) => track(async () => {
        if (++folds === 2) throw new Error("database away");
        await Bun.sleep(5);
        return store.foldBusyHours(minCells);
      }),
    };
    const loop = startClickMaintenance({ store: recording, retentionDays: 0, now: () => NOW, onError: (e) => errors.push(e) }, 60_000, 10);
    while (folds < 4) await Bun.sleep(5);
    await loop.stop();
    const after = folds;
    await Bun.sleep(40);
    expect(folds).toBe(after); // none after stop()
    expect(most).toBe(1);
    expect(errors.map((e) => (e as Error).message)).toEqual(["database away"]);
  });

  test("the loop runs a pass at once, and stop() waits for it", async () => {
    const store = await storeWithClicks();
    const loop = startClickMaintenance({ store, retentionDays: 90, now: () => NOW, onError: () => {} });
    await loop.stop();
    expect(await store.settledBefore()).toBe(TODAY);
  });
});

describe("CLICK_RETENTION_DAYS", () => {
  const env = (v?: string) => (v === undefined ? {} : { CLICK_RETENTION_DAYS: v });
  test("defaults to 90; 0 and whole numbers are taken", () => {
    expect(loadConfig(env()).clickRetentionDays).toBe(90);
    expect(loadConfig(env("0")).clickRetentionDays).toBe(0);
    expect(loadConfig(env("365")).clickRetentionDays).toBe(365);
  });
  for (const bad of ["-1", "1.5", "ninety", "1e3"]) {
    test(`"${bad}" stops start-up naming the variable`, () => {
      expect(() => loadConfig(env(bad))).toThrow(ConfigError);
      expect(() => loadConfig(env(bad))).toThrow(/CLICK_RETENTION_DAYS/);
    });
  }
});

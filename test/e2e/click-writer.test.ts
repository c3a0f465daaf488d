/**
 * The embedded default's click writer: a real worker thread writing to a real SQLite file through its memory
 * click queue and the shared drain loop. Batches posted by the server thread end up as raw clicks and rollups
 * (User-Agent parsed and country looked up on the worker), a batch the file cannot take is kept and retried, and
 * close() waits for every posted click.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClickWriterThread } from "../../control/clicks/writer-thread-client.ts";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { Metrics } from "../../shared/observability/metrics.ts";
import { newLinkRecord, type LinkRecord } from "../../shared/link.ts";
import type { ClickEvent, StoredClick } from "../../shared/ports.ts";

const dir = join(tmpdir(), `clink-writer-${crypto.randomUUID()}`);
const file = join(dir, "clink.sqlite");
const T0 = Date.UTC(2030, 0, 1, 12);
const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
const IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";

let store: SqliteStore;
let linkId: string;
let seq = 0;

function click(over: Partial<ClickEvent> = {}): ClickEvent {
  return { id: `t-${++seq}`, linkId, ts: T0 + seq, ua: CHROME, ip: null, country: null, referrer: null, variant: null, ...over };
}

function link(accountId: string): LinkRecord {
  const slug = `w${crypto.randomUUID().slice(0, 8)}`;
  return newLinkRecord({ id: crypto.randomUUID(), accountId, domain: "sho.rt", slug, target: "https://example.com/", createdAt: T0 });
}

beforeAll(async () => {
  store = new SqliteStore(file);
  await store.migrate();
  const accountId = crypto.randomUUID();
  await store.createAccount({ id: accountId, email: `${accountId}@example.com`, passwordHash: "h", createdAt: T0 });
  const l = link(accountId);
  await store.insertLinks([l]);
  linkId = l.id;
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function rawClicksOf(id: string): Promise<StoredClick[]> {
  const out: StoredClick[] = [];
  for await (const c of store.rawClicks(id)) out.push(c);
  return out;
}

describe("ClickWriterThread", () => {
  test("writes posted batches as raw clicks and rollups, parsing the User-Agent and looking up the country on the worker", async () => {
    const written: number[] = [];
    const writer = await ClickWriterThread.open(file, undefined, { onWritten: (n) => written.push(n) });
    try {
      await writer.enqueueClicks([
        click({ ip: "8.8.8.8", variant: 1, referrer: "https://news.example/" }),
        click({ ua: IPHONE, country: "DE", variant: 0 }),
        click({ linkId: "no-such-link" }), // a link deleted meanwhile: dropped, not an error
      ]);
      await writer.enqueueClicks([click()]);
      expect(await writer.settle(10_000)).toBe(0);
      expect(await writer.queueDepth()).toBe(0);
      const stats = await store.getStats(linkId, T0 - 3_600_000);
      expect(stats.total).toBe(3);
      expect(stats.byCountry).toEqual({ US: 1, DE: 1, unknown: 1 });
      expect(stats.byDevice).toEqual({ desktop: 2, mobile: 1 });
      expect(stats.byBrowser).toEqual({ Chrome: 2, Safari: 1 });
      expect(stats.byVariant).toEqual({ "0": 1, "1": 1 });
      expect((await store.getLinkById(linkId))?.hits).toBe(3);
      expect(written.reduce((a, b) => a + b, 0)).toBe(4);
      const raw = (await rawClicksOf(linkId)).filter((c) => c.referrer !== null).map((c) => ({ referrer: c.referrer, country: c.country }));
      expect(raw).toEqual([{ referrer: "https://news.example/", country: "US" }]);
    } finally {
      await writer.close();
    }
  });

  test("batches posted close together share one transaction (each rollup cell is written once for all of them)", async () => {
    const written: number[] = [];
    const writer = await ClickWriterThread.open(file, undefined, { onWritten: (n) => written.push(n) });
    try {
      const before = (await store.getStats(linkId, 0)).total;
      await writer.enqueueClicks([click(), click()]);
      await writer.enqueueClicks([click(), click(), click()]);
      await writer.enqueueClicks([click()]);
      expect(await writer.settle(10_000)).toBe(0);
      // One "written" report per transaction: the thread waited for the later batches instead of writing at once.
      expect(written).toEqual([6]);
      expect((await store.getStats(linkId, 0)).total).toBe(before + 6);
    } finally {
      await writer.close();
    }
  });

  test("a batch the file cannot take is kept and written once the file is writable again; close() waits for it", async () => {
    const errors: string[] = [];
    const writer = await ClickWriterThread.open(file, undefined, { onError: (e) => errors.push(e.message) });
    const before = (await store.getStats(linkId, 0)).total;
    // Another connection holds the write lock, so every attempt of the worker fails with SQLITE_BUSY.
    const blocker = new Database(file);
    blocker.exec("PRAGMA busy_timeout = 0");
    blocker.exec("BEGIN IMMEDIATE");
    try {
      await writer.enqueueClicks([click(), click()]);
      const deadline = Date.now() + 20_000;
      while (errors.length === 0 && Date.now() < deadline) await Bun.sleep(50);
      expect(errors.some((m) => m.includes("retrying"))).toBe(true);
      expect(await writer.queueDepth()).toBe(2);
    } finally {
      blocker.exec("ROLLBACK");
      blocker.close();
    }
    expect(await writer.close(20_000)).toBe(0);
    expect((await store.getStats(linkId, 0)).total).toBe(before + 2);
  });

  test("past its limit of waiting clicks the thread drops the oldest batch, and the drop is counted in the metrics", async () => {
    const errors: string[] = [];
    const writer = await ClickWriterThread.open(file, undefined, { onError: (e) => errors.push(e.message) }, 3);
    const metrics = new Metrics("embedded", { defaultMetrics: false });
    metrics.watchClickWriter(writer);
    const before = (await store.getStats(linkId, 0)).total;
    const blocker = new Database(file);
    blocker.exec("PRAGMA busy_timeout = 0");
    blocker.exec("BEGIN IMMEDIATE");
    const kept = [click(), click()];
    try {
      await writer.enqueueClicks([click(), click()]);
      const deadline = Date.now() + 20_000;
      while (!errors.some((m) => m.includes("retrying")) && Date.now() < deadline) await Bun.sleep(50);
      // 2 waiting + 2 more > 3: the older batch goes.
      await writer.enqueueClicks(kept);
      while (writer.dropped === 0 && Date.now() < deadline) await Bun.sleep(50);
      expect(writer.dropped).toBe(2);
      expect(errors.some((m) => m.includes("2 clicks dropped"))).toBe(true);
      expect(await writer.queueDepth()).toBe(2);
      const { body } = await metrics.render();
      expect(body).toContain("\nclink_clicks_dropped_total 2\n");
      expect(body).toContain("\nclink_clicks_refused_total 0\n");
    } finally {
      blocker.exec("ROLLBACK");
      blocker.close();
    }
    expect(await writer.close(20_000)).toBe(0);
    expect((await store.getStats(linkId, 0)).total).toBe(before + 2);
    // The newer batch is the one written (each click is served at its own time).
    const keptTs = kept.map((c) => c.ts);
    expect((await rawClicksOf(linkId)).filter((c) => keptTs.includes(c.ts)).map((c) => c.ts)).toEqual(keptTs);
  });

  test("a thread that dies is replaced: later clicks are written again, and the failure is reported", async () => {
    const errors: string[] = [];
    const writer = await ClickWriterThread.open(file, undefined, { onError: (e) => errors.push(e.message) });
    try {
      const before = (await store.getStats(linkId, 0)).total;
      // Something the thread cannot read (a bug in the sender) makes it throw outside its own error handling.
      (writer as unknown as { worker: Worker }).worker.postMessage({ type: "clicks", clicks: null });
      const deadline = Date.now() + 10_000;
      while (writer.restarts === 0 && Date.now() < deadline) await Bun.sleep(25);
      expect(writer.restarts).toBe(1);
      expect(errors.some((m) => m.includes("restarting"))).toBe(true);
      await writer.enqueueClicks([click(), click(), click()]);
      expect(await writer.settle(10_000)).toBe(0);
      expect((await store.getStats(linkId, 0)).total).toBe(before + 3);
    } finally {
      await writer.close();
    }
  });
});

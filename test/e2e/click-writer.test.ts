/**
 * The embedded default's click writer: a real worker thread writing to a real SQLite file through its memory
 * click queue and the shared drain loop. Batches posted by the server thread end up in the raw click log and rollup
 * cells with every dimension (User-Agent parsed, country looked up, first visits told by the SQLite VisitorLedger,
 * all on the worker), a batch the file cannot take is kept and retried, and close() waits for every posted click.
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
import type { Dimension } from "../../shared/clicks/dimensions.ts";
import type { ClickCell, ClickEvent, StoredClick } from "../../shared/ports.ts";

const dir = join(tmpdir(), `clink-writer-${crypto.randomUUID()}`);
const file = join(dir, "clink.sqlite");
const T0 = Date.UTC(2030, 0, 1, 12);
const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
const IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";

let store: SqliteStore;
let linkId: string;
let seq = 0;

function click(over: Partial<ClickEvent> = {}): ClickEvent {
  return { id: `t-${++seq}`, linkId, ts: T0 + seq, ua: CHROME, ip: null, country: null, referrer: null, variant: null, rule: null, qr: false, ...over };
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

const FAR = T0 + 366 * 86_400_000;

async function rawClicksOf(id: string): Promise<StoredClick[]> {
  const out: StoredClick[] = [];
  for await (const c of store.readClickLog({ linkId: id }, 0, FAR)) out.push(c);
  return out;
}

async function cellsOf(id: string): Promise<ClickCell[]> {
  const out: ClickCell[] = [];
  for await (const c of store.readCells({ linkId: id }, 0, FAR)) out.push(c);
  return out;
}

const totalOf = async (id: string) => (await cellsOf(id)).reduce((n, c) => n + c.clicks, 0);

/** Clicks per value of `dim` (unknown for null). */
function countBy(cells: ClickCell[], dim: Dimension): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of cells) out[c.dims[dim] ?? "unknown"] = (out[c.dims[dim] ?? "unknown"] ?? 0) + c.clicks;
  return out;
}

describe("ClickWriterThread", () => {
  test("writes posted batches to the click log and cells with every dimension and first visits, worked out on the worker", async () => {
    const written: number[] = [];
    const writer = await ClickWriterThread.open(file, undefined, { onWritten: (n) => written.push(n) });
    try {
      await writer.enqueueClicks([
        click({ ip: "8.8.8.8", variant: 1, referrer: "https://news.example/" }),
        click({ ua: IPHONE, country: "DE", variant: 0, rule: 1, qr: true }),
        click({ linkId: "no-such-link" }), // a link deleted meanwhile: dropped, not an error
      ]);
      await writer.enqueueClicks([click()]);
      expect(await writer.settle(10_000)).toBe(0);
      expect(await writer.queueDepth()).toBe(0);
      const cells = await cellsOf(linkId);
      expect(cells.reduce((n, c) => n + c.clicks, 0)).toBe(3);
      expect(countBy(cells, "country")).toEqual({ US: 1, DE: 1, unknown: 1 });
      expect(countBy(cells, "device")).toEqual({ desktop: 2, mobile: 1 });
      expect(countBy(cells, "browser")).toEqual({ Chrome: 2, Safari: 1 });
      expect(countBy(cells, "os")).toEqual({ Windows: 2, iOS: 1 });
      expect(countBy(cells, "variant")).toEqual({ "0": 1, "1": 1, unknown: 1 });
      expect(countBy(cells, "rule")).toEqual({ "1": 1, unknown: 2 });
      expect(countBy(cells, "via")).toEqual({ qr: 1, link: 2 });
      expect(countBy(cells, "referrer")).toEqual({ "news.example": 1, unknown: 2 });
      expect(countBy(cells, "region")).toEqual({ unknown: 3 }); // the shipped database knows countries only
      expect(cells.reduce((n, c) => n + c.visitors, 0)).toBe(3); // three visitors (address and User-Agent differ)
      expect((await store.getLinkById(linkId))?.hits).toBe(3);
      expect(written.reduce((a, b) => a + b, 0)).toBe(4);
      const raw = (await rawClicksOf(linkId)).filter((c) => c.referrerUrl !== null).map((c) => ({ referrerUrl: c.referrerUrl, country: c.dims.country }));
      expect(raw).toEqual([{ referrerUrl: "https://news.example/", country: "US" }]);
    } finally {
      await writer.close();
    }
  });

  test("a visitor's first click of the day on a link is its one first visit, across batches and transactions", async () => {
    const writer = await ClickWriterThread.open(file, undefined);
    const visitorsOf = async () => (await cellsOf(linkId)).reduce((n, c) => n + c.visitors, 0);
    try {
      const before = await visitorsOf();
      await writer.enqueueClicks([click({ ip: "198.51.100.1" }), click({ ip: "198.51.100.1" })]);
      expect(await writer.settle(10_000)).toBe(0);
      await writer.enqueueClicks([click({ ip: "198.51.100.1" }), click({ ip: "198.51.100.2" }), click({ ip: "198.51.100.1", ua: IPHONE })]);
      expect(await writer.settle(10_000)).toBe(0);
      expect((await visitorsOf()) - before).toBe(3);
    } finally {
      await writer.close();
    }
  });

  test("batches posted close together share one transaction (each rollup cell is written once for all of them)", async () => {
    const written: number[] = [];
    const writer = await ClickWriterThread.open(file, undefined, { onWritten: (n) => written.push(n) });
    try {
      const before = (await totalOf(linkId));
      await writer.enqueueClicks([click(), click()]);
      await writer.enqueueClicks([click(), click(), click()]);
      await writer.enqueueClicks([click()]);
      expect(await writer.settle(10_000)).toBe(0);
      // One "written" report per transaction: the thread waited for the later batches instead of writing at once.
      expect(written).toEqual([6]);
      expect((await totalOf(linkId))).toBe(before + 6);
    } finally {
      await writer.close();
    }
  });

  test("a batch the file cannot take is kept and written once the file is writable again; close() waits for it", async () => {
    const errors: string[] = [];
    const writer = await ClickWriterThread.open(file, undefined, { onError: (e) => errors.push(e.message) });
    const before = (await totalOf(linkId));
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
    expect((await totalOf(linkId))).toBe(before + 2);
  });

  test("past its limit of waiting clicks the thread drops the oldest batch, and the drop is counted in the metrics", async () => {
    const errors: string[] = [];
    const writer = await ClickWriterThread.open(file, undefined, { onError: (e) => errors.push(e.message) }, 3);
    const metrics = new Metrics("embedded", { defaultMetrics: false });
    metrics.watchClickWriter(writer);
    const before = (await totalOf(linkId));
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
    expect((await totalOf(linkId))).toBe(before + 2);
    // The newer batch is the one written (each click is served at its own time).
    const keptTs = kept.map((c) => c.ts);
    expect((await rawClicksOf(linkId)).filter((c) => keptTs.includes(c.ts)).map((c) => c.ts)).toEqual(keptTs);
  });

  test("a thread that dies is replaced: later clicks are written again, and the failure is reported", async () => {
    const errors: string[] = [];
    const writer = await ClickWriterThread.open(file, undefined, { onError: (e) => errors.push(e.message) });
    try {
      const before = (await totalOf(linkId));
      // Something the thread cannot read (a bug in the sender) makes it throw outside its own error handling.
      (writer as unknown as { worker: Worker }).worker.postMessage({ type: "clicks", clicks: null });
      const deadline = Date.now() + 10_000;
      while (writer.restarts === 0 && Date.now() < deadline) await Bun.sleep(25);
      expect(writer.restarts).toBe(1);
      expect(errors.some((m) => m.includes("restarting"))).toBe(true);
      await writer.enqueueClicks([click(), click(), click()]);
      expect(await writer.settle(10_000)).toBe(0);
      expect((await totalOf(linkId))).toBe(before + 3);
    } finally {
      await writer.close();
    }
  });
});

/**
 * Worker thread of the embedded default (see worker-writer.ts): turns posted click batches into rows as they
 * arrive (User-Agent parsed, country looked up) and writes them to SQLite on its own connection (WAL), in arrival order. Batches
 * that queued up while a transaction ran are written together, so a busy server makes fewer, larger
 * transactions. The main thread migrated the file before starting this worker.
 */
import { SqliteLinkStore } from "../../shared/adapters/sqlite/link-store.ts";
import { openCountryLookup, type CountryLookup } from "../../shared/facts/geo.ts";
import type { StoredClick } from "../../shared/ports.ts";
import { unpackClicks, type PackedClicks } from "../../shared/clicks/columns.ts";
import { batchCountryLookup, isRefusal, toStoredClick } from "./convert.ts";

export type WorkerRequest =
  | { type: "open"; id: number; file: string; geoipDb: string | undefined; maxWaiting: number }
  | { type: "clicks"; clicks: PackedClicks }
  | { type: "close"; id: number };

export type WorkerReply =
  | { type: "done"; id: number; error?: string }
  | { type: "written"; written: number; rejected: number; dropped: number; oldestTs: number }
  | { type: "error"; message: string };

declare const self: Worker;

/** Most clicks written in one transaction when batches queued up. */
const MAX_TRANSACTION = 4096;
/**
 * How long a transaction waits for more batches while it has fewer than MAX_TRANSACTION clicks. Each transaction
 * upserts every rollup cell its clicks touch (and the totals and hourly counts above them) once, so a busy server
 * that wrote each 1,024-click batch on its own paid those upserts up to four times as often.
 */
const LINGER_MS = 25;
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2_000;
/** While the file cannot be written (disk full), at most this many clicks wait here (set on open); the oldest go first. */
let maxWaiting = 0;
let store: SqliteLinkStore | null = null;
let countryLookup: CountryLookup | null = null;
const waiting: StoredClick[][] = [];
let writing = false;
let lingering: ReturnType<typeof setTimeout> | null = null;

const reply = (r: WorkerReply) => self.postMessage(r);
const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The rows the store keeps (toStoredClick, as the scale-mode consumer does). Each distinct address of a batch is
 * looked up once; a User-Agent seen before is a hit in classifyUserAgent's cache.
 */
function storedClicksOf(clicks: PackedClicks): StoredClick[] {
  const lookup = batchCountryLookup(countryLookup);
  const events = unpackClicks(clicks);
  // A posted batch is written whole, once: its first click's id (unique per process) names it.
  const batch = events[0]?.id ?? "";
  return events.map((e) => toStoredClick(e, batch, lookup));
}

/** Writes the batches; returns how many clicks the store refused for good. Throws on an outage. */
async function write(batches: StoredClick[][]): Promise<{ rejected: number; oldestTs: number }> {
  let rejected = 0;
  let oldestTs = Infinity;
  for (const b of batches) for (const r of b) if (r.ts < oldestTs) oldestTs = r.ts;
  try {
    await store!.recordClicks(batches.length === 1 ? batches[0]! : batches.flat());
  } catch (err) {
    if (!isRefusal(err)) throw err;
    // Isolate a batch the store refuses, so it cannot hold back the rest.
    for (const batch of batches) {
      try {
        await store!.recordClicks(batch);
      } catch (one) {
        if (!isRefusal(one)) throw one; // batches already written are skipped on the retry (ON CONFLICT)
        rejected += batch.length;
        reply({ type: "error", message: `${batch.length} clicks refused: ${message(one)}` });
      }
    }
  }
  return { rejected, oldestTs };
}

const waitingClicks = () => waiting.reduce((n, b) => n + b.length, 0);

/** Starts a write now when a full transaction is waiting, else once LINGER_MS have passed. */
function schedule(): void {
  if (writing || waiting.length === 0) return;
  if (waitingClicks() >= MAX_TRANSACTION) {
    if (lingering) clearTimeout(lingering);
    lingering = null;
    void drain();
  } else {
    lingering ??= setTimeout(() => {
      lingering = null;
      if (!writing) void drain();
    }, LINGER_MS);
  }
}

async function drain(): Promise<void> {
  writing = true;
  let retryMs = RETRY_FIRST_MS;
  while (waiting.length > 0) {
    // Taken out of `waiting` while written, so the overflow rule below never touches them.
    let take = 1;
    let size = waiting[0]!.length;
    while (take < waiting.length && size + waiting[take]!.length <= MAX_TRANSACTION) size += waiting[take++]!.length;
    const batches = waiting.splice(0, take);
    try {
      const { rejected, oldestTs } = await write(batches);
      reply({ type: "written", written: size - rejected, rejected, dropped: 0, oldestTs });
      retryMs = RETRY_FIRST_MS;
      if (waitingClicks() < MAX_TRANSACTION) break; // the rest lingers for company (schedule, below)
    } catch (err) {
      waiting.unshift(...batches);
      reply({ type: "error", message: `click writer: ${message(err)} (retrying in ${retryMs} ms)` });
      await Bun.sleep(retryMs);
      retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
    }
  }
  writing = false;
  schedule();
}

self.onmessage = async (e: MessageEvent<WorkerRequest>) => {
  const r = e.data;
  if (r.type === "clicks") {
    waiting.push(storedClicksOf(r.clicks));
    let held = waitingClicks();
    while (held > maxWaiting && waiting.length > 1) {
      const dropped = waiting.shift()!;
      held -= dropped.length;
      reply({ type: "written", written: 0, rejected: 0, dropped: dropped.length, oldestTs: Infinity });
      reply({ type: "error", message: `click writer: ${dropped.length} clicks dropped, the store has been failing too long` });
    }
    schedule();
    return;
  }
  try {
    if (r.type === "open") {
      store = new SqliteLinkStore(r.file);
      maxWaiting = r.maxWaiting;
      countryLookup = await openCountryLookup(r.geoipDb);
    } else {
      await store?.close();
      store = null;
    }
    reply({ type: "done", id: r.id });
  } catch (err) {
    reply({ type: "done", id: r.id, error: message(err) });
  }
};

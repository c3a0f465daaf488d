/**
 * The embedded default's click writer, inside its worker thread (started by writer-thread-client.ts). Posted click
 * batches go into a memory click queue, which the shared drain loop (drain.ts, WRITER_THREAD_POLICY) reads, turns
 * into rows (User-Agent parsed, place looked up, first visits told by the SQLite VisitorLedger on a connection of
 * its own) and writes to SQLite on this thread's own connection (WAL), in arrival order: batches that arrive close together share a transaction. A write the file cannot take yet (disk
 * full, file locked) is retried; past `maxWaiting` clicks the queue drops its oldest batches. Every transaction,
 * refusal and drop is reported, so the server thread knows what it still holds. The server thread migrated the
 * file before starting this thread.
 *
 * This thread also runs the click upkeep (maintenance.ts: settling finished days, pruning the raw log) on the same
 * connection, a day per transaction between click writes, so the server thread never runs it.
 */
import { MemoryClickQueue } from "../../shared/adapters/memory/click-queue.ts";
import { SqliteConnection } from "../../shared/adapters/sqlite/connection.ts";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { SqliteVisitorLedger } from "../../shared/adapters/sqlite/visitors.ts";
import { openGeoLookups } from "../../shared/facts/geo.ts";
import { unpackClicks, type PackedClicks } from "../../shared/clicks/columns.ts";
import { ClickDrain, WRITER_THREAD_POLICY } from "./drain.ts";
import { SEEN_PAIRS_PER_DAY } from "./first-visits.ts";
import { withClickEvents } from "../webhooks/events.ts";
import { startClickMaintenance } from "./maintenance.ts";

/** Click upkeep settings; null: the thread runs none (the caller maintains the store itself, or a test). */
export type WriterUpkeep = { retentionDays: number } | null;

export type WorkerRequest =
  | { type: "open"; id: number; file: string; geoipDb: string | undefined; maxWaiting: number; upkeep: WriterUpkeep }
  | { type: "clicks"; clicks: PackedClicks }
  | { type: "close"; id: number };

export type WorkerReply =
  | { type: "done"; id: number; error?: string }
  | { type: "written"; written: number; rejected: number; dropped: number; oldestTs: number }
  | { type: "error"; message: string };

declare const self: Worker;

const LEDGER_BUSY_TIMEOUT_MS = 1_000;
/** The earliest cell's hour, a primary-key seek per link (as the store's settleDays finds it). */
const FIRST_CELL_HOUR = `SELECT min((SELECT min(hour) FROM click_cells c WHERE c.link_id = l.id)) AS h FROM links l`;
const DAY_MS = 86_400_000;

let store: SqliteStore | null = null;
let visitorsConnection: SqliteConnection | null = null;
let queue: MemoryClickQueue | null = null;
let drain: ClickDrain | null = null;
let upkeep: { stop(): Promise<void> } | null = null;

const reply = (r: WorkerReply) => self.postMessage(r);
const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

async function open(r: Extract<WorkerRequest, { type: "open" }>): Promise<void> {
  // Queue first, synchronously: batches posted right after "open" are handled before its await below ends.
  const s = (store = new SqliteStore(r.file));
  const q = (queue = new MemoryClickQueue({
    maxClicks: r.maxWaiting,
    onDropped: (n) => {
      reply({ type: "written", written: 0, rejected: 0, dropped: n, oldestTs: Infinity });
      reply({ type: "error", message: `${n} clicks dropped, the store has been failing too long` });
    },
  }));
  visitorsConnection = new SqliteConnection(r.file);
  // While another connection holds the write lock (a long one: a blocked disk, an import), the drain's retry with
  // backoff reports it, instead of each batch waiting out the connection's 5 s busy timeout in silence.
  visitorsConnection.db.run(`PRAGMA busy_timeout = ${LEDGER_BUSY_TIMEOUT_MS}`);
  const visitors = new SqliteVisitorLedger(visitorsConnection);
  const geo = await openGeoLookups(r.geoipDb);
  drain = new ClickDrain(q, withClickEvents(s, s), {
    consumerName: "writer-thread",
    policy: WRITER_THREAD_POLICY,
    placeLookup: geo.place,
    visitors,
    rememberFirstVisits: SEEN_PAIRS_PER_DAY,
    onDrained: (d) => reply({ type: "written", written: d.written, rejected: d.rejected, dropped: 0, oldestTs: d.oldestTs }),
    onError: (err) => reply({ type: "error", message: err.message }),
  });
  drain.start();
  if (r.upkeep) startUpkeep(s, visitorsConnection, r.upkeep.retentionDays);
}

/** Settles and prunes on this thread's store; the first day with cells is read on the ledger's connection. */
function startUpkeep(s: SqliteStore, reader: SqliteConnection, retentionDays: number): void {
  upkeep = startClickMaintenance({
    store: s,
    firstCellDay: async () => {
      const h = reader.db.query<{ h: number | null }, []>(FIRST_CELL_HOUR).get()?.h ?? null;
      return h === null ? null : Math.floor(h / DAY_MS) * DAY_MS;
    },
    retentionDays,
    now: Date.now,
    onError: (err) => reply({ type: "error", message: `click maintenance: ${message(err)}` }),
  });
}

async function close(): Promise<void> {
  // The server thread waited for every posted click first (ClickWriterThread.settle); a write under way finishes,
  // and an upkeep pass ends after the day it is settling.
  await upkeep?.stop();
  upkeep = null;
  await drain?.stop(0);
  await store?.close();
  store = null;
  visitorsConnection?.close();
  visitorsConnection = null;
}

self.onmessage = async (e: MessageEvent<WorkerRequest>) => {
  const r = e.data;
  if (r.type === "clicks") {
    const events = unpackClicks(r.clicks);
    await queue!.enqueueClicks(events);
    drain?.notify(events.length);
    return;
  }
  try {
    await (r.type === "open" ? open(r) : close());
    reply({ type: "done", id: r.id });
  } catch (err) {
    reply({ type: "done", id: r.id, error: message(err) });
  }
};

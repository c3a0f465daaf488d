/**
 * The embedded default's click writer, inside its worker thread (started by writer-thread-client.ts). Posted click
 * batches go into a memory click queue, which the shared drain loop (drain.ts, WRITER_THREAD_POLICY) reads, turns
 * into rows (User-Agent parsed, country looked up) and writes to SQLite on this thread's own connection (WAL), in
 * arrival order: batches that arrive close together share a transaction. A write the file cannot take yet (disk
 * full, file locked) is retried; past `maxWaiting` clicks the queue drops its oldest batches. Every transaction,
 * refusal and drop is reported, so the server thread knows what it still holds. The server thread migrated the
 * file before starting this thread.
 */
import { MemoryClickQueue } from "../../shared/adapters/memory/click-queue.ts";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { openCountryLookup } from "../../shared/facts/geo.ts";
import { unpackClicks, type PackedClicks } from "../../shared/clicks/columns.ts";
import { ClickDrain, WRITER_THREAD_POLICY } from "./drain.ts";

export type WorkerRequest =
  | { type: "open"; id: number; file: string; geoipDb: string | undefined; maxWaiting: number }
  | { type: "clicks"; clicks: PackedClicks }
  | { type: "close"; id: number };

export type WorkerReply =
  | { type: "done"; id: number; error?: string }
  | { type: "written"; written: number; rejected: number; dropped: number; oldestTs: number }
  | { type: "error"; message: string };

declare const self: Worker;

let store: SqliteStore | null = null;
let queue: MemoryClickQueue | null = null;
let drain: ClickDrain | null = null;

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
  const countryLookup = await openCountryLookup(r.geoipDb);
  drain = new ClickDrain(q, s, {
    consumerName: "writer-thread",
    policy: WRITER_THREAD_POLICY,
    countryLookup,
    onDrained: (d) => reply({ type: "written", written: d.written, rejected: d.rejected, dropped: 0, oldestTs: d.oldestTs }),
    onError: (err) => reply({ type: "error", message: err.message }),
  });
  drain.start();
}

async function close(): Promise<void> {
  // The server thread waited for every posted click first (ClickWriterThread.settle); a write under way finishes.
  await drain?.stop(0);
  await store?.close();
  store = null;
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

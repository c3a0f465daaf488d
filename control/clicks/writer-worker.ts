/**
 * Worker thread of the embedded default: writes click batches to SQLite (its own connection, WAL) so the
 * server's event loop only queues them. The main thread migrated the file before starting this worker.
 */
import { SqliteLinkStore } from "../../shared/adapters/sqlite/link-store.ts";
import type { StoredClick } from "../../shared/ports.ts";

declare const self: Worker;

let store: SqliteLinkStore | null = null;

self.onmessage = async (e: MessageEvent<{ id: number; file?: string; clicks?: StoredClick[] }>) => {
  const { id, file, clicks } = e.data;
  try {
    if (file) store = new SqliteLinkStore(file);
    else if (clicks) await store!.recordClicks(clicks);
    else await store?.close();
    self.postMessage({ id, ok: true });
  } catch (err) {
    self.postMessage({ id, ok: false, message: err instanceof Error ? err.message : String(err) });
  }
};

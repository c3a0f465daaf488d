/**
 * Hands click batches to a worker thread (writer-worker.ts) that writes them to the embedded SQLite file,
 * so rollup upserts and WAL checkpoints never stall redirects. A batch's promise settles after the
 * worker's transaction committed, which keeps the consumer's "acknowledge after commit" rule.
 */
import type { StoredClick } from "../../shared/ports.ts";
import type { ClickSink } from "./consumer.ts";

export class WorkerClickWriter implements ClickSink {
  private worker: Worker;
  private seq = 0;
  private pending = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();

  private constructor() {
    this.worker = new Worker(new URL("./writer-worker.ts", import.meta.url).href);
    this.worker.onmessage = (e: MessageEvent<{ id: number; ok: boolean; message?: string }>) => {
      const p = this.pending.get(e.data.id);
      if (!p) return;
      this.pending.delete(e.data.id);
      if (e.data.ok) p.resolve();
      else p.reject(new Error(e.data.message ?? "click writer failed"));
    };
  }

  static async open(file: string): Promise<WorkerClickWriter> {
    const w = new WorkerClickWriter();
    await w.call({ file });
    return w;
  }

  private call(message: { file?: string; clicks?: StoredClick[] }): Promise<void> {
    const id = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, ...message });
    });
  }

  recordClicks(clicks: StoredClick[]): Promise<void> {
    return clicks.length === 0 ? Promise.resolve() : this.call({ clicks });
  }

  /** Closes the worker's connection and ends the thread (after the consumer stopped). */
  async close(): Promise<void> {
    await this.call({}).catch(() => {});
    this.worker.terminate();
  }
}

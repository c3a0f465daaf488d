/**
 * The embedded default's click queue as the server thread sees it: batches from the redirector go straight to a
 * worker thread (sqlite-writer-thread.ts) that queues them, parses them and writes them to the SQLite file, so
 * neither the conversion, nor the rollup upserts, nor WAL checkpoints run on the thread that answers redirects.
 * The server thread only packs each batch as columns (shared/clicks/columns.ts) and posts it.
 *
 * A batch the store cannot take yet (disk full, file locked) stays in the worker, in order, and is retried
 * with a growing pause; clicks the store refuses for good are counted and skipped. Shutdown waits for every
 * posted click to be committed. Clicks not yet committed live only in this process, so a kill without warning
 * loses them (README: Graceful shutdown).
 */
import type { ClickEvent, ClickIntake } from "../../shared/ports.ts";
import { packClicks } from "../../shared/clicks/columns.ts";
import type { WorkerReply, WorkerRequest, WriterUpkeep } from "./sqlite-writer-thread.ts";

export interface ClickWriterHooks {
  /** Clicks committed, with the timestamp of the oldest (ms), after each transaction. */
  onWritten?: (n: number, oldestTs: number) => void;
  /** A failed attempt (retried) or a click refused for good. */
  onError?: (err: Error) => void;
}

/** While the file cannot be written (disk full), at most this many clicks wait in the thread; the oldest go first. */
export const MAX_WAITING_CLICKS = 1_000_000;

export class ClickWriterThread implements ClickIntake {
  private worker!: Worker;
  private callSeq = 0;
  private readonly calls = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  /** Clicks posted and not yet committed (or refused). */
  private outstanding = 0;
  private idleWaiters: (() => void)[] = [];
  /** Clicks the store refused for good (malformed); counted, never retried. */
  rejected = 0;
  /** Clicks dropped, oldest first, because more than `maxWaiting` waited while the file could not be written. */
  dropped = 0;

  private closing = false;
  /** Times the thread died and was started again. */
  restarts = 0;

  private constructor(
    private readonly file: string,
    private readonly geoipDb: string | undefined,
    private readonly hooks: ClickWriterHooks,
    private readonly maxWaiting: number,
    private readonly upkeep: WriterUpkeep,
  ) {}

  /**
   * Starts the thread on a SQLite file the caller already migrated. With `upkeep`, the thread also settles and
   * prunes the clicks (maintenance.ts), so the server thread never does; its failures reach hooks.onError.
   */
  static async open(
    file: string, geoipDb: string | undefined, hooks: ClickWriterHooks = {}, maxWaiting = MAX_WAITING_CLICKS, upkeep: WriterUpkeep = null,
  ): Promise<ClickWriterThread> {
    const w = new ClickWriterThread(file, geoipDb, hooks, maxWaiting, upkeep);
    await w.start();
    return w;
  }

  /** A new thread; messages posted before it runs wait in its queue, after the "open" posted here. */
  private start(): Promise<void> {
    this.worker = new Worker(new URL("./sqlite-writer-thread.ts", import.meta.url).href);
    this.worker.onmessage = (e: MessageEvent<WorkerReply>) => this.onReply(e.data);
    this.worker.onerror = (e) => this.onCrash(e);
    return this.call({ type: "open", id: 0, file: this.file, geoipDb: this.geoipDb, maxWaiting: this.maxWaiting, upkeep: this.upkeep });
  }

  /**
   * The thread died (a bug: everything it can foresee is caught and retried there). What it held is lost;
   * a new thread takes the next batches, so one failure cannot silently stop every later click being stored.
   */
  private onCrash(e: ErrorEvent): void {
    const lost = Math.max(0, this.outstanding);
    this.outstanding = 0;
    for (const call of this.calls.values()) call.reject(new Error("click writer thread failed"));
    this.calls.clear();
    for (const wake of this.idleWaiters.splice(0)) wake();
    if (this.closing) return;
    this.restarts++;
    this.hooks.onError?.(new Error(`click writer thread failed (${e.message}); ${lost} clicks not written; restarting it`));
    this.worker.terminate();
    this.start().catch((err) => this.hooks.onError?.(err instanceof Error ? err : new Error(String(err))));
  }

  private onReply(r: WorkerReply): void {
    switch (r.type) {
      case "done": {
        const call = this.calls.get(r.id);
        this.calls.delete(r.id);
        if (r.error === undefined) call?.resolve();
        else call?.reject(new Error(r.error));
        return;
      }
      case "written":
        this.outstanding -= r.written + r.rejected + r.dropped;
        this.rejected += r.rejected;
        this.dropped += r.dropped;
        if (r.written > 0) this.hooks.onWritten?.(r.written, r.oldestTs);
        if (this.outstanding <= 0) for (const wake of this.idleWaiters.splice(0)) wake();
        return;
      case "error":
        this.hooks.onError?.(new Error(r.message));
        return;
    }
  }

  private call(request: WorkerRequest): Promise<void> {
    const id = ++this.callSeq;
    return new Promise((resolve, reject) => {
      this.calls.set(id, { resolve, reject });
      this.worker.postMessage({ ...request, id });
    });
  }

  async enqueueClicks(events: ClickEvent[]): Promise<void> {
    if (events.length === 0) return;
    const { packed, transfer } = packClicks(events);
    this.outstanding += events.length;
    this.worker.postMessage({ type: "clicks", clicks: packed } satisfies WorkerRequest, transfer);
  }

  async queueDepth(): Promise<number> {
    return this.outstanding;
  }

  /** Resolves once every click posted so far is committed, or after `timeoutMs`; returns how many are not. */
  async settle(timeoutMs: number): Promise<number> {
    if (this.outstanding > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([new Promise<void>((r) => this.idleWaiters.push(r)), new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
      clearTimeout(timer);
    }
    return Math.max(0, this.outstanding);
  }

  /** Waits for the posted clicks (up to `timeoutMs`), closes the worker's connection and ends the thread. */
  async close(timeoutMs = 10_000): Promise<number> {
    const left = await this.settle(timeoutMs);
    this.closing = true;
    await this.call({ type: "close", id: 0 }).catch(() => {});
    this.worker.terminate();
    return left;
  }
}

/**
 * The one loop that drains a click queue into the store (design §2 data flow 5), in scale mode (the Redis stream
 * into Postgres, in every control process) and in the embedded default (the writer thread's memory queue into
 * SQLite, sqlite-writer-thread.ts). A read becomes raw clicks and hourly rollups in one transaction and is
 * acknowledged only after it committed, so a store outage loses nothing (the read is delivered again) and the
 * store's per-batch keys make the redelivery idempotent. A batch the store refuses for good is isolated: the
 * read's other batches are written one by one, the refused one counted and acknowledged.
 */
import type { CountryLookup } from "../../shared/facts/geo.ts";
import type { ClickSource, QueuedClick, StoredClick } from "../../shared/ports.ts";
import { batchCountryLookup, isRefusal, toStoredClick } from "./convert.ts";

/** Where a drain writes: the store (or a wrapper around its recordClicks, e.g. for metrics). */
export interface ClickSink {
  recordClicks(clicks: StoredClick[]): Promise<void>;
}

/** How a drain paces itself: how many clicks a transaction holds, and how long it waits for more. */
export interface DrainPolicy {
  /** Most clicks read, and so written in one transaction, at a time (a batch is never split, so a read may hold more). */
  batchSize: number;
  /**
   * After a read smaller than batchSize, the pause before the next one, so that batches queued meanwhile share a
   * transaction: a store writes a click for less in a large one (each rollup cell is upserted once per transaction).
   * A notify() that reports a full batch waiting ends it early.
   */
  lingerMs: number;
  /** Pause after an empty read; a notify() ends it (then the linger runs, for company), else the queue is read again. */
  idleMs: number;
  /** Pause after a failed attempt (store or queue down), doubled after each further failure up to retryMaxMs. */
  retryFirstMs: number;
  retryMaxMs: number;
}

/** Scale mode: Postgres writes a click for less in a large statement, which matters most when the machine is busiest. */
export const CONSUMER_POLICY: DrainPolicy = { batchSize: 10_000, lingerMs: 50, idleMs: 100, retryFirstMs: 100, retryMaxMs: 2_000 };

/**
 * The embedded writer thread: posted batches (up to 1,024 clicks) that arrive within 25 ms share a transaction of up
 * to 4,096 clicks, so a busy server writes each rollup cell once per 4,096 clicks instead of once per 1,024. This is
 * also what a SIGKILL may lose beyond the server's buffer (README: Graceful shutdown).
 */
export const WRITER_THREAD_POLICY: DrainPolicy = { batchSize: 4_096, lingerMs: 25, idleMs: 1_000, retryFirstMs: 100, retryMaxMs: 2_000 };

/** What one acknowledged read came to. */
export interface DrainReport {
  /** Clicks read and acknowledged: written + rejected. */
  read: number;
  /** Clicks committed (those of links deleted meanwhile included: the store drops them). */
  written: number;
  /** Clicks the store refused for good, or that could not be converted: counted, never retried. */
  rejected: number;
  /** Timestamp (ms) of the oldest click written; Infinity when none was. */
  oldestTs: number;
}

export interface ClickDrainOptions {
  /** Unique per process where several drain one queue (a Redis consumer group hands each batch to one). */
  consumerName: string;
  policy?: DrainPolicy;
  countryLookup: CountryLookup | null;
  onDrained?: (report: DrainReport) => void;
  /** A failed attempt (retried) or clicks refused for good (skipped); the loop carries on. */
  onError?: (err: Error) => void;
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

export class ClickDrain {
  private running = false;
  private loop: Promise<void> | null = null;
  /** Ends the current pause early; set while one runs. */
  private wake: ((notified: boolean) => void) | null = null;
  private pausing: "idle" | "linger" | "retry" | null = null;
  /** Clicks enqueued (notify) since the last read began: what that read cannot have taken. */
  private waiting = 0;
  readonly policy: DrainPolicy;
  /** Clicks dropped because the store refused them for good (malformed); counted, never retried. */
  rejected = 0;

  constructor(private readonly queue: ClickSource, private readonly sink: ClickSink, private readonly o: ClickDrainOptions) {
    this.policy = o.policy ?? CONSUMER_POLICY;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /**
   * `clicks` were just enqueued: ends an idle pause (the linger follows), and a linger once a full batch waits.
   * For a queue in this process (the writer thread's); a drain of a shared queue polls it instead.
   */
  notify(clicks: number): void {
    this.waiting += clicks;
    if (this.pausing === "idle" || (this.pausing === "linger" && this.waiting >= this.policy.batchSize)) this.wake?.(true);
  }

  /** Reads, writes and acknowledges once; returns how many clicks were read (0 when the queue was empty). */
  async drainOnce(): Promise<number> {
    this.waiting = 0;
    const batch = await this.queue.readClicks(this.o.consumerName, this.policy.batchSize);
    if (batch.length === 0) return 0;
    const report: DrainReport = { read: batch.length, written: 0, rejected: 0, oldestTs: Infinity };
    const stored: StoredClick[] = [];
    const lookup = batchCountryLookup(this.o.countryLookup);
    for (const c of batch) {
      const s = this.convert(c, lookup, report);
      if (s) stored.push(s);
    }
    try {
      await this.sink.recordClicks(stored);
    } catch (err) {
      if (!isRefusal(err)) throw err; // an outage: nothing acknowledged, the read comes back
      await this.recordBatchByBatch(stored, report);
    }
    await this.queue.ackBatches(batchesOf(batch));
    report.written = report.read - report.rejected;
    for (const s of stored) if (s.ts < report.oldestTs) report.oldestTs = s.ts;
    this.rejected += report.rejected;
    this.o.onDrained?.(report);
    return batch.length;
  }

  private convert(c: QueuedClick, lookup: CountryLookup | null, report: DrainReport): StoredClick | null {
    try {
      return toStoredClick(c.event, c.batch, lookup);
    } catch (err) {
      report.rejected++;
      this.o.onError?.(new Error(`click refused: ${message(err)}`, { cause: err }));
      return null;
    }
  }

  /**
   * The store refused a read without being down: each queued batch is written on its own, so one it refuses
   * (counted, skipped) cannot block the queue. Batches stay whole: the store is idempotent per batch.
   */
  private async recordBatchByBatch(clicks: StoredClick[], report: DrainReport): Promise<void> {
    for (const batch of Map.groupBy(clicks, (c) => c.batch).values()) {
      try {
        await this.sink.recordClicks(batch);
      } catch (err) {
        if (!isRefusal(err)) throw err; // those already written are skipped on redelivery
        report.rejected += batch.length;
        this.o.onError?.(new Error(`${batch.length} clicks refused: ${message(err)}`, { cause: err }));
      }
    }
  }

  private async run(): Promise<void> {
    const p = this.policy;
    let retryMs = p.retryFirstMs;
    while (this.running) {
      let n: number;
      try {
        n = await this.drainOnce();
        retryMs = p.retryFirstMs;
      } catch (err) {
        // Store or queue unavailable: nothing was acknowledged, so the read comes back.
        this.o.onError?.(new Error(`${message(err)} (retrying in ${retryMs} ms)`, { cause: err }));
        await this.pause("retry", retryMs);
        retryMs = Math.min(retryMs * 2, p.retryMaxMs);
        continue;
      }
      if (n >= p.batchSize) continue; // a backlog: no pause
      // Empty: wait for clicks. Polled (no notify): read at once. Notified: linger like after a partial read.
      if (n === 0 && !(await this.pause("idle", p.idleMs))) continue;
      if (this.waiting < p.batchSize) await this.pause("linger", p.lingerMs);
    }
  }

  /** Waits `ms`, or less when notify() or stop() ends the wait; returns whether notify() did. */
  private pause(kind: "idle" | "linger" | "retry", ms: number): Promise<boolean> {
    if (!this.running) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => this.wake?.(false), ms);
      this.pausing = kind;
      this.wake = (notified) => {
        clearTimeout(timer);
        this.pausing = null;
        this.wake = null;
        resolve(notified);
      };
    });
  }

  /** Stops after writing everything still queued (graceful shutdown), giving up after `timeoutMs`. */
  async stop(timeoutMs = 10_000): Promise<void> {
    this.running = false;
    this.wake?.(false);
    await this.loop;
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      try {
        if ((await this.drainOnce()) === 0) break;
      } catch {
        break; // store or queue down: the clicks stay queued for the next drain
      }
    }
  }
}

/** The distinct batches of a read, in order (a batch's clicks are read together, so a change marks a new one). */
function batchesOf(clicks: QueuedClick[]): string[] {
  const out: string[] = [];
  for (const c of clicks) if (out[out.length - 1] !== c.batch) out.push(c.batch);
  return out;
}

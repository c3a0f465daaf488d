/**
 * Drains the click queue into the LinkStore (design §2 data flow 5): each batch becomes raw clicks and
 * hourly rollups in one transaction, acknowledged only after it committed, so a store outage loses
 * nothing (the batch is delivered again) and the store's per-batch keys make the redelivery idempotent.
 *
 * In scale mode every control process runs one consumer in the same Redis consumer group: each click is
 * handed to one of them, and what a consumer that died left unacknowledged is taken over by another.
 */
import type { CountryLookup } from "../../shared/facts/geo.ts";
import type { ClickStore, HotState, QueuedClick, StoredClick } from "../../shared/ports.ts";
import { batchCountryLookup, isRefusal, toStoredClick } from "./convert.ts";

/** Where a consumer writes: the store (or a wrapper around its recordClicks, e.g. for metrics). */
export type ClickSink = Pick<ClickStore, "recordClicks">;

export interface ClickConsumerOptions {
  consumerName: string;
  batchSize?: number;
  idleMs?: number;
  /** Pause after a batch smaller than batchSize, so that batches grow under load (default 50 ms). */
  lingerMs?: number;
  /** Longest pause between attempts while the store or the queue is failing (default 2 s). */
  maxBackoffMs?: number;
  countryLookup: CountryLookup | null;
  onWritten?: (n: number) => void;
  /** A failed attempt (store or queue down) or a click the store refused; the loop carries on. */
  onError?: (err: unknown) => void;
}

export class ClickConsumer {
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private readonly batchSize: number;
  private readonly idleMs: number;
  private readonly lingerMs: number;
  private readonly maxBackoffMs: number;
  /** Clicks dropped because the store refused them for good (malformed); counted, never retried. */
  rejected = 0;

  constructor(private hot: HotState, private store: ClickSink, private o: ClickConsumerOptions) {
    this.batchSize = o.batchSize ?? 10_000;
    this.idleMs = o.idleMs ?? 100;
    this.lingerMs = o.lingerMs ?? 50;
    this.maxBackoffMs = o.maxBackoffMs ?? 2_000;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Processes one batch; returns how many clicks were written (0 when the queue was empty). */
  async drainOnce(): Promise<number> {
    const batch = await this.hot.readClicks(this.o.consumerName, this.batchSize);
    if (batch.length === 0) return 0;
    const stored: StoredClick[] = [];
    const lookup = batchCountryLookup(this.o.countryLookup);
    for (const c of batch) {
      const s = this.convert(c, lookup);
      if (s) stored.push(s);
    }
    try {
      await this.store.recordClicks(stored);
    } catch (err) {
      if (!isRefusal(err)) throw err; // an outage: nothing acknowledged, the batch comes back
      await this.recordBatchByBatch(stored);
    }
    await this.hot.ackBatches(batchesOf(batch));
    this.o.onWritten?.(batch.length);
    return batch.length;
  }

  private convert(c: QueuedClick, lookup: CountryLookup | null): StoredClick | null {
    try {
      return toStoredClick(c.event, c.batch, lookup);
    } catch (err) {
      this.rejected++;
      this.o.onError?.(err);
      return null;
    }
  }

  /**
   * The store refused a read without being down: each queued batch is written on its own, so one it refuses
   * (counted, skipped) cannot block the queue. Batches stay whole: the store is idempotent per batch.
   */
  private async recordBatchByBatch(clicks: StoredClick[]): Promise<void> {
    for (const batch of Map.groupBy(clicks, (c) => c.batch).values()) {
      try {
        await this.store.recordClicks(batch);
      } catch (err) {
        if (!isRefusal(err)) throw err; // those already written are skipped on redelivery
        this.rejected += batch.length;
        this.o.onError?.(err);
      }
    }
  }

  private async run(): Promise<void> {
    let backoff = this.idleMs;
    while (this.running) {
      let n = 0;
      try {
        n = await this.drainOnce();
        backoff = this.idleMs;
      } catch (err) {
        // Store or queue unavailable: nothing was acknowledged, so the batch comes back later.
        this.o.onError?.(err);
        backoff = Math.min(backoff * 2, this.maxBackoffMs);
      }
      // After a partial batch, a short pause lets the next one fill up: Postgres writes a click for less in
      // a large statement than in many small ones, which matters most when the machine is busiest.
      const pause = n === 0 ? backoff : n < this.batchSize ? this.lingerMs : 0;
      if (pause > 0 && this.running) await new Promise<void>((r) => { this.wake = r; setTimeout(r, pause); });
      this.wake = null;
    }
  }

  /** Stops after writing everything still queued (graceful shutdown), giving up after `timeoutMs`. */
  async stop(timeoutMs = 10_000): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      try {
        if ((await this.drainOnce()) === 0) break;
      } catch {
        break; // store or queue down: the clicks stay queued for the next consumer
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

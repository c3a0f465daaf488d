/**
 * ClickQueue in process memory: the queue of the embedded writer thread (control/clicks/sqlite-writer-thread.ts)
 * and of the memory HotState. Batches are read and acknowledged whole, and one read but not acknowledged is read
 * again first, as a stream's pending entries are. One process, one reader: the consumer name is not used.
 */
import { LazyQueuedClick, type ClickEvent, type ClickQueue, type QueuedClick } from "../../ports.ts";

export interface MemoryClickQueueOptions {
  /**
   * Most clicks held (waiting, or read and not acknowledged) while nothing drains them (the store is failing);
   * past it the oldest batches are dropped, the newest kept. Checked at each read, when no write of an earlier
   * read is under way, so what is dropped was never written. Default: no limit.
   */
  maxClicks?: number;
  /** Clicks dropped by that limit. */
  onDropped?: (clicks: number) => void;
}

export class MemoryClickQueue implements ClickQueue {
  /** Batches as enqueued, oldest first. */
  private queue: QueuedClick[][] = [];
  /** Batches read and not acknowledged, oldest first. */
  private inFlight = new Map<string, QueuedClick[]>();
  /** Clicks in both, counted as they come and go (the limit is checked against it at every read). */
  private held = 0;
  /**
   * Batch names unique beyond this queue: a store keeps each batch once, and the writer thread's store outlives
   * its queue, so a new thread must not name a batch like one written before (it would be skipped).
   */
  private readonly batchPrefix = `${Date.now().toString(36)}${crypto.randomUUID().slice(0, 4)}-`;
  private seq = 0;
  private readonly maxClicks: number;

  constructor(private readonly o: MemoryClickQueueOptions = {}) {
    this.maxClicks = o.maxClicks ?? Infinity;
  }

  async enqueueClicks(events: ClickEvent[]) {
    if (events.length === 0) return;
    const batch = this.batchPrefix + (++this.seq).toString(36);
    this.queue.push(events.map((event, i) => new LazyQueuedClick(batch, i, event)));
    this.held += events.length;
  }

  /** Whole batches, as a stream reads whole entries: unacknowledged ones again first, like its pending list. */
  async readClicks(_consumer: string, max: number): Promise<QueuedClick[]> {
    this.dropOverLimit();
    const out: QueuedClick[] = [];
    for (const batch of this.inFlight.values()) {
      if (out.length > 0 && out.length + batch.length > max) return out;
      out.push(...batch);
    }
    while (this.queue.length > 0 && (out.length === 0 || out.length + this.queue[0]!.length <= max)) {
      const batch = this.queue.shift()!;
      this.inFlight.set(batch[0]!.batch, batch);
      out.push(...batch);
    }
    return out;
  }

  async ackBatches(batches: string[]) {
    for (const name of batches) {
      const batch = this.inFlight.get(name);
      if (!batch) continue;
      this.inFlight.delete(name);
      this.held -= batch.length;
    }
  }

  async queueDepth() {
    return this.held;
  }

  private dropOverLimit(): void {
    let dropped = 0;
    while (this.held > this.maxClicks && this.inFlight.size + this.queue.length > 1) {
      const oldestRead = this.inFlight.keys().next();
      let batch: QueuedClick[];
      if (oldestRead.done) batch = this.queue.shift()!;
      else {
        batch = this.inFlight.get(oldestRead.value)!;
        this.inFlight.delete(oldestRead.value);
      }
      this.held -= batch.length;
      dropped += batch.length;
    }
    if (dropped > 0) this.o.onDropped?.(dropped);
  }
}

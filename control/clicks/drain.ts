/**
 * The one loop that drains a click queue into the store (design §2 data flow 5), in scale mode (the Redis stream
 * into Postgres, in every control process) and in the embedded default (the writer thread's memory queue into
 * SQLite, sqlite-writer-thread.ts). A read becomes stored clicks (every dimension, the bot flag, and whether each is
 * its visitor's first of the day: first-visits.ts), written in one transaction and
 * acknowledged only after it committed, so a store outage loses nothing (the read is delivered again) and the
 * store's per-batch keys make the redelivery idempotent. A batch the store refuses for good is isolated: the
 * read's other batches are written one by one, the refused one counted and acknowledged.
 */
import type { PlaceLookup } from "../../shared/facts/geo.ts";
import type { ClickSource, QueuedClick, StoredClick, VisitorLedger } from "../../shared/ports.ts";
import { batchLookups, isRefusal, toStoredClick, type ClickLookups } from "./convert.ts";
import { FirstVisits, type Sightings } from "./first-visits.ts";

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

/**
 * Scale mode: Postgres writes a click for less in a large transaction (a link's hit count and a repeated cell are
 * written once per transaction), which matters most when a backlog builds, the only time a read fills up. 40,000
 * rather than 10,000: bench:consumer, 250,000 clicks, two interleaved runs each, Postgres CPU per click 12.6 -> 8.6 µs
 * for spread traffic (10,000 links: a hit count written per four clicks instead of per click) and 10.4 -> 8.5 µs
 * for Zipf traffic. The price, under a backlog only: a transaction holds its links' rows about half a second (a
 * link edit or a maxHits reservation of one of them waits that long) and the consumer holds a read of tens of MB.
 */
export const CONSUMER_POLICY: DrainPolicy = { batchSize: 40_000, lingerMs: 50, idleMs: 100, retryFirstMs: 100, retryMaxMs: 2_000 };

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
  /** The GeoIP database's place lookup (country, region, city), null without one. */
  placeLookup: PlaceLookup | null;
  /** Tells first visits (scale mode: Redis; the embedded writer thread: SQLite; tests: memory). */
  visitors: VisitorLedger;
  /**
   * Pairs per day the drain remembers having seen first, so their later clicks skip the ledger (FirstVisits): worth
   * it where a ledger call per pair costs (the writer thread's SQLite, SEEN_PAIRS_PER_DAY); 0, the default, for the
   * Redis ledger, which tells a read's repeats apart in one script call per shard.
   */
  rememberFirstVisits?: number;
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
  private readonly firstVisits: FirstVisits;
  /** GeoIP and referrer lookups, remembered across reads (bounded: see LOOKUP_CACHE_SIZE). */
  private readonly lookups: ClickLookups;

  constructor(private readonly queue: ClickSource, private readonly sink: ClickSink, private readonly o: ClickDrainOptions) {
    this.policy = o.policy ?? CONSUMER_POLICY;
    this.firstVisits = new FirstVisits(o.visitors, o.rememberFirstVisits);
    this.lookups = batchLookups(o.placeLookup);
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
    const converted = batch.map((c) => this.convert(c, this.lookups, report));
    const sightings = await this.firstVisits.mark(batch.map((c) => c.event), converted);
    // A copy without the clicks not converted only when there are some (a read of 40,000 is rarely refused any).
    const stored = report.rejected === 0 ? (converted as StoredClick[]) : converted.filter((s) => s !== null);
    try {
      await this.sink.recordClicks(stored);
    } catch (err) {
      if (!isRefusal(err)) {
        // An outage: nothing acknowledged, the read comes back, and its first visits must count as first again.
        await this.unsee(sightings, stored);
        throw err;
      }
      await this.recordBatchByBatch(stored, report, sightings);
    }
    await this.queue.ackBatches(batchesOf(batch));
    report.written = report.read - report.rejected;
    for (const s of stored) if (s.ts < report.oldestTs) report.oldestTs = s.ts;
    this.rejected += report.rejected;
    this.o.onDrained?.(report);
    return batch.length;
  }

  private convert(c: QueuedClick, lookups: ClickLookups, report: DrainReport): StoredClick | null {
    try {
      return toStoredClick(c.event, c.batch, lookups);
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
  private async recordBatchByBatch(clicks: StoredClick[], report: DrainReport, sightings: Sightings): Promise<void> {
    const batches = [...Map.groupBy(clicks, (c) => c.batch).values()];
    for (let b = 0; b < batches.length; b++) {
      const batch = batches[b]!;
      try {
        await this.sink.recordClicks(batch);
      } catch (err) {
        if (!isRefusal(err)) {
          await this.unsee(sightings, batches.slice(b).flat()); // those already written are skipped on redelivery
          throw err;
        }
        await this.unsee(sightings, batch); // never written: the visitor's next click is a first visit
        report.rejected += batch.length;
        this.o.onError?.(new Error(`${batch.length} clicks refused: ${message(err)}`, { cause: err }));
      }
    }
  }

  /** Forgets the first visits of clicks not written; a ledger down too only costs a few unique visitors. */
  private async unsee(sightings: Sightings, clicks: StoredClick[]): Promise<void> {
    if (sightings.clicks.length === 0) return;
    try {
      await this.firstVisits.forget(sightings, clicks);
    } catch (err) {
      this.o.onError?.(new Error(`first visits not forgotten: ${message(err)}`, { cause: err }));
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

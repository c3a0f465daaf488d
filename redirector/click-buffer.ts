/**
 * Clicks leave the hot path through this buffer: pushed synchronously, handed to HotState in batches
 * (one call per batch, never one round trip per click). While HotState is unreachable the buffer keeps
 * up to `maxBuffered` clicks and retries; beyond that the oldest are dropped and counted.
 */
import type { ClickEvent, HotState } from "../shared/ports.ts";

export interface ClickBufferOptions {
  batchSize?: number;
  flushMs?: number;
  maxBuffered?: number;
}

export class ClickBuffer {
  private buf: ClickEvent[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private flushing: Promise<void> | null = null;
  private readonly batchSize: number;
  private readonly flushMs: number;
  private readonly maxBuffered: number;
  dropped = 0;

  constructor(private hot: HotState, o: ClickBufferOptions = {}) {
    this.batchSize = o.batchSize ?? 256;
    this.flushMs = o.flushMs ?? 50;
    this.maxBuffered = o.maxBuffered ?? 100_000;
  }

  push(event: ClickEvent): void {
    this.buf.push(event);
    if (this.buf.length > this.maxBuffered) {
      this.buf.shift();
      this.dropped++;
    }
    if (this.buf.length >= this.batchSize) void this.flush();
    else if (this.timer === null) this.timer = setTimeout(() => void this.flush(), this.flushMs);
  }

  get size(): number {
    return this.buf.length;
  }

  /** Hands everything buffered to HotState; on failure keeps it and retries later. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.buf.length === 0) return Promise.resolve();
    this.flushing = (async () => {
      while (this.buf.length > 0) {
        const batch = this.buf.splice(0, this.batchSize);
        try {
          await this.hot.enqueueClicks(batch);
        } catch {
          this.buf.unshift(...batch);
          if (this.timer === null) this.timer = setTimeout(() => void this.flush(), 500);
          return;
        }
      }
    })().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }
}

/**
 * Drains the click queue into the LinkStore (design §2 data flow 5): each batch becomes raw clicks and
 * hourly rollups in one transaction, acknowledged only after it committed, so a store outage loses
 * nothing (the batch is delivered again) and click ids make the redelivery idempotent.
 */
import { classifyUserAgent } from "../../shared/facts/device.ts";
import { countryFromHeader, type CountryLookup } from "../../shared/facts/geo.ts";
import type { ClickEvent, HotState, LinkStore, StoredClick } from "../../shared/ports.ts";

export interface ClickConsumerOptions {
  consumerName: string;
  batchSize?: number;
  idleMs?: number;
  countryLookup: CountryLookup | null;
  onWritten?: (n: number) => void;
}

export function toStoredClick(e: ClickEvent, countryLookup: CountryLookup | null): StoredClick {
  const ua = classifyUserAgent(e.ua);
  const country = countryFromHeader(e.country) ?? (e.ip && countryLookup ? countryLookup(e.ip) : null);
  return {
    id: e.id, linkId: e.linkId, ts: e.ts, country, device: ua.device, browser: ua.browser, os: ua.os,
    referrer: e.referrer ? e.referrer.slice(0, 1024) : null, variant: e.variant,
  };
}

export class ClickConsumer {
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private readonly batchSize: number;
  private readonly idleMs: number;

  constructor(private hot: HotState, private store: LinkStore, private o: ClickConsumerOptions) {
    this.batchSize = o.batchSize ?? 500;
    this.idleMs = o.idleMs ?? 100;
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
    await this.store.recordClicks(batch.map((c) => toStoredClick(c.event, this.o.countryLookup)));
    await this.hot.ackClicks(batch.map((c) => c.id));
    this.o.onWritten?.(batch.length);
    return batch.length;
  }

  private async run(): Promise<void> {
    let backoff = this.idleMs;
    while (this.running) {
      let n = 0;
      try {
        n = await this.drainOnce();
        backoff = this.idleMs;
      } catch {
        // Store or queue unavailable: nothing was acknowledged, so the batch comes back later.
        backoff = Math.min(backoff * 2, 5_000);
      }
      if (n === 0 && this.running) await new Promise<void>((r) => { this.wake = r; setTimeout(r, backoff); });
      this.wake = null;
    }
  }

  /** Stops after writing everything still queued (graceful shutdown). */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    for (let i = 0; i < 1000; i++) {
      try {
        if ((await this.drainOnce()) === 0) break;
      } catch {
        break;
      }
    }
  }
}

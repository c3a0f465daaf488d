/** The clicks-and-stats role of the store: raw clicks as the consumer writes them, and the rollups read back. */

/** A click as written to storage: the address is already reduced to a country, never stored raw. */
export interface StoredClick {
  /**
   * The delivery it came in (a stream entry, a writer-thread batch): delivered, redelivered and written whole,
   * so it is what makes a redelivery harmless. A store keeps each batch's clicks of a link once.
   */
  batch: string;
  linkId: string;
  ts: number;
  country: string | null;
  device: string;
  browser: string;
  os: string;
  referrer: string | null;
  /** Index of the A/B variant served, null when none. */
  variant: number | null;
}

export interface RollupStats {
  total: number;
  byDevice: Record<string, number>;
  byBrowser: Record<string, number>;
  byCountry: Record<string, number>;
  byVariant: Record<string, number>;
  /** Clicks per hour (hour start in epoch ms) since `fromHour`; hours without clicks are absent. */
  hourly: { hour: number; clicks: number }[];
}

export interface ClickStore {
  /**
   * Raw clicks, hourly rollups and link hit counts in one transaction. Idempotent per (batch, link): a batch written before is
   * skipped whole, so every click of a batch must come in the same call. Clicks of unknown links are dropped.
   */
  recordClicks(clicks: StoredClick[]): Promise<void>;
  /** A link's raw clicks, batch by batch, oldest first (streamed: a link may have millions). */
  rawClicks(linkId: string): AsyncIterable<StoredClick>;
  getStats(linkId: string, fromHour: number): Promise<RollupStats>;
}

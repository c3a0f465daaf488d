/**
 * Pieces both Store adapters share for export and import (`exportAll`, `importRecords`): how a batch is
 * split by record type, and the rollup sentinels mapped to and from the export's nulls.
 */
import type { Account, ApiKeyRecord, ClickRollupRecord, ExportRecord, ImportResult } from "../ports.ts";
import type { LinkRecord } from "../link.ts";
import { NO_COUNTRY, NO_VARIANT } from "./link-store-support.ts";

/** Rows fetched per round trip while exporting. */
export const EXPORT_PAGE = 500;

export interface SplitBatch {
  accounts: Account[];
  apiKeys: ApiKeyRecord[];
  links: LinkRecord[];
  rollups: ClickRollupRecord[];
}

/** Groups a batch by type, keeping input order within each type (owners are written first). */
export function splitBatch(batch: ExportRecord[]): SplitBatch {
  const out: SplitBatch = { accounts: [], apiKeys: [], links: [], rollups: [] };
  for (const r of batch) {
    switch (r.type) {
      case "account":
        out.accounts.push({ ...r.data, email: r.data.email.toLowerCase() });
        break;
      case "apiKey":
        out.apiKeys.push(r.data);
        break;
      case "link":
        out.links.push(r.data);
        break;
      case "rollup":
        out.rollups.push(r.data);
        break;
    }
  }
  return out;
}

export function importResult(s: SplitBatch, inserted: Record<keyof SplitBatch, number>): ImportResult {
  const of = (n: number, total: number) => ({ inserted: n, skipped: total - n });
  return {
    account: of(inserted.accounts, s.accounts.length),
    apiKey: of(inserted.apiKeys, s.apiKeys.length),
    link: of(inserted.links, s.links.length),
    rollup: of(inserted.rollups, s.rollups.length),
  };
}

/** A stored rollup row (sentinels for "unknown") as an export record (nulls). */
export function rollupRecord(r: {
  link_id: string;
  hour: number;
  device: string;
  browser: string;
  country: string;
  variant: number;
  clicks: number;
}): ClickRollupRecord {
  return {
    linkId: r.link_id,
    hour: Number(r.hour),
    device: r.device,
    browser: r.browser,
    country: r.country === NO_COUNTRY ? null : r.country,
    variant: Number(r.variant) === NO_VARIANT ? null : Number(r.variant),
    clicks: Number(r.clicks),
  };
}

export const storedCountry = (c: string | null): string => c ?? NO_COUNTRY;
export const storedVariant = (v: number | null): number => v ?? NO_VARIANT;

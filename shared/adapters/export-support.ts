/**
 * Pieces both Store adapters share for export and import (`exportAll`, `importRecords`): how a batch is
 * split by record type, and rollup cells to and from their export records (old files' rollups included).
 */
import { cleanDimValue, DIMENSION_NAMES, encodeDims, type ClickDims } from "../clicks/dimensions.ts";
import type {
  Account, ApiKeyRecord, ClickCellRecord, ClickRollupRecord, ExportRecord, ImportResult, WebhookDelivery, WebhookEndpoint,
} from "../ports.ts";
import type { LinkRecord } from "../link.ts";
import type { DomainRecord } from "../domain.ts";
import type { CellSum } from "./click-log.ts";
import type { MemberRecord, WorkspaceRecord } from "../ports/workspaces.ts";

/** Rows fetched per round trip while exporting. */
export const EXPORT_PAGE = 500;

export interface SplitBatch {
  accounts: Account[];
  workspaces: WorkspaceRecord[];
  members: MemberRecord[];
  apiKeys: ApiKeyRecord[];
  links: LinkRecord[];
  /** Cell records and old files' rollups, as the cells they write. */
  cells: CellSum[];
  webhookEndpoints: WebhookEndpoint[];
  webhookDeliveries: WebhookDelivery[];
  domains: DomainRecord[];
}

/** An old file's rollup as the cell it is: the four dimensions it knew, no bots, no visitors counted. */
function rollupCell(r: ClickRollupRecord): CellSum {
  const dims = Object.fromEntries(DIMENSION_NAMES.map((d) => [d, null])) as ClickDims;
  Object.assign(dims, { device: r.device, browser: r.browser, country: r.country, variant: r.variant === null ? null : String(r.variant) });
  return recordCell({ linkId: r.linkId, hour: r.hour, dims, bot: false, clicks: r.clicks, visitors: 0 });
}

/** A cell record as the cell it writes (values cleaned as the drain cleans them; unknown dimensions dropped). */
function recordCell(r: ClickCellRecord): CellSum {
  const dims = {} as ClickDims;
  for (const d of DIMENSION_NAMES) dims[d] = cleanDimValue(r.dims[d]);
  return { linkId: r.linkId, hour: r.hour, dims: encodeDims(dims), bot: r.bot, clicks: r.clicks, visitors: r.visitors };
}

/** Groups a batch by type, keeping input order within each type (owners are written first). */
export function splitBatch(batch: ExportRecord[]): SplitBatch {
  const out: SplitBatch = { accounts: [], workspaces: [], members: [], apiKeys: [], links: [], cells: [], webhookEndpoints: [], webhookDeliveries: [], domains: [] };
  for (const r of batch) {
    switch (r.type) {
      case "account":
        out.accounts.push({ ...r.data, email: r.data.email.toLowerCase() });
        break;
      case "workspace":
        out.workspaces.push(r.data);
        break;
      case "member":
        out.members.push(r.data);
        break;
      case "apiKey":
        out.apiKeys.push(r.data);
        break;
      case "link":
        out.links.push(r.data);
        break;
      case "cell":
        out.cells.push(recordCell(r.data));
        break;
      case "rollup":
        out.cells.push(rollupCell(r.data));
        break;
      case "webhookEndpoint":
        out.webhookEndpoints.push(r.data);
        break;
      case "webhookDelivery":
        out.webhookDeliveries.push(r.data);
        break;
      case "domain":
        out.domains.push(r.data);
        break;
    }
  }
  return out;
}

export function importResult(s: SplitBatch, inserted: Record<keyof SplitBatch, number>): ImportResult {
  const of = (n: number, total: number) => ({ inserted: n, skipped: total - n });
  return {
    account: of(inserted.accounts, s.accounts.length),
    workspace: of(inserted.workspaces, s.workspaces.length),
    member: of(inserted.members, s.members.length),
    apiKey: of(inserted.apiKeys, s.apiKeys.length),
    link: of(inserted.links, s.links.length),
    cell: of(inserted.cells, s.cells.length),
    rollup: of(0, 0),
    webhookEndpoint: of(inserted.webhookEndpoints, s.webhookEndpoints.length),
    webhookDelivery: of(inserted.webhookDeliveries, s.webhookDeliveries.length),
    domain: of(inserted.domains, s.domains.length),
  };
}

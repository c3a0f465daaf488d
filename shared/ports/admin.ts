/** The administration role of the store: schema, connection lifecycle, readiness, export and import. */
import type { LinkRecord } from "../link.ts";
import type { Account } from "./accounts.ts";
import type { ClickCell } from "./clicks.ts";
import type { WebhookDelivery, WebhookEndpoint } from "./event-webhooks.ts";
import type { ApiKeyRecord } from "./keys.ts";
import type { DomainRecord } from "../domain.ts";
import type { MemberRecord, WorkspaceRecord } from "./workspaces.ts";

export interface AdminStore {
  /** Applies pending migrations; safe when two processes start together. */
  migrate(): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;

  /** Migrations this code knows that the database has not applied yet (0: schema current). Readiness. */
  pendingMigrations(): Promise<number>;
  /**
   * The distinct domains that hold at least one link, sorted, custom domains (DomainStore) left out. Start-up compares them with BASE_URL's host: links
   * are keyed by domain, so a changed BASE_URL (or PORT without BASE_URL) leaves every existing link unreachable.
   * Reads the (domain, slug) index one domain at a time: as cheap with millions of links as with ten.
   */
  linkDomains(): Promise<string[]>;
  /** Whether any account exists (start-up says how to create the first key only when none does). */
  hasAccounts(): Promise<boolean>;
  /**
   * Every account, workspace, membership, API key (hashes only), link, rollup cell, event webhook endpoint (with its secret) and delivery,
   * in that order (owners before what they own),
   * from one consistent snapshot. Sessions, raw clicks and settled totals (settleDays makes them again from the
   * cells) are not exported. For `npm run export`.
   */
  exportAll(): AsyncIterable<ExportRecord>;
  /**
   * Writes records from exportAll (of either adapter) in one transaction. Idempotent: a record whose id or
   * unique value (email, key hash, domain + slug, rollup cell, endpoint or delivery id) exists already is skipped,
   * and so is one whose
   * owner is missing (e.g. its account was skipped). Owners must come before, or in the same batch as, what
   * they own. For `npm run import`.
   */
  importRecords(batch: ExportRecord[]): Promise<ImportResult>;
}

/** One rollup cell as exported: the port's ClickCell, its dimensions by name (null: unknown). */
export type ClickCellRecord = ClickCell;

/**
 * One hourly rollup as files written before rollup cells held it (export files of earlier versions): imported
 * as a cell, `country` null = unknown, `variant` null = no A/B variant. Never exported any more.
 */
export interface ClickRollupRecord {
  linkId: string;
  /** Start of the hour, epoch ms. */
  hour: number;
  device: string;
  browser: string;
  country: string | null;
  variant: number | null;
  clicks: number;
}

/** One record of a full export (JSON lines: one `{ type, data }` per line). */
export type ExportRecord =
  | { type: "account"; data: Account }
  /**
   * A workspace (ADR 0011). A personal one comes with its account (importing an account makes it), so its record
   * only carries its name: imported, it renames that account's personal workspace, and counts as skipped when the
   * name is the same.
   */
  | { type: "workspace"; data: WorkspaceRecord }
  /** A membership; a personal workspace's owner comes with its account too. */
  | { type: "member"; data: MemberRecord }
  | { type: "apiKey"; data: ApiKeyRecord }
  | { type: "link"; data: LinkRecord }
  | { type: "cell"; data: ClickCellRecord }
  | { type: "rollup"; data: ClickRollupRecord }
  /** An event webhook endpoint, its signing secret included (the receivers keep verifying after a move). */
  | { type: "webhookEndpoint"; data: WebhookEndpoint }
  /** A delivery of the outbox and log: pending ones are sent from the new store, finished ones stay in the log. */
  | { type: "webhookDelivery"; data: WebhookDelivery }
  /** A custom domain with its state and token (a verified one keeps serving after a move). */
  | { type: "domain"; data: DomainRecord };

export type ExportRecordType = ExportRecord["type"];

/**
 * Per record type, how many were written and how many skipped (already present or owner missing). An old file's
 * rollups are written as cells and counted under `cell`.
 */
export type ImportResult = Record<ExportRecordType, { inserted: number; skipped: number }>;

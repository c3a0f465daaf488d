/**
 * `npm run import -- FILE`: loads an export (export-cli.ts) into the configured storage, embedded SQLite or
 * Postgres, so an instance can move between the two modes. Idempotent: records already present (same id, or
 * the same email / key hash / domain + slug) are skipped, so an interrupted import can simply be run again.
 *
 * The whole file is validated before anything is written (a truncated or edited file changes nothing); then
 * records go in in batches, each one transaction, owners before what they own.
 */
import { parseArgs } from "node:util";
import { openStorage } from "../../shared/adapters/open.ts";
import { ConfigError, loadConfig } from "../../shared/config.ts";
import { AppError } from "../../shared/errors.ts";
import type { AdminStore, ExportRecord, ImportResult } from "../../shared/ports.ts";
import { ExportFileError, emptyCounts, parseLine, readLines, type ExportCounts } from "./export-format.ts";

const USAGE = "Usage: npm run import -- FILE";
const BATCH = 500;

export interface ImportSummary {
  inserted: ExportCounts;
  skipped: ExportCounts;
}

/** Checks the whole file: a header first, valid records, and an end record whose counts match. */
export async function validateExportFile(path: string): Promise<ExportCounts> {
  const seen = emptyCounts();
  let sawHeader = false;
  let end: ExportCounts | null = null;
  let last = 0;
  for await (const { text, line } of readLines(path)) {
    last = line;
    const parsed = parseLine(text, line);
    if (!sawHeader) {
      if (parsed.kind !== "header") throw new ExportFileError(line, "the file does not start with a clink-export header");
      sawHeader = true;
      continue;
    }
    if (end !== null) throw new ExportFileError(line, "data after the end record");
    if (parsed.kind === "header") throw new ExportFileError(line, "a second header");
    if (parsed.kind === "end") end = parsed.counts;
    else seen[parsed.record.type]++;
  }
  if (!sawHeader) throw new ExportFileError(1, "the file is empty");
  if (end === null) throw new ExportFileError(last, "no end record: the file is truncated");
  for (const type of Object.keys(seen) as (keyof ExportCounts)[]) {
    if (seen[type] !== end[type]) {
      throw new ExportFileError(last, `the end record announces ${end[type]} ${type} records but the file holds ${seen[type]}`);
    }
  }
  return seen;
}

/** Imports a file already validated by validateExportFile. */
export async function importFrom(store: AdminStore, path: string): Promise<ImportSummary> {
  const summary: ImportSummary = { inserted: emptyCounts(), skipped: emptyCounts() };
  const add = (r: ImportResult) => {
    for (const type of Object.keys(r) as (keyof ImportResult)[]) {
      summary.inserted[type] += r[type].inserted;
      summary.skipped[type] += r[type].skipped;
    }
  };
  let batch: ExportRecord[] = [];
  for await (const { text, line } of readLines(path)) {
    const parsed = parseLine(text, line);
    if (parsed.kind !== "record") continue;
    batch.push(parsed.record);
    if (batch.length >= BATCH) {
      add(await store.importRecords(batch));
      batch = [];
    }
  }
  if (batch.length > 0) add(await store.importRecords(batch));
  return summary;
}

async function main(): Promise<number> {
  const { positionals } = parseArgs({ options: {}, allowPositionals: true });
  if (positionals.length !== 1) {
    console.error(USAGE);
    return 2;
  }
  const path = positionals[0]!;
  const config = loadConfig();
  await validateExportFile(path);
  const { store, hot, description } = await openStorage(config);
  try {
    await store.migrate();
    const { inserted: i, skipped: s } = await importFrom(store, path);
    console.log(
      `Imported into ${description}: ${i.account} accounts, ${i.apiKey} API keys, ${i.link} links, ${i.cell} click cells,` +
        ` ${i.webhookEndpoint} webhook endpoints, ${i.webhookDelivery} webhook deliveries, ${i.domain} domains,` +
        ` ${i.workspace} workspaces, ${i.member} memberships` +
        ` (already present or without owner, skipped: ${s.account} accounts, ${s.apiKey} API keys, ${s.link} links, ${s.cell} click cells,` +
        ` ${s.webhookEndpoint} webhook endpoints, ${s.webhookDelivery} webhook deliveries, ${s.domain} domains,` +
        ` ${s.workspace} workspaces, ${s.member} memberships; a personal workspace comes with its account)`,
    );
    return 0;
  } finally {
    await hot.close();
    await store.close();
  }
}

if (import.meta.main) {
  try {
    process.exit(await main());
  } catch (e) {
    if (e instanceof ExportFileError) {
      console.error(`Cannot import: ${e.message}; nothing was written`);
      process.exit(2);
    }
    if (e instanceof ConfigError || e instanceof AppError) {
      console.error(e.message);
      process.exit(2);
    }
    if (e instanceof Error && "code" in e && (e.code === "ENOENT" || e.code === "EACCES" || e.code === "EISDIR")) {
      console.error(`Cannot read the file: ${e.message}`);
      process.exit(2);
    }
    throw e;
  }
}

/**
 * `npm run export -- --out FILE`: every account, API key (hashes only), link, rollup cell, event webhook endpoint
 * (with its secret) and delivery of the configured storage (embedded SQLite under DATA_DIR, or Postgres in scale
 * mode) as JSON lines (see export-format.ts),
 * read from one consistent snapshot while the service keeps running.
 *
 * The file is written next to FILE under a temporary name, readable by its owner only (it holds password
 * hashes and webhook secrets), and renamed into place once complete: FILE is never a partial export. A missing
 * directory on the way to FILE is created (e.g. `backups/` on the first run).
 */
import { createWriteStream, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { once } from "node:events";
import { parseArgs } from "node:util";
import { openStorage } from "../../shared/adapters/open.ts";
import { ConfigError, loadConfig } from "../../shared/config.ts";
import { AppError } from "../../shared/errors.ts";
import type { AdminStore } from "../../shared/ports.ts";
import { emptyCounts, endLine, headerLine, recordLine, type ExportCounts } from "./export-format.ts";

const USAGE = "Usage: npm run export -- --out FILE";
const FILE_ERRORS = new Set(["ENOENT", "EACCES", "EPERM", "ENOSPC", "EISDIR", "ENOTDIR", "EROFS", "EDQUOT"]);

/** Writes the export of `store` to `path` (atomically); returns what it wrote. */
export async function exportTo(store: AdminStore, source: string, path: string): Promise<ExportCounts> {
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.partial-${process.pid}`;
  const out = createWriteStream(partial, { mode: 0o600 });
  const write = async (line: string) => {
    if (!out.write(`${line}\n`)) await once(out, "drain");
  };
  const counts = emptyCounts();
  try {
    await write(headerLine(source, new Date()));
    for await (const record of store.exportAll()) {
      counts[record.type]++;
      await write(recordLine(record));
    }
    await write(endLine(counts));
    out.end();
    await once(out, "finish");
    renameSync(partial, path);
    return counts;
  } catch (err) {
    out.destroy();
    rmSync(partial, { force: true });
    throw err;
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { out: { type: "string" } }, allowPositionals: false });
  if (!values.out) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfig();
  const { store, hot, description } = await openStorage(config);
  try {
    await store.migrate();
    const c = await exportTo(store, description, values.out);
    console.log(
      `Exported ${c.account} accounts, ${c.apiKey} API keys, ${c.link} links, ${c.cell} click cells, ${c.webhookEndpoint} webhook endpoints,` +
        ` ${c.webhookDelivery} webhook deliveries, ${c.domain} domains, ${c.workspace} workspaces and ${c.member} memberships from ${description} to ${values.out}`,
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
    if (e instanceof ConfigError || e instanceof AppError) {
      console.error(e.message);
      process.exit(2);
    }
    if (e instanceof Error && "code" in e && FILE_ERRORS.has(String(e.code))) {
      console.error(`Cannot write the export: ${e.message}`); // ENOENT, EACCES, ENOSPC…
      process.exit(1);
    }
    throw e;
  }
}

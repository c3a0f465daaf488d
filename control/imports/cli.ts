/**
 * `npm run import-links -- --account EMAIL --format bitly --file links.csv [--on-conflict skip|rename] [--mapping JSON]`:
 * an operator's import, run on the server against the configured storage (embedded SQLite or Postgres), for an
 * account named by its email. The same job as POST /api/v1/imports (control/imports/service.ts), recorded with the
 * account's jobs, so the dashboard and the API show it too. Exit status: 0 when every row was created or skipped,
 * 1 when rows were refused or the job failed, 2 when the command or the file is wrong (nothing written).
 */
import { readFileSync, statSync } from "node:fs";
import { basename } from "node:path";
import { parseArgs } from "node:util";
import { openStorage } from "../../shared/adapters/open.ts";
import { ConfigError, loadConfig } from "../../shared/config.ts";
import { AppError } from "../../shared/errors.ts";
import { ALL_SCOPES } from "../auth/scopes.ts";
import type { Deps } from "../deps.ts";
import { FORMAT_NAMES } from "./formats.ts";
import { IMPORT_MAX_BYTES } from "./read-file.ts";
import { startImport, toImportObject } from "./service.ts";

const USAGE = `Usage: npm run import-links -- --account EMAIL --format ${FORMAT_NAMES.join("|")} --file FILE [--on-conflict skip|rename] [--mapping JSON]`;
const SHOWN_ROWS = 20;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { account: { type: "string" }, format: { type: "string" }, file: { type: "string" }, "on-conflict": { type: "string" }, mapping: { type: "string" } },
  });
  if (!values.account || !values.format || !values.file) {
    console.error(USAGE);
    return 2;
  }
  if (statSync(values.file).size > IMPORT_MAX_BYTES) throw new AppError("payload_too_large", "An import file must be at most 50 MB");
  const bytes = readFileSync(values.file);
  const config = loadConfig();
  const { store, hot, description } = await openStorage(config);
  try {
    await store.migrate();
    const account = await store.getAccountByEmail(values.account.toLowerCase());
    if (!account) throw new AppError("not_found", `No account with the email ${values.account}`);
    const deps: Deps = { config, store, hot, now: Date.now };
    const { job, done } = await startImport(deps, { workspaceId: account.id, accountId: account.id, role: "owner", keyId: null, scopes: ALL_SCOPES }, bytes, {
      format: values.format, onConflict: values["on-conflict"], mapping: values.mapping, fileName: basename(values.file),
    });
    console.log(`Import ${job.id} into ${description} for ${account.email}: ${values.file}`);
    await done;
    const ended = toImportObject((await store.getImportJob(account.id, job.id))!);
    const c = ended.counts;
    console.log(`${ended.status}: ${ended.totalRows} rows, ${c.created} created (${c.renamed} of them renamed), ${c.skipped} skipped, ${c.failed} refused`);
    for (const r of ended.rows.slice(0, SHOWN_ROWS)) console.log(`  row ${r.row}: ${r.outcome} ${r.code}: ${r.message}`);
    if (ended.rows.length > SHOWN_ROWS) console.log(`  … ${ended.rows.length - SHOWN_ROWS} more: GET /api/v1/imports/${job.id}`);
    if (ended.error) console.error(`${ended.error.code}: ${ended.error.message}`);
    return ended.status === "done" && c.failed === 0 ? 0 : 1;
  } finally {
    await Promise.all([hot.close(), store.close()]);
  }
}

/** What to tell the operator when the command or the file is refused (exit 2, nothing written); undefined for a bug. */
function refusal(e: unknown): string | undefined {
  if (e instanceof ConfigError || e instanceof AppError) return `Cannot import: ${e.message}; nothing was written`;
  const code = (e as { code?: unknown } | null)?.code;
  if (code === "ENOENT" || code === "EACCES" || code === "EISDIR") return `Cannot read the file: ${(e as Error).message}`;
  return undefined;
}

if (import.meta.main) {
  const status = await main().catch((e) => {
    const message = refusal(e);
    if (message === undefined) throw e;
    console.error(message);
    return 2;
  });
  process.exit(status);
}

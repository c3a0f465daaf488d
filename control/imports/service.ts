/**
 * One function per import operation, used by REST, the dashboard and the CLI: start a job from a file and its
 * options, read one, list them. The options are checked and the file's encoding and header read before the job is
 * created, so a wrong file is refused at once (400) instead of becoming a failed job.
 */
import { AppError } from "../../shared/errors.ts";
import { RUNNING_IMPORT_STATUSES, type ImportJob } from "../../shared/ports/imports.ts";
import { isoOrNull } from "../../shared/time.ts";
import type { Caller, Deps } from "../deps.ts";
import { FORMAT_NAMES, formatWithMapping, isFormatName, resolveColumns, SOURCE_FORMATS, type SourceFormat } from "./formats.ts";
import { decodeText, IMPORT_MAX_BYTES, isJsonFile } from "./read-file.ts";
import { IMPORT_STALE_MS, importRunner } from "./runner.ts";

export const ON_CONFLICT = ["skip", "rename"] as const;

/** The options of an import, as a query string or form fields give them. */
export interface ImportOptions {
  format?: string | null;
  onConflict?: string | null;
  mapping?: string | null;
  fileName?: string | null;
}

const bad = (name: string, message: string) => new AppError("invalid_parameter", `${name} ${message}`, { errors: [{ path: `/${name}`, message }] });

function formatOf(o: ImportOptions): { name: string; format: SourceFormat } {
  const name = o.format ?? "";
  if (!isFormatName(name)) throw bad("format", `must be ${FORMAT_NAMES.join(", ")}`);
  if (!o.mapping) {
    if (name === "csv") throw bad("mapping", 'is required for format=csv, e.g. {"url":"Long URL","slug":"Back-half"}');
    return { name, format: SOURCE_FORMATS[name] };
  }
  let mapping: unknown;
  try {
    mapping = JSON.parse(o.mapping);
  } catch {
    throw bad("mapping", "must be a JSON object naming a column per field");
  }
  if (typeof mapping !== "object" || mapping === null || Array.isArray(mapping)) throw bad("mapping", "must be a JSON object naming a column per field");
  return { name, format: formatWithMapping(SOURCE_FORMATS[name], mapping as Record<string, unknown>) };
}

/** The header row of a CSV text, cheaply (only the first line matters here; pass 1 reads the file properly). */
function checkHeader(text: string, format: SourceFormat): void {
  if (isJsonFile(format, text)) return;
  const first = text.replace(/^\uFEFF/, "").split(/\r?\n/, 1)[0] ?? "";
  if (!first.trim()) throw new AppError("missing_header", "The file is empty: it has no header row");
  const sep = first.includes(",") ? "," : first.includes(";") ? ";" : first.includes("\t") ? "\t" : ",";
  resolveColumns(format, first.split(sep).map((h) => h.trim().replace(/^"|"$/g, "")));
}

/** Starts an import job (202): the options and the file's encoding and header are checked first. */
export async function startImport(deps: Deps, caller: Caller, bytes: Uint8Array, options: ImportOptions) {
  if (bytes.byteLength > IMPORT_MAX_BYTES) throw new AppError("payload_too_large", "An import file must be at most 50 MB");
  const { name, format } = formatOf(options);
  const onConflict = options.onConflict || "skip";
  if (onConflict !== "skip" && onConflict !== "rename") throw bad("onConflict", "must be skip or rename");
  const fileName = options.fileName ? options.fileName.slice(0, 200) : null;
  checkHeader(decodeText(bytes), format);
  const { job, done } = await importRunner(deps).start(caller, { bytes, formatName: name, format, onConflict, fileName });
  return { job: toImportObject(job), done };
}

/** A job as the API shows it: dates as ISO 8601, a stale job under way shown (and stored) as interrupted. */
export function toImportObject(j: ImportJob) {
  return {
    id: j.id,
    status: j.status,
    format: j.format,
    onConflict: j.onConflict,
    fileName: j.fileName,
    totalRows: j.totalRows,
    progress: Math.round(j.progress * 1000) / 1000,
    counts: j.counts,
    rows: j.rows,
    rowsTruncated: j.counts.skipped + j.counts.failed + j.counts.renamed > j.rows.length,
    error: j.error,
    createdAt: isoOrNull(j.createdAt)!,
    updatedAt: isoOrNull(j.updatedAt)!,
    finishedAt: isoOrNull(j.finishedAt),
  };
}
export type ImportObject = ReturnType<typeof toImportObject>;

/** A job of another process that stopped taking steps long ago is interrupted: stored so, then read again. */
async function settled(deps: Deps, caller: Caller, job: ImportJob): Promise<ImportJob> {
  const stale = RUNNING_IMPORT_STATUSES.includes(job.status) && !importRunner(deps).live.has(job.id) && job.updatedAt < deps.now() - IMPORT_STALE_MS;
  if (!stale) return job;
  await deps.store.interruptImportJobs(deps.now() - IMPORT_STALE_MS, deps.now());
  return (await deps.store.getImportJob(caller.workspaceId, job.id)) ?? job;
}

export async function getImport(deps: Deps, caller: Caller, id: string): Promise<ImportObject> {
  const job = typeof id === "string" && id.length <= 100 ? await deps.store.getImportJob(caller.workspaceId, id) : null;
  if (!job) throw new AppError("not_found", `No import "${String(id).slice(0, 100)}"`);
  return toImportObject(await settled(deps, caller, job));
}

/** The account's newest jobs (at most 50). */
export async function listImports(deps: Deps, caller: Caller): Promise<{ imports: ImportObject[] }> {
  const jobs = await deps.store.listImportJobs(caller.workspaceId, 50);
  return { imports: await Promise.all(jobs.map(async (j) => toImportObject(await settled(deps, caller, j)))) };
}

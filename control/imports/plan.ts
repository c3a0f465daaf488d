/**
 * Pass 1 of an import: the whole file judged before anything is written. Each row becomes the create input the
 * link service takes (validated by the same validateLinkInput and checkSlug a create runs), or a report saying why
 * it is skipped or refused; then rows already imported (their externalId exists) and taken slugs are settled.
 */
import { AppError, toAppError } from "../../shared/errors.ts";
import { checkSlug, ownHostsOf, validateLinkInput, type InputContext } from "../../shared/link-input.ts";
import { parseIsoDateTime } from "../../shared/time.ts";
import type { ImportCounts, ImportedHistory, ImportRowReport } from "../../shared/ports/imports.ts";
import type { CreateLinkInput } from "../../shared/schemas.ts";
import type { Caller, Deps } from "../deps.ts";
import { defaultLinkDomain } from "../domains/service.ts";
import { externalIdOf, resolveColumns, slugFromCell, type ImportField, type SourceFormat } from "./formats.ts";
import type { FileRow } from "./read-file.ts";

export type OnConflict = "skip" | "rename";

/** A row to write: the create input the link service takes, and the history it carries. */
export interface PlannedRow {
  row: number;
  input: CreateLinkInput;
  history: ImportedHistory;
  renamedFrom?: string;
  /** Why it was renamed: slug_taken, slug_reserved or invalid_slug (too short). */
  renamedBecause?: string;
}

export interface Plan {
  writes: PlannedRow[];
  /** Rows whose link exists from an earlier run: their history is applied again (a no-op when it was). */
  alreadyImported: ImportedHistory[];
  reports: ImportRowReport[];
  counts: ImportCounts;
}

/** Title fields the link has: the preview title holds at most this many characters (longer titles are cut). */
const TITLE_MAX = 300;
const SLUG_CHARS = /^[A-Za-z0-9_-]{1,40}$/;

type Candidate = { row: number; input: CreateLinkInput & { externalId: string }; slug: string | null; history: ImportedHistory };

const report = (row: number, outcome: ImportRowReport["outcome"], code: string, message: string, slug?: string | null): ImportRowReport =>
  slug ? { row, outcome, code, message, slug } : { row, outcome, code, message };

/** A date cell: ISO 8601 (a zone-less one is UTC), or Unix seconds or milliseconds. */
function parseDate(v: string): number | null {
  if (/^\d{9,10}$/.test(v)) return Number(v) * 1000;
  if (/^\d{12,13}$/.test(v)) return Number(v);
  return parseIsoDateTime(v);
}

/** The row code a refused create input earns, by the field it failed on. */
function codeOf(e: AppError): string {
  const path = e.errors?.[0]?.path ?? "";
  if (path === "/url") return "invalid_url";
  if (path === "/tags") return "invalid_tags";
  if (path === "/ogTitle") return "invalid_title";
  if (path === "/externalId") return "invalid_id";
  return "invalid_row";
}

function inputContext(deps: Deps): InputContext {
  return { ownHosts: ownHostsOf([deps.config.baseUrl, ...deps.config.ownBaseUrls], deps.config.port) };
}

/** One row as a candidate, or the report of why it cannot be one. */
function candidateOf(format: SourceFormat, cols: ReturnType<typeof resolveColumns>, r: FileRow, ctx: InputContext): Candidate | ImportRowReport {
  const get = (f: ImportField) => {
    for (const i of cols.at[f] ?? []) {
      const v = (r.cells[i] ?? "").trim();
      if (v) return v;
    }
    return "";
  };
  const url = get("url");
  if (!url) return report(r.row, "failed", "missing_url", "The destination cell is empty");
  const slugCell = get("slug");
  const slug = slugCell ? slugFromCell(slugCell) : null;
  const idParts = cols.idAt.map((i) => (r.cells[i] ?? "").trim());
  const sourceId = get("id") || (idParts.length && idParts.every(Boolean) ? idParts.join("/") : slugCell || url);
  const created = get("createdAt");
  const createdAt = created ? parseDate(created) : null;
  if (created && createdAt === null) return report(r.row, "failed", "invalid_date", `"${created.slice(0, 40)}" is not a date (ISO 8601 or Unix time)`, slug);
  const clicksCell = get("clicks").replace(/[ ,_]/g, "");
  if (clicksCell && !/^\d{1,15}$/.test(clicksCell)) return report(r.row, "failed", "invalid_clicks", `"${clicksCell.slice(0, 40)}" is not a click count`, slug);
  const title = get("title");
  const tags = get("tags").split(format.tagSeparator).map((t) => t.trim()).filter(Boolean);
  const input = {
    url,
    externalId: externalIdOf(format.prefix, sourceId),
    ...(tags.length ? { tags } : {}),
    ...(title ? { ogTitle: title.slice(0, TITLE_MAX) } : {}),
  };
  try {
    validateLinkInput<CreateLinkInput>("create", input, ctx);
  } catch (e) {
    const err = toAppError(e);
    return report(r.row, "failed", codeOf(err), err.errors?.map((x) => `${x.path.slice(1)} ${x.message}`).join("; ") ?? err.message, slug);
  }
  const history = { externalId: input.externalId, createdAt, clicks: clicksCell ? Number(clicksCell) : null };
  return { row: r.row, input, slug, history };
}

/** Whether a slug can be written as it is: "ok", "reserved", "short" (a suffix may make either fit) or "invalid". */
function slugVerdict(slug: string): "ok" | "reserved" | "short" | "invalid" {
  try {
    checkSlug(slug);
    return "ok";
  } catch (e) {
    if (e instanceof AppError && e.code === "slug_reserved") return "reserved";
    return SLUG_CHARS.test(slug) && slug.length < 3 ? "short" : "invalid";
  }
}

/** Free slugs for the rows whose own is taken: `slug-2`, `slug-3`… checked against the store a round at a time. */
async function renameAll(deps: Deps, domain: string, wanted: { slug: string; assign: (s: string) => void }[], used: Set<string>): Promise<void> {
  let pending = wanted;
  for (let n = 2; pending.length; n += 5) {
    const tries = pending.map((w) => Array.from({ length: 5 }, (_, k) => `${w.slug.slice(0, 37 - String(n + k).length)}-${n + k}`));
    const taken = await deps.store.takenSlugs(domain, tries.flat().filter((s) => !used.has(s)));
    pending = pending.filter((w, i) => {
      const free = tries[i].find((s) => !used.has(s) && !taken.has(s) && slugVerdict(s) === "ok");
      if (free === undefined) return true;
      used.add(free);
      w.assign(free);
      return false;
    });
  }
}

/** Pass 1: every row judged, nothing written. `progress` is told the share of rows read so far. */
export async function planImport(
  deps: Deps, caller: Caller, format: SourceFormat, onConflict: OnConflict,
  file: { header: string[]; rows: FileRow[] }, progress: (share: number) => Promise<void>,
): Promise<Plan> {
  const cols = resolveColumns(format, file.header);
  const ctx = inputContext(deps);
  const counts: ImportCounts = { created: 0, skipped: 0, renamed: 0, failed: 0 };
  const reports: ImportRowReport[] = [];
  const note = (r: ImportRowReport) => {
    reports.push(r);
    counts[r.outcome === "renamed" ? "renamed" : r.outcome]++;
  };
  const candidates: Candidate[] = [];
  const seenIds = new Set<string>();
  for (const [i, r] of file.rows.entries()) {
    const c = candidateOf(format, cols, r, ctx);
    if (!("input" in c)) note(c);
    else if (seenIds.has(c.input.externalId)) note(report(c.row, "skipped", "duplicate_row", "An earlier row of this file is the same link", c.slug));
    else {
      seenIds.add(c.input.externalId);
      candidates.push(c);
    }
    if (i % 5000 === 4999) await progress(i / file.rows.length);
  }
  const imported = await deps.store.takenExternalIds(caller.workspaceId, [...seenIds]);
  const alreadyImported: ImportedHistory[] = [];
  const fresh = candidates.filter((c) => {
    if (!imported.has(c.input.externalId)) return true;
    alreadyImported.push(c.history);
    note(report(c.row, "skipped", "already_imported", "Imported before: the link exists (re-running an import changes nothing)", c.slug));
    return false;
  });
  // Imported links go where links made without a domain go (the workspace's default domain, else the base one).
  const domain = await defaultLinkDomain(deps, caller);
  const used = await deps.store.takenSlugs(domain, fresh.flatMap((c) => (c.slug ? [c.slug] : [])));
  const writes: PlannedRow[] = [];
  const renames: { slug: string; assign: (s: string) => void }[] = [];
  for (const c of fresh) {
    const verdict = c.slug === null ? "ok" : slugVerdict(c.slug);
    if (verdict === "invalid" || (verdict === "short" && onConflict === "skip")) {
      note(report(c.row, "failed", "invalid_slug", "The slug must be 3-40 characters of A-Z, a-z, 0-9, - and _", c.slug));
      continue;
    }
    const planned: PlannedRow = { row: c.row, input: c.slug ? { ...c.input, slug: c.slug } : c.input, history: c.history };
    if (c.slug !== null && (verdict !== "ok" || used.has(c.slug))) {
      if (onConflict === "skip") {
        const reserved = verdict === "reserved";
        note(report(c.row, "skipped", reserved ? "slug_reserved" : "slug_taken", `The slug "${c.slug}" is ${reserved ? "reserved here" : "taken"}`, c.slug));
        continue;
      }
      const [from, because] = [c.slug, verdict === "ok" ? "slug_taken" : verdict === "reserved" ? "slug_reserved" : "invalid_slug"];
      renames.push({ slug: from, assign: (s) => Object.assign(planned, { input: { ...planned.input, slug: s }, renamedFrom: from, renamedBecause: because }) });
    } else if (c.slug !== null) used.add(c.slug);
    writes.push(planned);
  }
  await renameAll(deps, domain, renames, used);
  return { writes, alreadyImported, reports, counts };
}

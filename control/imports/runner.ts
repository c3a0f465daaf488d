/**
 * Import jobs in the control process: one job at a time per account, and a few accounts' jobs at a time, served
 * fairly (shared/limiter.ts). A job reads and judges the whole file first (pass 1, plan.ts); only then does it write,
 * through the link service's bulk create, BULK_MAX rows at a time (pass 2). A failure in pass 2 leaves the job
 * failed with what it wrote counted; the same file sent again skips what exists (externalId) and finishes.
 */
import { AppError, toAppError } from "../../shared/errors.ts";
import { FairLimiter } from "../../shared/limiter.ts";
import { IMPORT_REPORT_MAX, type ImportJob, type ImportRowReport } from "../../shared/ports/imports.ts";
import type { Caller, Deps } from "../deps.ts";
import { BULK_MAX, createLinkRows } from "../links/service.ts";
import { recordAudit } from "../audit/service.ts";
import type { SourceFormat } from "./formats.ts";
import { planImport, type Plan, type PlannedRow } from "./plan.ts";
import { readImportFile } from "./read-file.ts";

/** Pass 1's share of a job's progress bar (pass 2, the writing, is the rest). */
const PLAN_SHARE = 0.1;
/** Jobs of different accounts running at once in one process. */
const JOBS_AT_ONCE = 2;
/** A job under way whose last step is older than this is taken for one whose process stopped. */
export const IMPORT_STALE_MS = 120_000;
const HEARTBEAT_MS = 30_000;

export interface ImportRequest {
  bytes: Uint8Array;
  formatName: string;
  format: SourceFormat;
  onConflict: "skip" | "rename";
  fileName: string | null;
}

export class ImportRunner {
  private readonly slots = new FairLimiter(JOBS_AT_ONCE);
  /** Per account: the tail of its queue of jobs. */
  private readonly tails = new Map<string, Promise<void>>();
  /** Jobs of this process under way (they heartbeat). */
  readonly live = new Map<string, ImportJob>();
  private heartbeat: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly deps: Deps) {}

  /** Marks the jobs a stopped process left under way as interrupted: all of them when this is the only process. */
  async interruptLeftovers(): Promise<void> {
    const now = this.deps.now();
    const before = this.deps.config.mode === "embedded" ? now + 1 : now - IMPORT_STALE_MS;
    await this.deps.store.interruptImportJobs(before, now).catch(() => {});
  }

  /** Creates the job and queues it; resolves once it is stored (the work goes on after). */
  async start(caller: Caller, req: ImportRequest): Promise<{ job: ImportJob; done: Promise<void> }> {
    const now = this.deps.now();
    const job: ImportJob = {
      id: `imp_${crypto.randomUUID().replace(/-/g, "").slice(0, 20)}`, accountId: caller.workspaceId, format: req.formatName,
      onConflict: req.onConflict, fileName: req.fileName, status: "queued", totalRows: 0, progress: 0,
      counts: { created: 0, skipped: 0, renamed: 0, failed: 0 }, rows: [], error: null, createdAt: now, updatedAt: now, finishedAt: null,
    };
    await this.deps.store.createImportJob(job);
    this.live.set(job.id, job);
    this.beat();
    const previous = this.tails.get(caller.workspaceId) ?? Promise.resolve();
    const done = previous.then(() => this.slots.run(caller.workspaceId, () => this.run(caller, job, req)));
    this.tails.set(caller.workspaceId, done);
    void done.finally(() => {
      this.live.delete(job.id);
      if (this.tails.get(caller.workspaceId) === done) this.tails.delete(caller.workspaceId);
    });
    return { job: { ...job }, done };
  }

  /** Keeps this process's jobs' updatedAt fresh while they wait or work, so no other process takes them for stopped. */
  private beat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => {
      if (this.live.size === 0) {
        clearInterval(this.heartbeat!);
        this.heartbeat = null;
        return;
      }
      for (const job of this.live.values()) void this.save(job).catch(() => {});
    }, HEARTBEAT_MS);
    this.heartbeat.unref?.();
  }

  private save(job: ImportJob): Promise<void> {
    job.updatedAt = this.deps.now();
    return this.deps.store.saveImportJob(job);
  }

  private async run(caller: Caller, job: ImportJob, req: ImportRequest): Promise<void> {
    try {
      job.status = "validating";
      await this.save(job);
      const file = await readImportFile(req.bytes, req.format);
      job.totalRows = file.rows.length;
      const plan = await planImport(this.deps, caller, req.format, req.onConflict, file, (share) => {
        job.progress = share * PLAN_SHARE;
        return this.save(job);
      });
      job.counts = { ...plan.counts };
      addReports(job, plan.reports);
      job.status = "writing";
      job.progress = PLAN_SHARE;
      await this.save(job);
      await this.write(caller, job, plan);
      job.status = "done";
    } catch (e) {
      const err = toAppError(e);
      if (!(e instanceof AppError)) console.error("import job failed:", e);
      job.status = "failed";
      job.error = {
        code: err.code,
        message: job.counts.created > 0
          ? `${err.message}. ${job.counts.created} links were written before it stopped; send the same file again to finish (what exists is skipped)`
          : `${err.message}. Nothing was written`,
      };
    }
    job.progress = job.status === "done" ? 1 : job.progress;
    job.finishedAt = this.deps.now();
    // Before the job reads as finished: whoever sees it finished finds its entry.
    await recordAudit(this.deps, caller, "import.finished", { type: "import", id: job.id }, { format: job.format, status: job.status, ...job.counts });
    await this.save(job).catch((e) => console.error("import job could not be saved:", e));
  }

  /** Pass 2: the planned rows through bulk create, BULK_MAX at a time, each chunk's history right after it. */
  private async write(caller: Caller, job: ImportJob, plan: Plan): Promise<void> {
    await this.deps.store.applyImportedHistory(caller.workspaceId, plan.alreadyImported);
    for (let at = 0; at < plan.writes.length; at += BULK_MAX) {
      const chunk = plan.writes.slice(at, at + BULK_MAX);
      const { results } = await createLinkRows(this.deps, caller, chunk.map((p) => p.input));
      const written = chunk.filter((p, i) => countResult(job, p, results[i]));
      await this.deps.store.applyImportedHistory(caller.workspaceId, written.map((p) => p.history));
      job.progress = PLAN_SHARE + (1 - PLAN_SHARE) * Math.min(1, (at + chunk.length) / plan.writes.length);
      await this.save(job);
    }
  }
}

/** Counts one written row's outcome on the job; true when it created a link. */
function countResult(job: ImportJob, p: PlannedRow, r: Awaited<ReturnType<typeof createLinkRows>>["results"][number]): boolean {
  const slug = p.renamedFrom ?? p.input.slug;
  if (r.ok && r.action === "created") {
    job.counts.created++;
    if (p.renamedFrom !== undefined) {
      job.counts.renamed++;
      const why = p.renamedBecause === "slug_taken" ? "is taken" : p.renamedBecause === "slug_reserved" ? "is reserved here" : "is too short";
      addReports(job, [{ row: p.row, outcome: "renamed", code: p.renamedBecause ?? "slug_taken", message: `The slug "${p.renamedFrom}" ${why}: the link is at "${r.slug}"`, slug, newSlug: r.slug }]);
    }
    return true;
  }
  if (r.ok) {
    // Another import or request created this externalId between the passes: the link exists, as on a re-run.
    job.counts.skipped++;
    addReports(job, [{ row: p.row, outcome: "skipped", code: "already_imported", message: "Imported meanwhile by another request", ...(slug ? { slug } : {}) }]);
    return false;
  }
  job.counts.failed++;
  addReports(job, [{ row: p.row, outcome: "failed", code: r.error.code, message: r.error.detail, ...(slug ? { slug } : {}) }]);
  return false;
}

function addReports(job: ImportJob, reports: ImportRowReport[]): void {
  const room = IMPORT_REPORT_MAX - job.rows.length;
  if (room > 0) job.rows.push(...reports.slice(0, room));
  job.rows.sort((a, b) => a.row - b.row);
}

const runners = new WeakMap<Deps, ImportRunner>();

/** The one runner of a control plane (REST, dashboard and CLI share it). */
export function importRunner(deps: Deps): ImportRunner {
  let r = runners.get(deps);
  if (!r) runners.set(deps, (r = new ImportRunner(deps)));
  return r;
}

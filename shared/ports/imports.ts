/**
 * The imports role of the store (issue #25): import jobs as they run and end, and the few link look-ups an import
 * plans with (which slugs and externalIds are taken, many at a time) plus the one write the link service has no
 * input for: the history a source carries (creation date, clicks counted there).
 */

export const IMPORT_STATUSES = ["queued", "validating", "writing", "done", "failed", "interrupted"] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];
/** Statuses of a job that is still under way (a restart turns them into "interrupted"). */
export const RUNNING_IMPORT_STATUSES: readonly ImportStatus[] = ["queued", "validating", "writing"];

export interface ImportCounts {
  /** Links written by this job (renamed ones included). */
  created: number;
  /** Rows not written on purpose: already imported, a duplicate row, a slug taken under onConflict=skip. */
  skipped: number;
  /** Created rows whose slug was taken and got a free one (onConflict=rename). */
  renamed: number;
  /** Rows refused: invalid or hostile destination, invalid slug, tags, date or clicks. */
  failed: number;
}

/** What happened to one row, when it was not simply created as it was. */
export interface ImportRowReport {
  /** The row as a spreadsheet numbers it: the header is row 1, the first link row 2. */
  row: number;
  outcome: "skipped" | "failed" | "renamed";
  /** Stable: see docs/imports.md. */
  code: string;
  message: string;
  slug?: string;
  /** The slug it got (renamed rows). */
  newSlug?: string;
}

export interface ImportJob {
  id: string;
  accountId: string;
  format: string;
  onConflict: "skip" | "rename";
  fileName: string | null;
  status: ImportStatus;
  /** Link rows in the file (0 until the file is read). */
  totalRows: number;
  /** 0 to 1. */
  progress: number;
  counts: ImportCounts;
  /** The first rows' reports (at most IMPORT_REPORT_MAX); `counts` has them all. */
  rows: ImportRowReport[];
  /** Why the whole job failed or stopped, when it did. */
  error: { code: string; message: string } | null;
  createdAt: number;
  /** Raised at every step a running job makes: a heartbeat another process can judge it by. */
  updatedAt: number;
  finishedAt: number | null;
}

/** Row reports a job keeps (the counts cover every row). */
export const IMPORT_REPORT_MAX = 1000;

/** A link's history from its source, for the link of this account with this externalId. */
export interface ImportedHistory {
  externalId: string;
  createdAt: number | null;
  clicks: number | null;
}

export interface ImportStore {
  createImportJob(job: ImportJob): Promise<void>;
  /** Writes the job's status, progress, counts, reports, error and times (by id). */
  saveImportJob(job: ImportJob): Promise<void>;
  /** The account's job, or null (also for another account's). */
  getImportJob(accountId: string, id: string): Promise<ImportJob | null>;
  /** Newest first. */
  listImportJobs(accountId: string, limit: number): Promise<ImportJob[]>;
  /** Marks jobs still under way whose last step is older than `staleBefore` as interrupted; returns how many. */
  interruptImportJobs(staleBefore: number, at: number): Promise<number>;
  /** Which of these slugs are taken on the domain (by any account). */
  takenSlugs(domain: string, slugs: string[]): Promise<Set<string>>;
  /** Which of these externalIds the account's links have. */
  takenExternalIds(accountId: string, externalIds: string[]): Promise<Set<string>>;
  /**
   * Sets the creation date and raises the hit count to the source's clicks (never lowers it: clicks counted here
   * since stay counted). Idempotent: the same history twice writes nothing new.
   */
  applyImportedHistory(accountId: string, history: ImportedHistory[]): Promise<void>;
}

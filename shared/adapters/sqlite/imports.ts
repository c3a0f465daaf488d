/** The imports role of the SQLite store: import jobs, and the batched link look-ups an import plans with. */
import type { ImportedHistory, ImportJob, ImportStore } from "../../ports/imports.ts";
import { CLICK_CHUNK, type SqliteConnection } from "./connection.ts";

/** Migration 14's table (shared/adapters/sqlite/migrations.ts). */
export const IMPORT_JOBS_SQLITE = `
CREATE TABLE import_jobs (
  id            TEXT PRIMARY KEY,
  account_id    TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  format        TEXT NOT NULL,
  on_conflict   TEXT NOT NULL,
  file_name     TEXT,
  status        TEXT NOT NULL,
  total_rows    INTEGER NOT NULL DEFAULT 0,
  progress      REAL NOT NULL DEFAULT 0,
  counts        TEXT NOT NULL,
  rows          TEXT NOT NULL,
  error         TEXT,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  finished_at   INTEGER
);
CREATE INDEX import_jobs_account_created ON import_jobs(account_id, created_at DESC, id DESC);
`;

interface JobRow {
  id: string;
  accountId: string;
  format: string;
  onConflict: string;
  fileName: string | null;
  status: string;
  totalRows: number;
  progress: number;
  counts: string;
  rows: string;
  error: string | null;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
}

const JOB_COLUMNS = `id, account_id AS accountId, format, on_conflict AS onConflict, file_name AS fileName, status,
  total_rows AS totalRows, progress, counts, rows, error, created_at AS createdAt, updated_at AS updatedAt, finished_at AS finishedAt`;

const fromRow = (r: JobRow): ImportJob => ({
  ...r,
  onConflict: r.onConflict as ImportJob["onConflict"],
  status: r.status as ImportJob["status"],
  counts: JSON.parse(r.counts),
  rows: JSON.parse(r.rows),
  error: r.error === null ? null : JSON.parse(r.error),
});

/** `values` in slices small enough for one `IN (…)` list each. */
function* slices<T>(values: T[]): Generator<T[]> {
  for (let i = 0; i < values.length; i += CLICK_CHUNK) yield values.slice(i, i + CLICK_CHUNK);
}

const marks = (n: number) => Array(n).fill("?").join(",");

export function sqliteImports(c: SqliteConnection): ImportStore {
  const save = (j: ImportJob) =>
    c.st(
      `UPDATE import_jobs SET status = ?, total_rows = ?, progress = ?, counts = ?, rows = ?, error = ?, updated_at = ?, finished_at = ?
       WHERE id = ?`,
    ).run(j.status, j.totalRows, j.progress, JSON.stringify(j.counts), JSON.stringify(j.rows), j.error && JSON.stringify(j.error), j.updatedAt, j.finishedAt, j.id);
  return {
    async createImportJob(j: ImportJob): Promise<void> {
      c.st(
        `INSERT INTO import_jobs (id, account_id, format, on_conflict, file_name, status, counts, rows, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, '{}', '[]', ?, ?)`,
      ).run(j.id, j.accountId, j.format, j.onConflict, j.fileName, j.status, j.createdAt, j.updatedAt);
      save(j);
    },

    async saveImportJob(j: ImportJob): Promise<void> {
      save(j);
    },

    async getImportJob(accountId: string, id: string): Promise<ImportJob | null> {
      const r = c.st<JobRow>(`SELECT ${JOB_COLUMNS} FROM import_jobs WHERE id = ? AND account_id = ?`).get(id, accountId);
      return r ? fromRow(r) : null;
    },

    async listImportJobs(accountId: string, limit: number): Promise<ImportJob[]> {
      return c
        .st<JobRow>(`SELECT ${JOB_COLUMNS} FROM import_jobs WHERE account_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`)
        .all(accountId, limit)
        .map(fromRow);
    },

    async interruptImportJobs(staleBefore: number, at: number): Promise<number> {
      const error = JSON.stringify({ code: "interrupted", message: "The service restarted while this import ran; send the same file again to finish it" });
      return c.st(
        `UPDATE import_jobs SET status = 'interrupted', error = ?, updated_at = ?, finished_at = ?
         WHERE status IN ('queued', 'validating', 'writing') AND updated_at < ?`,
      ).run(error, at, at, staleBefore).changes;
    },

    async takenSlugs(domain: string, slugs: string[]): Promise<Set<string>> {
      const out = new Set<string>();
      for (const s of slices(slugs)) {
        const rows = c.db.query<{ slug: string }, string[]>(`SELECT slug FROM links WHERE domain = ? AND slug IN (${marks(s.length)})`).all(domain, ...s);
        for (const r of rows) out.add(r.slug);
      }
      return out;
    },

    async takenExternalIds(accountId: string, externalIds: string[]): Promise<Set<string>> {
      const out = new Set<string>();
      for (const s of slices(externalIds)) {
        const rows = c.db
          .query<{ externalId: string }, string[]>(`SELECT external_id AS externalId FROM links WHERE account_id = ? AND external_id IN (${marks(s.length)})`)
          .all(accountId, ...s);
        for (const r of rows) out.add(r.externalId);
      }
      return out;
    },

    async applyImportedHistory(accountId: string, history: ImportedHistory[]): Promise<void> {
      const set = c.st(
        `UPDATE links SET created_at = COALESCE(?, created_at), hits = MAX(hits, COALESCE(?, 0))
         WHERE account_id = ? AND external_id = ? AND (created_at <> COALESCE(?, created_at) OR hits < COALESCE(?, 0))`,
      );
      c.db.transaction(() => {
        for (const h of history) set.run(h.createdAt, h.clicks, accountId, h.externalId, h.createdAt, h.clicks);
      }).immediate();
    },
  };
}

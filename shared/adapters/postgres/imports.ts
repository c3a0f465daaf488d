/** The imports role of the Postgres store: import jobs, and the batched link look-ups an import plans with. */
import type { ImportedHistory, ImportJob, ImportStore } from "../../ports/imports.ts";
import type { PostgresConnection } from "./connection.ts";

/** Migration 16's table (shared/adapters/postgres/migrations.ts). */
export const IMPORT_JOBS_POSTGRES = `
CREATE TABLE import_jobs (
  id            text PRIMARY KEY,
  account_id    text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  format        text NOT NULL,
  on_conflict   text NOT NULL,
  file_name     text,
  status        text NOT NULL,
  total_rows    integer NOT NULL DEFAULT 0,
  progress      double precision NOT NULL DEFAULT 0,
  counts        jsonb NOT NULL,
  rows          jsonb NOT NULL,
  error         jsonb,
  created_at    bigint NOT NULL,
  updated_at    bigint NOT NULL,
  finished_at   bigint
);
CREATE INDEX import_jobs_account_created ON import_jobs(account_id, created_at DESC, id DESC);
`;

const JOB_COLUMNS = `id, account_id AS "accountId", format, on_conflict AS "onConflict", file_name AS "fileName", status,
  total_rows AS "totalRows", progress, counts, rows, error, created_at AS "createdAt", updated_at AS "updatedAt", finished_at AS "finishedAt"`;

export function postgresImports(c: PostgresConnection): ImportStore {
  const save = (j: ImportJob) => c.sql`
    UPDATE import_jobs SET status = ${j.status}, total_rows = ${j.totalRows}, progress = ${j.progress},
      counts = ${c.sql.json(j.counts as never)}, rows = ${c.sql.json(j.rows as never)},
      error = ${j.error === null ? null : c.sql.json(j.error)}, updated_at = ${j.updatedAt}, finished_at = ${j.finishedAt}
    WHERE id = ${j.id}`;
  return {
    createImportJob(j: ImportJob): Promise<void> {
      return c.run(async () => {
        await c.sql`
          INSERT INTO import_jobs (id, account_id, format, on_conflict, file_name, status, counts, rows, created_at, updated_at)
          VALUES (${j.id}, ${j.accountId}, ${j.format}, ${j.onConflict}, ${j.fileName}, ${j.status}, '{}', '[]', ${j.createdAt}, ${j.updatedAt})`;
        await save(j);
      });
    },

    saveImportJob(j: ImportJob): Promise<void> {
      return c.run(async () => void (await save(j)));
    },

    getImportJob(accountId: string, id: string): Promise<ImportJob | null> {
      return c.run(async () => {
        const [row] = await c.sql<ImportJob[]>`
          SELECT ${c.sql.unsafe(JOB_COLUMNS)} FROM import_jobs WHERE id = ${id} AND account_id = ${accountId}`;
        return row ?? null;
      });
    },

    listImportJobs(accountId: string, limit: number): Promise<ImportJob[]> {
      return c.run(async () => [
        ...(await c.sql<ImportJob[]>`
          SELECT ${c.sql.unsafe(JOB_COLUMNS)} FROM import_jobs WHERE account_id = ${accountId}
          ORDER BY created_at DESC, id DESC LIMIT ${limit}`),
      ]);
    },

    interruptImportJobs(staleBefore: number, at: number): Promise<number> {
      const error = { code: "interrupted", message: "The service restarted while this import ran; send the same file again to finish it" };
      return c.run(async () => {
        const r = await c.sql`
          UPDATE import_jobs SET status = 'interrupted', error = ${c.sql.json(error)}, updated_at = ${at}, finished_at = ${at}
          WHERE status IN ('queued', 'validating', 'writing') AND updated_at < ${staleBefore}`;
        return r.count;
      });
    },

    takenSlugs(domain: string, slugs: string[]): Promise<Set<string>> {
      return c.run(async () => {
        const rows = await c.sql<{ slug: string }[]>`SELECT slug FROM links WHERE domain = ${domain} AND slug = ANY(${slugs}::text[])`;
        return new Set(rows.map((r) => r.slug));
      });
    },

    takenExternalIds(accountId: string, externalIds: string[]): Promise<Set<string>> {
      return c.run(async () => {
        const rows = await c.sql<{ externalId: string }[]>`
          SELECT external_id AS "externalId" FROM links WHERE account_id = ${accountId} AND external_id = ANY(${externalIds}::text[])`;
        return new Set(rows.map((r) => r.externalId));
      });
    },

    applyImportedHistory(accountId: string, history: ImportedHistory[]): Promise<void> {
      if (history.length === 0) return Promise.resolve();
      return c.run(async () => {
        await c.sql`
          UPDATE links l SET created_at = COALESCE(h.created_at, l.created_at), hits = GREATEST(l.hits, COALESCE(h.clicks, 0))
          FROM unnest(${history.map((h) => h.externalId)}::text[], ${history.map((h) => h.createdAt)}::bigint[], ${history.map((h) => h.clicks)}::bigint[])
            AS h(external_id, created_at, clicks)
          WHERE l.account_id = ${accountId} AND l.external_id = h.external_id
            AND (l.created_at <> COALESCE(h.created_at, l.created_at) OR l.hits < COALESCE(h.clicks, 0))`;
      });
    },
  };
}

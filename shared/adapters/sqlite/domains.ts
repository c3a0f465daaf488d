/** The custom-domains role of the SQLite store (migration 20), and its part of export and import. */
import type { Database } from "bun:sqlite";
import type { DomainRecord } from "../../domain.ts";
import type { ExportRecord } from "../../ports/admin.ts";
import type { DomainDeletion, DomainStore, LinkDisposal, ServedDomain } from "../../ports/domains.ts";
import { domainColumns, domainsDdl, insertValues, toDomainRecord, updatedValues } from "../domain-rows.ts";
import type { SqliteConnection } from "./connection.ts";

/** Migration 20. */
export const DOMAINS_SQLITE = domainsDdl({ text: "TEXT", bigint: "INTEGER", bool: "INTEGER" });

const SELECT = `SELECT ${domainColumns((n) => n)} FROM domains`;
type Row = DomainRecord & { checkOk: number | null };

export function sqliteDomains(c: SqliteConnection): DomainStore {
  const one = (row: Row | null) => (row ? toDomainRecord(row) : null);
  const linksOn = (hostname: string) => c.st<{ id: string; slug: string }>(`SELECT id, slug FROM links WHERE domain = ? ORDER BY id`).all(hostname);

  const remove = c.db.transaction((id: string, disposal: LinkDisposal): DomainDeletion => {
    const domain = c.st<{ hostname: string }>(`SELECT hostname FROM domains WHERE id = ?`).get(id);
    if (!domain) return { ok: true, links: [] };
    const links = linksOn(domain.hostname);
    if (links.length > 0 && disposal.kind === "refuse") return { ok: false, reason: "has_links", count: links.length };
    if (disposal.kind === "move") {
      const clash = c.st<{ n: number }>(
        `SELECT count(*) AS n FROM links a JOIN links b ON b.slug = a.slug AND b.domain = ? WHERE a.domain = ?`,
      ).get(disposal.toDomain, domain.hostname)!.n;
      if (clash > 0) return { ok: false, reason: "slug_conflict", count: clash };
      c.st(`UPDATE links SET domain = ? WHERE domain = ?`).run(disposal.toDomain, domain.hostname);
    } else {
      // Tags, raw clicks and rollups go with each link (ON DELETE CASCADE).
      c.st(`DELETE FROM links WHERE domain = ?`).run(domain.hostname);
    }
    c.st(`DELETE FROM domains WHERE id = ?`).run(id);
    return { ok: true, links };
  });

  return {
    async createDomain(d: DomainRecord): Promise<boolean> {
      const r = c.st(
        `INSERT INTO domains (id, account_id, hostname, method, token, state, checked_at, check_ok, check_result, verified_at,
           root_redirect, not_found_redirect, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (hostname) DO NOTHING`,
      ).run(...insertValues(d));
      return r.changes === 1;
    },

    async getDomain(id: string): Promise<DomainRecord | null> {
      return one(c.st<Row>(`${SELECT} WHERE id = ?`).get(id));
    },

    async getDomainByHostname(hostname: string): Promise<DomainRecord | null> {
      return one(c.st<Row>(`${SELECT} WHERE hostname = ?`).get(hostname));
    },

    async listDomains(accountId: string): Promise<DomainRecord[]> {
      return c.st<Row>(`${SELECT} WHERE account_id = ? ORDER BY created_at, id`).all(accountId).map(toDomainRecord);
    },

    async listVerifiedDomains(): Promise<ServedDomain[]> {
      return c.st<ServedDomain>(
        `SELECT hostname, root_redirect AS rootRedirect, not_found_redirect AS notFoundRedirect FROM domains WHERE state = 'verified' ORDER BY hostname`,
      ).all();
    },

    async updateDomain(d: DomainRecord, expectedUpdatedAt: number): Promise<boolean> {
      return c.st(
        `UPDATE domains SET method = ?, token = ?, state = ?, checked_at = ?, check_ok = ?, check_result = ?, verified_at = ?,
           root_redirect = ?, not_found_redirect = ?, updated_at = ? WHERE id = ? AND updated_at = ?`,
      ).run(...updatedValues(d), d.id, expectedUpdatedAt).changes === 1;
    },

    async countDomainLinks(hostname: string): Promise<number> {
      return c.st<{ n: number }>(`SELECT count(*) AS n FROM links WHERE domain = ?`).get(hostname)!.n;
    },

    async deleteDomain(id: string, disposal: LinkDisposal): Promise<DomainDeletion> {
      return remove.immediate(id, disposal);
    },
  };
}

/** Every domain as an export record (`npm run export`), read on `db` inside the export's snapshot. */
export function* domainExportRecords(db: Database): Iterable<ExportRecord> {
  for (const row of db.query<Row, []>(`${SELECT} ORDER BY created_at, id`).iterate()) yield { type: "domain", data: toDomainRecord(row) };
}

/** Writes imported domains in the caller's transaction; one whose hostname or id exists, or whose account is missing, is skipped. */
export function importDomainRecords(c: SqliteConnection, domains: readonly DomainRecord[]): number {
  const insert = c.st(
    `INSERT INTO domains (id, account_id, hostname, method, token, state, checked_at, check_ok, check_result, verified_at,
       root_redirect, not_found_redirect, created_at, updated_at)
     SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM workspaces WHERE id = ?) ON CONFLICT DO NOTHING`,
  );
  let n = 0;
  for (const d of domains) n += insert.run(...insertValues(d), d.accountId).changes;
  return n;
}

/** The custom-domains role of the Postgres store (migration 22), and its part of export and import. */
import type postgres from "postgres";
import type { DomainRecord } from "../../domain.ts";
import type { ExportRecord } from "../../ports/admin.ts";
import type { DomainDeletion, DomainStore, LinkDisposal, ServedDomain } from "../../ports/domains.ts";
import { domainColumns, domainsDdl, insertValues, toDomainRecord, updatedValues } from "../domain-rows.ts";
import type { PostgresConnection } from "./connection.ts";

/** Migration 22. */
export const DOMAINS_POSTGRES = domainsDdl({ text: "text", bigint: "bigint", bool: "boolean" });

const COLUMNS = domainColumns((n) => `"${n}"`);

export function postgresDomains(c: PostgresConnection): DomainStore {
  const { sql } = c;
  const cols = sql.unsafe(COLUMNS);
  return {
    createDomain(d: DomainRecord): Promise<boolean> {
      return c.run(async () => {
        const { count } = await sql`
          INSERT INTO domains (id, account_id, hostname, method, token, state, checked_at, check_ok, check_result, verified_at,
            root_redirect, not_found_redirect, created_at, updated_at)
          VALUES (${d.id}, ${d.accountId}, ${d.hostname}, ${d.method}, ${d.token}, ${d.state}, ${d.checkedAt}, ${d.checkOk},
            ${d.checkResult}, ${d.verifiedAt}, ${d.rootRedirect}, ${d.notFoundRedirect}, ${d.createdAt}, ${d.updatedAt})
          ON CONFLICT (hostname) DO NOTHING`;
        return count === 1;
      });
    },

    getDomain(id: string): Promise<DomainRecord | null> {
      return c.run(async () => {
        const [row] = await sql<DomainRecord[]>`SELECT ${cols} FROM domains WHERE id = ${id}`;
        return row ? toDomainRecord(row) : null;
      });
    },

    getDomainByHostname(hostname: string): Promise<DomainRecord | null> {
      return c.run(async () => {
        const [row] = await sql<DomainRecord[]>`SELECT ${cols} FROM domains WHERE hostname = ${hostname}`;
        return row ? toDomainRecord(row) : null;
      });
    },

    listDomains(accountId: string): Promise<DomainRecord[]> {
      return c.run(async () => {
        const rows = await sql<DomainRecord[]>`SELECT ${cols} FROM domains WHERE account_id = ${accountId} ORDER BY created_at, id`;
        return rows.map(toDomainRecord);
      });
    },

    listVerifiedDomains(): Promise<ServedDomain[]> {
      return c.run(async () => {
        const rows = await sql<ServedDomain[]>`
          SELECT hostname, root_redirect AS "rootRedirect", not_found_redirect AS "notFoundRedirect"
          FROM domains WHERE state = 'verified' ORDER BY hostname COLLATE "C"`;
        return [...rows];
      });
    },

    updateDomain(d: DomainRecord, expectedUpdatedAt: number): Promise<boolean> {
      return c.run(async () => {
        const [method, token, state, checkedAt, checkOk, checkResult, verifiedAt, rootRedirect, notFoundRedirect, updatedAt] = updatedValues(d);
        const { count } = await sql`
          UPDATE domains SET method = ${method}, token = ${token}, state = ${state}, checked_at = ${checkedAt}, check_ok = ${checkOk},
            check_result = ${checkResult}, verified_at = ${verifiedAt}, root_redirect = ${rootRedirect},
            not_found_redirect = ${notFoundRedirect}, updated_at = ${updatedAt}
          WHERE id = ${d.id} AND updated_at = ${expectedUpdatedAt}`;
        return count === 1;
      });
    },

    countDomainLinks(hostname: string): Promise<number> {
      return c.run(async () => {
        const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM links WHERE domain = ${hostname}`;
        return row.n;
      });
    },

    deleteDomain(id: string, disposal: LinkDisposal): Promise<DomainDeletion> {
      return c.run(() =>
        sql.begin(async (tx): Promise<DomainDeletion> => {
          // The row locked: a verify or change of this domain waits until the delete is decided.
          const [domain] = await tx<{ hostname: string }[]>`SELECT hostname FROM domains WHERE id = ${id} FOR UPDATE`;
          if (!domain) return { ok: true, links: [] };
          const links = [...(await tx<{ id: string; slug: string }[]>`SELECT id, slug FROM links WHERE domain = ${domain.hostname} ORDER BY id FOR UPDATE`)];
          if (links.length > 0 && disposal.kind === "refuse") return { ok: false, reason: "has_links", count: links.length };
          if (disposal.kind === "move") {
            const [{ n }] = await tx<{ n: number }[]>`
              SELECT count(*)::int AS n FROM links a JOIN links b ON b.slug = a.slug AND b.domain = ${disposal.toDomain}
              WHERE a.domain = ${domain.hostname}`;
            if (n > 0) return { ok: false, reason: "slug_conflict", count: n };
            await tx`UPDATE links SET domain = ${disposal.toDomain} WHERE domain = ${domain.hostname}`;
          } else {
            await tx`DELETE FROM links WHERE domain = ${domain.hostname}`;
          }
          await tx`DELETE FROM domains WHERE id = ${id}`;
          return { ok: true, links: links.map((l) => ({ id: l.id, slug: l.slug })) };
        }),
      );
    },
  };
}

/** Every domain as an export record (`npm run export`), read on `tx` (the export's snapshot). */
export async function* domainExportRecords(tx: postgres.ReservedSql): AsyncIterable<ExportRecord> {
  for (const row of await tx<DomainRecord[]>`SELECT ${tx.unsafe(COLUMNS)} FROM domains ORDER BY created_at, id`) yield { type: "domain", data: toDomainRecord(row) };
}

/** Writes imported domains on `tx` (the import's transaction); one whose hostname or id exists, or whose account is missing, is skipped. */
export async function importDomainRecords(tx: postgres.TransactionSql, domains: readonly DomainRecord[]): Promise<number> {
  let n = 0;
  for (const d of domains) {
    const [id, accountId, hostname, method, token, state, checkedAt, checkOk, checkResult, verifiedAt, rootRedirect, notFoundRedirect, createdAt, updatedAt] = insertValues(d);
    n += (await tx`
      INSERT INTO domains (id, account_id, hostname, method, token, state, checked_at, check_ok, check_result, verified_at,
        root_redirect, not_found_redirect, created_at, updated_at)
      SELECT ${id}, ${accountId}, ${hostname}, ${method}, ${token}, ${state}, ${checkedAt}, ${checkOk}, ${checkResult}, ${verifiedAt},
        ${rootRedirect}, ${notFoundRedirect}, ${createdAt}, ${updatedAt}
      WHERE EXISTS (SELECT 1 FROM workspaces WHERE id = ${accountId})
      ON CONFLICT DO NOTHING`).count;
  }
  return n;
}

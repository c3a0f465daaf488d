/** What both SQL stores share for custom domains (issue #24): the table, its columns, and a row as a DomainRecord. */
import type { DomainRecord } from "../domain.ts";

/** The table in each store's types: SQLite migration 20, Postgres migration 22. */
export function domainsDdl(t: { text: string; bigint: string; bool: string }): string {
  return `
CREATE TABLE domains (
  id                 ${t.text} PRIMARY KEY,
  account_id         ${t.text} NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  -- Normalised (lower case, punycode, no trailing dot): unique across every account, so nobody adds another's domain.
  hostname           ${t.text} NOT NULL UNIQUE,
  method             ${t.text} NOT NULL CHECK (method IN ('dns', 'http')),
  token              ${t.text} NOT NULL,
  state              ${t.text} NOT NULL CHECK (state IN ('pending', 'verified')),
  checked_at         ${t.bigint},
  check_ok           ${t.bool},
  check_result       ${t.text},
  verified_at        ${t.bigint},
  root_redirect      ${t.text},
  not_found_redirect ${t.text},
  created_at         ${t.bigint} NOT NULL,
  updated_at         ${t.bigint} NOT NULL
);
CREATE INDEX domains_account ON domains(account_id, created_at, id);
`;
}

/** Column list for SELECT, with the record's names (quoted for Postgres, whose unquoted names fold to lower case). */
export const domainColumns = (q: (name: string) => string) =>
  [
    ["id", "id"], ["account_id", "accountId"], ["hostname", "hostname"], ["method", "method"], ["token", "token"], ["state", "state"],
    ["checked_at", "checkedAt"], ["check_ok", "checkOk"], ["check_result", "checkResult"], ["verified_at", "verifiedAt"],
    ["root_redirect", "rootRedirect"], ["not_found_redirect", "notFoundRedirect"], ["created_at", "createdAt"], ["updated_at", "updatedAt"],
  ].map(([col, name]) => `${col} AS ${q(name)}`).join(", ");

/** A row read with domainColumns: booleans come back as 0/1 from SQLite. */
export function toDomainRecord(row: DomainRecord & { checkOk: boolean | number | null }): DomainRecord {
  return { ...row, checkOk: row.checkOk === null ? null : Boolean(row.checkOk) };
}

/** The values of an insert, in the order of the table's columns. */
export const insertValues = (d: DomainRecord) =>
  [d.id, d.accountId, d.hostname, d.method, d.token, d.state, d.checkedAt, d.checkOk, d.checkResult, d.verifiedAt, d.rootRedirect, d.notFoundRedirect, d.createdAt, d.updatedAt] as const;

/** The values of an update, in the order both stores' UPDATE statements list them. */
export const updatedValues = (d: DomainRecord) =>
  [d.method, d.token, d.state, d.checkedAt, d.checkOk, d.checkResult, d.verifiedAt, d.rootRedirect, d.notFoundRedirect, d.updatedAt] as const;

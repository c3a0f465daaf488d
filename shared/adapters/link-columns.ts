/**
 * The links table as both SQL stores see it, derived from the link's declaration (shared/link-fields.ts): one
 * column per field, named and encoded by it. Rows, INSERT and UPDATE of both adapters come from here, so a new
 * field needs only its declaration and a column in each store's migrations.
 */
import type { LinkState } from "../enums.ts";
import { columnOf, linkFieldEntries, type Codec, type LinkFieldName, type LinkRecord } from "../link-fields.ts";

export interface LinkColumn {
  field: LinkFieldName;
  name: string;
  codec: Codec;
}

export const LINK_COLUMNS: readonly LinkColumn[] = linkFieldEntries.map(([field, f]) => ({ field, name: columnOf(field), codec: f.codec }));

/** `id, account_id, …` in declaration order: the SELECT list and the INSERT column list. */
export const LINK_COLUMN_LIST = LINK_COLUMNS.map((c) => c.name).join(", ");

/** An update writes every column but the link's identity, owner, creation time and hit count. */
const NOT_UPDATED = new Set<LinkFieldName>(["id", "accountId", "createdAt", "hits"]);
export const UPDATED_COLUMNS = LINK_COLUMNS.filter((c) => !NOT_UPDATED.has(c.field));

// --- SQLite: JSON as text, booleans as 0/1 ------------------------------------------------------------------

export type SqliteValue = string | number | null;

function toSqlite(c: LinkColumn, v: unknown): SqliteValue {
  if (c.codec === "json") return JSON.stringify(v);
  if (c.codec === "bool") return v ? 1 : 0;
  return v as SqliteValue;
}

function fromSqlite(c: LinkColumn, v: unknown): unknown {
  if (c.codec === "json") return JSON.parse(v as string);
  if (c.codec === "bool") return v === 1;
  return v;
}

export function sqliteRowToLink(row: Record<string, unknown>): LinkRecord {
  const link: Record<string, unknown> = {};
  for (const c of LINK_COLUMNS) link[c.field] = fromSqlite(c, row[c.name]);
  return link as LinkRecord;
}

/** Values in LINK_COLUMNS order, for INSERT. */
export const sqliteInsertValues = (l: LinkRecord): SqliteValue[] => LINK_COLUMNS.map((c) => toSqlite(c, l[c.field]));

/** `domain = ?, slug = ?, …` for UPDATE; its values come from sqliteUpdateValues. */
export const SQLITE_UPDATE_SET = UPDATED_COLUMNS.map((c) => `${c.name} = ?`).join(", ");
export const sqliteUpdateValues = (l: LinkRecord): SqliteValue[] => UPDATED_COLUMNS.map((c) => toSqlite(c, l[c.field]));

// --- Postgres: jsonb and boolean columns; JSON goes in as text (postgres.js would encode a jsonb parameter twice) ---

const PG_PARAMETER_TYPE: Record<Codec, string> = { text: "text", int: "bigint", bool: "boolean", json: "text" };
/** In the arrays of a multi-row INSERT booleans travel as 0/1 (smallint[]), which postgres.js encodes plainly. */
const PG_ARRAY_TYPE: Record<Codec, string> = { ...PG_PARAMETER_TYPE, bool: "smallint" };

function toPostgres(c: LinkColumn, v: unknown): unknown {
  return c.codec === "json" ? JSON.stringify(v) : v;
}

function toPostgresArrayItem(c: LinkColumn, v: unknown): unknown {
  return c.codec === "bool" ? (v ? 1 : 0) : toPostgres(c, v);
}

export function postgresRowToLink(row: Record<string, unknown>): LinkRecord {
  const link: Record<string, unknown> = {};
  for (const c of LINK_COLUMNS) link[c.field] = row[c.name];
  return link as LinkRecord;
}

/** A parameter's SQL for a column: `$n` cast to what the column takes. */
const pgParameter = (c: LinkColumn, n: number) => `$${n}::${PG_PARAMETER_TYPE[c.codec]}${c.codec === "json" ? "::jsonb" : ""}`;

/**
 * The pieces of a multi-row INSERT: one array parameter per column (`unnest($1::text[], $2::bigint[], …)` gives
 * the rows), its column alias list and the SELECT list that turns the text of JSON columns into jsonb.
 * `first` is the number of the first parameter.
 */
export function postgresInsertArrays(links: LinkRecord[], first = 1) {
  const unnest = LINK_COLUMNS.map((c, i) => `$${first + i}::${PG_ARRAY_TYPE[c.codec]}[]`).join(", ");
  const select = LINK_COLUMNS.map((c) => (c.codec === "json" ? `${c.name}::jsonb` : c.codec === "bool" ? `${c.name} = 1` : c.name)).join(", ");
  const values = LINK_COLUMNS.map((c) => links.map((l) => toPostgresArrayItem(c, l[c.field])));
  return { unnest, select, values };
}

/** `domain = $1::text, …` for UPDATE, with its values; `first` is the number of the first parameter. */
export function postgresUpdateSet(l: LinkRecord, first = 1): { set: string; values: unknown[] } {
  return {
    set: UPDATED_COLUMNS.map((c, i) => `${c.name} = ${pgParameter(c, first + i)}`).join(", "),
    values: UPDATED_COLUMNS.map((c) => toPostgres(c, l[c.field])),
  };
}

// --- The live-state filter, the same SQL in both stores ----------------------------------------------------

/**
 * The WHERE condition for links in `state` at a moment, with one `?` per value in `args` (Postgres callers
 * number them). Mirrors linkState() in shared/link.ts; `limit_reached` reads the stored hit count, which the
 * click writer brings up to date within seconds.
 */
export function stateCondition(state: LinkState, now: number): { sql: string; args: number[] } {
  const expired = "(expires_at IS NOT NULL AND expires_at <= ?)";
  const notExpired = "(expires_at IS NULL OR expires_at > ?)";
  const scheduled = "(starts_at IS NOT NULL AND starts_at > ?)";
  const started = "(starts_at IS NULL OR starts_at <= ?)";
  const active = "status = 'active'";
  switch (state) {
    case "paused":
    case "archived":
      return { sql: `status = '${state}'`, args: [] };
    case "expired":
      return { sql: `${active} AND ${expired}`, args: [now] };
    case "scheduled":
      return { sql: `${active} AND ${notExpired} AND ${scheduled}`, args: [now, now] };
    case "limit_reached":
      return { sql: `${active} AND ${notExpired} AND ${started} AND max_hits IS NOT NULL AND hits >= max_hits`, args: [now, now] };
    case "live":
      return { sql: `${active} AND ${notExpired} AND ${started} AND (max_hits IS NULL OR hits < max_hits)`, args: [now, now] };
  }
}

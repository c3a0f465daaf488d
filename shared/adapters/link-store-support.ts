/**
 * Pieces both Store adapters (SQLite, Postgres) share so they behave identically where the ports are
 * silent: the list cursor format, LIKE escaping, hour buckets and the old rollups' sentinels (read by import).
 */
import { AppError } from "../errors.ts";
import type { TagsAndFolders } from "../ports.ts";

export const HOUR_MS = 3_600_000;

/** Start of the hour containing `ts` (epoch ms). */
export const hourStart = (ts: number): number => Math.floor(ts / HOUR_MS) * HOUR_MS;

/** The old rollups' (and old export files') key for "no country known" / "no A/B variant". */
export const NO_COUNTRY = "";
export const NO_VARIANT = -1;
/** How an unknown country is reported in `byCountry`. */
export const UNKNOWN_COUNTRY_KEY = "unknown";

/** Upper bound on a page, whatever the caller asks (the API allows 500). */
export const MAX_PAGE = 1000;

export function pageSize(limit: number): number {
  if (!Number.isFinite(limit)) return 50;
  return Math.min(MAX_PAGE, Math.max(1, Math.floor(limit)));
}

/** Keyset position: the (createdAt, id) of the last link on the previous page. */
export interface LinkCursor {
  createdAt: number;
  id: string;
}

export function encodeCursor(c: LinkCursor): string {
  return Buffer.from(JSON.stringify([c.createdAt, c.id])).toString("base64url");
}

const invalidCursor = () =>
  new AppError("invalid_input", "cursor is invalid", { errors: [{ path: "/cursor", message: "invalid cursor" }] });

/** Empty or absent means "first page"; anything that is not a cursor we made is invalid input, never a 500. */
export function decodeCursor(cursor: string | undefined): LinkCursor | null {
  if (cursor === undefined || cursor === "") return null;
  if (cursor.length > 512 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalidCursor();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalidCursor();
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    !Number.isSafeInteger(parsed[0]) ||
    typeof parsed[1] !== "string" ||
    parsed[1].length === 0
  ) {
    throw invalidCursor();
  }
  return { createdAt: parsed[0], id: parsed[1] };
}

/** `%q%` with LIKE wildcards in q taken literally (escape character: backslash). Lower-cased. */
export function likeContains(q: string): string {
  return `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The distinct link domains, sorted, as a loose index scan: each step asks the (domain, slug) index for the next
 * domain after the previous one, so the cost grows with the number of domains, not of links (a plain DISTINCT
 * reads every index entry). Custom domains (the domains table) are left out: their links are not keyed by BASE_URL's
 * host. The same SQL runs on SQLite and Postgres.
 */
export const LINK_DOMAINS_SQL = `
  WITH RECURSIVE d(domain) AS (
    SELECT min(domain) FROM links
    UNION ALL
    SELECT (SELECT min(l.domain) FROM links l WHERE l.domain > d.domain) FROM d WHERE d.domain IS NOT NULL
  )
  SELECT domain FROM d WHERE domain IS NOT NULL AND NOT EXISTS (SELECT 1 FROM domains WHERE hostname = d.domain)`;

/**
 * The distinct folders ('f') and tags ('t') of an account's newest links: $1 the account, $2 how many links.
 * The same SQL runs on SQLite and Postgres; rowsToTagsAndFolders sorts the rows the same way for both. CROSS JOIN
 * keeps SQLite reading link_tags by link (its primary key) for these links only, not the whole tag index.
 */
export const TAGS_AND_FOLDERS_SQL = `
  WITH recent AS (SELECT id, folder FROM links WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2)
  SELECT 'f' AS kind, folder AS value FROM recent WHERE folder IS NOT NULL
  UNION
  SELECT 't' AS kind, t.tag AS value FROM recent r CROSS JOIN link_tags t WHERE t.link_id = r.id`;

/** Case-insensitive order, ties by the exact text, so both adapters list the same values in the same order. */
const ignoringCase = (a: string, b: string) => {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0;
};

export function rowsToTagsAndFolders(rows: { kind: string; value: string }[]): TagsAndFolders {
  const of = (kind: string) => rows.filter((r) => r.kind === kind).map((r) => r.value).sort(ignoringCase);
  return { tags: of("t"), folders: of("f") };
}

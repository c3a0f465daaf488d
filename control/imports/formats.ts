/**
 * The sources an import reads, declared once: which column of each source's export holds which part of a link.
 * Headers are compared normalised (lower case, letters and digits only), so `Long URL`, `long_url` and `longUrl`
 * are one column. Every alias here comes from the source's own export or API (docs/imports.md names where).
 */
import { createHash } from "node:crypto";
import { AppError } from "../../shared/errors.ts";

/** What an import carries over from a row. `id` is the source's own id of the link (for the stable externalId). */
export const IMPORT_FIELDS = ["url", "slug", "title", "tags", "createdAt", "clicks", "id"] as const;
export type ImportField = (typeof IMPORT_FIELDS)[number];

export interface SourceFormat {
  label: string;
  /**
   * Accepted column names per field, normalised. A row's value is the first of these columns whose cell is not
   * empty (Bitly: the custom back-half when the link has one, else the bitlink).
   */
  columns: Partial<Record<ImportField, readonly string[]>>;
  /** Columns whose values, joined with "/", name the link when there is no `id` column (Shlink: domain + short code). */
  idFrom?: readonly string[];
  /** How the tags cell separates tags. */
  tagSeparator: RegExp;
  /** Prefix of the externalId (`bitly:…`): a re-import of the same source finds its links again. */
  prefix: string;
  /**
   * The source's API answers as JSON: the key holding the list of link objects (Kutt `data`, Bitly `links`); a file
   * may hold several answers (pages) one after another. The objects' keys are the columns.
   */
  jsonList?: string;
}

export const SOURCE_FORMATS = {
  // Bitly, two ways. The web app's export (Links, Export: a CSV by e-mail) has `Link` (the bitlink), `Custom Link`
  // (the custom back-half, when there is one) and `Destination URL`, with title, date and tags columns beside them.
  // The API's GET /v4/groups/{group_guid}/bitlinks answers `{"links":[...],"pagination":{...}}`, each link with id
  // (`bit.ly/abc`), link, custom_bitlinks (a list), long_url, title, created_at (`2020-10-26T17:20:40+0000`), tags.
  bitly: {
    label: "Bitly export (CSV, or the API's bitlinks JSON)",
    columns: {
      url: ["longurl", "destinationurl"],
      slug: ["customlink", "custombitlinks", "link", "bitlink", "shortlink", "shorturl"],
      title: ["title"],
      tags: ["tags"],
      createdAt: ["createdat", "created", "datecreated", "creationdate"],
      clicks: ["clicks", "totalclicks", "engagements", "totalengagements"],
      id: ["id", "bitlinkid"],
    },
    idFrom: ["link", "bitlink"],
    tagSeparator: /,/,
    prefix: "bitly",
    jsonList: "links",
  },
  // Shlink's web client export: createdAt, domain, shortCode, shortUrl, longUrl, title, tags (joined by |), visits.
  shlink: {
    label: "Shlink CSV export",
    columns: {
      url: ["longurl"],
      slug: ["shortcode", "shorturl"],
      title: ["title"],
      tags: ["tags"],
      createdAt: ["createdat", "datecreated"],
      clicks: ["visits", "visitscount", "visitstotal"],
    },
    idFrom: ["domain", "shortcode"],
    tagSeparator: /\|/,
    prefix: "shlink",
  },
  // Kutt has no export file: its API's GET /api/v2/links answers `{"limit","skip","total","data":[...]}`, 50 links at
  // most a page, each with id (a UUID), address (the slug), description, target, visit_count, created_at, domain,
  // link (server/utils/utils.js sanitize.link, server/queries/link.queries.js). Pages saved one after another, or a
  // CSV of the same fields, are read too.
  kutt: {
    label: "Kutt links (its API's JSON, or a CSV of the same fields)",
    columns: {
      url: ["target"],
      slug: ["address"],
      title: ["description", "title"],
      tags: ["tags"],
      createdAt: ["createdat"],
      clicks: ["visitcount", "visits"],
      id: ["id", "uuid"],
    },
    idFrom: ["address"],
    tagSeparator: /,/,
    prefix: "kutt",
    jsonList: "data",
  },
  // YOURLS's url table as its export plugins and a database dump give it: keyword, url, title, timestamp, ip, clicks.
  yourls: {
    label: "YOURLS export",
    columns: { url: ["url"], slug: ["keyword"], title: ["title"], tags: ["tags"], createdAt: ["timestamp"], clicks: ["clicks"] },
    idFrom: ["keyword"],
    tagSeparator: /,/,
    prefix: "yourls",
  },
  csv: { label: "Any CSV, with a column mapping", columns: {}, tagSeparator: /[,|]/, prefix: "csv" },
} satisfies Record<string, SourceFormat>;

export type FormatName = keyof typeof SOURCE_FORMATS;
export const FORMAT_NAMES = Object.keys(SOURCE_FORMATS) as FormatName[];
export const isFormatName = (v: unknown): v is FormatName => typeof v === "string" && Object.hasOwn(SOURCE_FORMATS, v);

/** A header as compared: lower case, letters and digits only. */
export const normaliseHeader = (h: string) => h.toLowerCase().replace(/[^a-z0-9]/g, "");

/**
 * The format a mapping makes: `{"url":"Long URL","slug":"Back-half"}` names, per field, the column that holds it.
 * Refuses unknown fields and a mapping without `url`.
 */
export function formatWithMapping(base: SourceFormat, mapping: Record<string, unknown>): SourceFormat {
  const columns: Partial<Record<ImportField, readonly string[]>> = { ...base.columns };
  for (const [field, column] of Object.entries(mapping)) {
    if (!(IMPORT_FIELDS as readonly string[]).includes(field) || typeof column !== "string" || !column.trim()) {
      throw new AppError("invalid_parameter", `mapping: "${field.slice(0, 40)}" must be one of ${IMPORT_FIELDS.join(", ")}, naming a column`);
    }
    columns[field as ImportField] = [normaliseHeader(column)];
  }
  if (!columns.url) throw new AppError("invalid_parameter", 'mapping must name the column holding "url"');
  return { ...base, columns, idFrom: columns.id ? undefined : columns.slug ?? columns.url };
}

/**
 * Where each field is in this header (its columns' indexes, in the order of the format's aliases), or
 * missing_header when no destination column is there.
 */
export function resolveColumns(format: SourceFormat, header: string[]): { at: Partial<Record<ImportField, number[]>>; idAt: number[] } {
  const names = header.map(normaliseHeader);
  const at: Partial<Record<ImportField, number[]>> = {};
  for (const f of IMPORT_FIELDS) {
    const found = (format.columns[f] ?? []).map((a) => names.indexOf(a)).filter((i) => i >= 0);
    if (found.length) at[f] = found;
  }
  if (at.url === undefined) {
    throw new AppError("missing_header", `The first row must be the export's header, with a destination column (${(format.columns.url ?? []).join(" or ")}); it has: ${header.slice(0, 20).join(", ").slice(0, 300)}`);
  }
  const idAt = (format.idFrom ?? []).map((c) => names.indexOf(c)).filter((i) => i >= 0);
  return { at, idAt };
}

/**
 * A slug from a cell that may hold the whole short address (`https://bit.ly/abc`, `bit.ly/abc`): its last segment.
 * Of a list (Bitly's custom_bitlinks, joined by commas), the first.
 */
export function slugFromCell(cell: string): string {
  const v = cell.split(",")[0]!.trim().replace(/[?#].*$/, "").replace(/\/+$/, "");
  return v.includes("/") ? v.slice(v.lastIndexOf("/") + 1) : v;
}

const EXTERNAL_ID_SAFE = /^[\x21-\x7e]{1,200}$/;

/**
 * The stable externalId of a source row: `prefix:` and the source's id, `/` read as `:` (a path can't carry it);
 * an id that is still no valid externalId (non-ASCII, too long) becomes a hash of itself.
 */
export function externalIdOf(prefix: string, sourceId: string): string {
  const readable = `${prefix}:${sourceId.trim().replace(/^https?:\/\//i, "").replace(/\//g, ":")}`;
  if (EXTERNAL_ID_SAFE.test(readable) && !/[?#%\\]/.test(readable)) return readable;
  return `${prefix}:h:${createHash("sha256").update(sourceId).digest("hex").slice(0, 40)}`;
}

/**
 * Link exports (issue #25): the caller's links, all or filtered as the list is, as CSV or JSON, streamed. The body
 * pulls one page of the list (listLinks, its filters, validation and cursor) at a time, so memory stays flat
 * however many links the account has. The columns are the API's link object, derived from the link declaration.
 */
import { AppError } from "../../shared/errors.ts";
import { LinkObject } from "../../shared/schemas.ts";
import type { Caller, Deps } from "../deps.ts";
import { csvLine } from "../stats/csv.ts";
import { listLinks, type ListQuery } from "./service.ts";

export const EXPORT_FORMATS = ["csv", "json"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
/** The list's filters an export takes (the list's own parameters, less its paging). */
export const EXPORT_FILTERS = ["q", "tag", "folder", "status", "state", "externalId", "domain"] as const;
export type ExportFilters = Partial<Record<(typeof EXPORT_FILTERS)[number], string>>;
const EXPORT_PARAMETERS: readonly string[] = ["format", ...EXPORT_FILTERS];
/** Links read per pull of the stream: the list's largest page. */
const PAGE = 500;

/** The columns: every property of the API's link object, in its order (so a new declared field is a new column). */
export const EXPORT_COLUMNS = Object.keys(LinkObject.properties) as (keyof LinkObject)[];

/** A link object's value as one CSV field: lists of words comma-joined, structured values as JSON, null empty. */
function cell(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v.join(",");
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

export const csvHeader = () => csvLine(EXPORT_COLUMNS);
export const csvRowOf = (l: LinkObject) => csvLine(EXPORT_COLUMNS.map((c) => cell(l[c])));

const badParameter = (name: string, message: string) =>
  new AppError("invalid_parameter", `${name}: ${message}`, { errors: [{ path: `/${name}`, message }] });

/** format (csv, the default, or json) and the list's filters, each at most once; nothing else. */
export function parseExportQuery(query: URLSearchParams): { format: ExportFormat; filters: ExportFilters } {
  for (const name of new Set(query.keys())) {
    if (!EXPORT_PARAMETERS.includes(name)) throw badParameter(name, `not a parameter of the export (${EXPORT_PARAMETERS.join(", ")})`);
    if (query.getAll(name).length > 1) throw badParameter(name, "must be given once");
  }
  const format = query.get("format") ?? "csv";
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) throw badParameter("format", `must be one of ${EXPORT_FORMATS.join(", ")}`);
  const filters: ExportFilters = {};
  for (const k of EXPORT_FILTERS) {
    const v = query.get(k);
    if (v !== null) filters[k] = v.trim();
  }
  return { format: format as ExportFormat, filters };
}

type Page = { links: LinkObject[]; nextCursor: string | null };

/** How each format frames its links: CSV a header and a line each; JSON one array, a link per line. */
const FRAMES: Record<ExportFormat, { start: string; row: (l: LinkObject, first: boolean) => string; end: string }> = {
  csv: { start: csvHeader(), row: csvRowOf, end: "" },
  json: { start: "[", row: (l, first) => `${first ? "" : ","}\n${JSON.stringify(l)}`, end: "\n]\n" },
};

/** The stream of one export, starting from an already read first page (so a bad filter fails before the 200). */
function exportStream(first: Page, next: (cursor: string) => Promise<Page>, format: ExportFormat): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const frame = FRAMES[format];
  let page: Page | null = first;
  let rows = 0;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(frame.start));
    },
    async pull(controller) {
      if (page === null) return;
      const text = page.links.map((l) => frame.row(l, rows++ === 0)).join("");
      const cursor = page.nextCursor;
      page = null;
      if (text) controller.enqueue(encoder.encode(text));
      if (cursor === null) {
        if (frame.end) controller.enqueue(encoder.encode(frame.end));
        controller.close();
        return;
      }
      page = await next(cursor);
    },
  });
}

const CONTENT_TYPE: Record<ExportFormat, string> = { csv: "text/csv; charset=utf-8", json: "application/json; charset=utf-8" };

/**
 * The caller's links matching the list's filters as a streamed download, newest first. One service function for
 * the REST API and the dashboard. Links created while it streams may or may not be in it; none appears twice.
 */
export async function exportLinks(deps: Deps, caller: Caller, query: URLSearchParams): Promise<Response> {
  const { format, filters } = parseExportQuery(query);
  const page = (cursor?: string) => listLinks(deps, caller, { ...filters, cursor, limit: PAGE } satisfies ListQuery);
  const first = await page();
  const day = new Date(deps.now()).toISOString().slice(0, 10);
  return new Response(exportStream(first, page, format), {
    headers: {
      "content-type": CONTENT_TYPE[format],
      "content-disposition": `attachment; filename="clink-links-${day}.${format}"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });
}

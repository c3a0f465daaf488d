/**
 * An uploaded export as rows of cells: text checked for its encoding first (UTF-8 only, said plainly when it is
 * not), then CSV through csv-parse's streaming parser (quotes, embedded line breaks and commas as RFC 4180 has
 * them, never evaluated), or a source API's JSON (Kutt, Bitly). Cells stay text: a cell starting with `=` is data,
 * never a formula.
 */
import { parse } from "csv-parse";
import { AppError } from "../../shared/errors.ts";
import type { SourceFormat } from "./formats.ts";

/** The largest file an import takes (issue #25). */
export const IMPORT_MAX_BYTES = 50 * 1024 * 1024;

/** A link row of the file: its cells and its number as a spreadsheet shows it (the header is row 1). */
export interface FileRow {
  row: number;
  cells: string[];
}

/** The file's text; invalid_encoding for UTF-16 (with its BOM) and bytes that are not UTF-8, naming the line. */
export function decodeText(bytes: Uint8Array): string {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    throw new AppError("invalid_encoding", "The file is UTF-16 (it starts with a UTF-16 byte order mark); export or save it as UTF-8 CSV");
  }
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    const loose = new TextDecoder("utf-8").decode(bytes);
    const line = loose.slice(0, loose.indexOf("\uFFFD")).split("\n").length;
    throw new AppError("invalid_encoding", `The file is not UTF-8 (line ${line} has bytes that are not; Windows-1252 or Latin-1?); save it as UTF-8 CSV`);
  }
}

/** Comma, unless the header line has none and semicolons or tabs instead (spreadsheets in some locales). */
function delimiterOf(text: string): string {
  const first = text.slice(0, Math.max(0, text.indexOf("\n")) || text.length);
  if (first.includes(",")) return ",";
  if (first.includes(";")) return ";";
  return first.includes("\t") ? "\t" : ",";
}

/** How much text is handed to the parser at a time: the event loop gets a turn between pieces. */
const PIECE = 256 * 1024;

/** The header and every non-empty row of a CSV text; missing_header for an empty file, malformed_file for broken CSV. */
export async function readCsv(text: string): Promise<{ header: string[]; rows: FileRow[] }> {
  const parser = parse({ delimiter: delimiterOf(text), bom: true, relax_column_count: true, skip_empty_lines: true, info: true });
  const feeding = (async () => {
    for (let at = 0; at < text.length; at += PIECE) {
      if (!parser.write(text.slice(at, at + PIECE))) await new Promise((r) => parser.once("drain", r));
    }
    parser.end();
  })();
  let header: string[] | null = null;
  const rows: FileRow[] = [];
  try {
    for await (const { record } of parser as AsyncIterable<{ record: string[] }>) {
      if (header === null) header = record;
      else rows.push({ row: rows.length + 2, cells: record });
    }
    await feeding;
  } catch (e) {
    parser.destroy();
    const message = e instanceof Error ? e.message.replace(/^Invalid [^:]*: /, "") : "unreadable CSV";
    throw new AppError("malformed_file", `The file is not valid CSV: ${message.slice(0, 300)}`);
  }
  if (header === null || header.every((h) => h.trim() === "")) throw new AppError("missing_header", "The file is empty: it has no header row");
  return { header, rows };
}

/**
 * The JSON documents of a text holding one or several one after another (API pages saved by a loop of requests, with
 * or without white space between): the top-level values, found by their brackets outside strings.
 */
function jsonDocuments(text: string): string[] {
  const docs: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") {
      if (depth++ === 0) start = i;
    } else if ((c === "}" || c === "]") && --depth === 0) docs.push(text.slice(start, i + 1));
    else if (depth === 0 && !/\s/.test(c!)) throw new AppError("malformed_file", "The file starts like JSON but is not valid JSON");
  }
  if (depth !== 0 || docs.length === 0) throw new AppError("malformed_file", "The file starts like JSON but is not valid JSON");
  return docs;
}

/** Whether the file is the source's API JSON rather than CSV. */
export const isJsonFile = (format: SourceFormat, text: string) => format.jsonList !== undefined && /^\uFEFF?\s*[[{]/.test(text);

/**
 * A source's API JSON as a header and rows: each document a bare array of link objects or an answer holding them
 * under `listKey` (Kutt `{"data":[...]}`, Bitly `{"links":[...]}`); the header is every key any object has.
 */
export function readJsonLinks(text: string, listKey: string): { header: string[]; rows: FileRow[] } {
  const list = jsonDocuments(text.replace(/^\uFEFF/, "")).flatMap((raw) => {
    let doc: unknown;
    try {
      doc = JSON.parse(raw);
    } catch {
      throw new AppError("malformed_file", "The file starts like JSON but is not valid JSON");
    }
    const links = Array.isArray(doc) ? doc : (doc as Record<string, unknown> | null)?.[listKey];
    if (!Array.isArray(links)) throw new AppError("missing_header", `The JSON must be an array of links or { "${listKey}": [links] }, as the source's API answers`);
    return links as unknown[];
  });
  const header = [...new Set(list.flatMap((o) => (o && typeof o === "object" ? Object.keys(o) : [])))];
  const cell = (v: unknown) => (v === null || v === undefined ? "" : Array.isArray(v) ? v.join(",") : typeof v === "object" ? JSON.stringify(v) : String(v));
  const rows = list.map((o, i) => ({ row: i + 2, cells: header.map((h) => cell((o as Record<string, unknown>)?.[h])) }));
  return { header, rows };
}

/** The file as a header and rows, whatever its kind. */
export async function readImportFile(bytes: Uint8Array, format: SourceFormat): Promise<{ header: string[]; rows: FileRow[] }> {
  const text = decodeText(bytes);
  return isJsonFile(format, text) ? readJsonLinks(text, format.jsonList!) : readCsv(text);
}

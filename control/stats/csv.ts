/**
 * Click exports as CSV (RFC 4180), streamed: the body pulls from the store's click log a batch at a time, so
 * memory stays flat however many clicks the range holds.
 */
import { DIMENSION_NAMES, DIMENSIONS } from "../../shared/clicks/dimensions.ts";
import { AppError } from "../../shared/errors.ts";
import type { ClickScope, StoredClick } from "../../shared/ports/clicks.ts";
import type { Caller, Deps } from "../deps.ts";
import { findOwnLink } from "../links/service.ts";
import { parseRange, parseTimeZone, type RawQuery } from "./query.ts";
import { accountLinks } from "./service.ts";

export const CSV_HEADER = ["Time (UTC)", "Slug", ...DIMENSION_NAMES.map((d) => DIMENSIONS[d].label), "Bot", "Referrer URL"];
/** Clicks turned into text per pull of the stream. */
const ROWS_PER_CHUNK = 500;
const CSV_PARAMETERS = ["from", "to", "tz"];

/**
 * One field, RFC 4180: quoted when it holds a comma, quote, CR or LF, quotes doubled. A field a spreadsheet would
 * run as a formula (starting with = + - @, or a tab or CR that some strip first) gets a leading apostrophe.
 */
export function csvField(v: string | null): string {
  if (v === null) return "";
  const s = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const csvLine = (fields: (string | null)[]) => `${fields.map(csvField).join(",")}\r\n`;

export function csvRow(c: StoredClick, slug: string): string {
  return csvLine([new Date(c.ts).toISOString(), slug, ...DIMENSION_NAMES.map((d) => c.dims[d]), String(c.bot), c.referrerUrl]);
}

/** A stream of the header and one line per click; clicks of links `slugOf` does not know are left out. */
export function clicksCsvStream(clicks: AsyncIterable<StoredClick>, slugOf: (linkId: string) => string | undefined): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let iterator: AsyncIterator<StoredClick> | undefined;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!iterator) {
        iterator = clicks[Symbol.asyncIterator]();
        controller.enqueue(encoder.encode(csvLine(CSV_HEADER)));
        return;
      }
      let text = "";
      for (let n = 0; n < ROWS_PER_CHUNK; n++) {
        const next = await iterator.next();
        if (next.done) {
          if (text) controller.enqueue(encoder.encode(text));
          controller.close();
          return;
        }
        const slug = slugOf(next.value.linkId);
        if (slug !== undefined) text += csvRow(next.value, slug);
      }
      controller.enqueue(encoder.encode(text));
    },
    async cancel() {
      await iterator?.return?.();
    },
  });
}

/** from, to (default: everything kept, up to now) and tz; any other parameter is invalid_parameter. */
function parseCsvRange(raw: RawQuery, now: number): { from: number; to: number } {
  for (const name of Object.keys(raw)) {
    if (!CSV_PARAMETERS.includes(name)) {
      throw new AppError("invalid_parameter", `${name}: not a parameter of the export (${CSV_PARAMETERS.join(", ")})`, { errors: [{ path: `/${name}`, message: "unknown parameter" }] });
    }
  }
  const range = parseRange(raw, parseTimeZone(raw));
  const to = range.to ?? now;
  const from = range.from ?? 0;
  if (from >= to) throw new AppError("invalid_range", "from: must be before to", { errors: [{ path: "/from", message: "must be before to" }] });
  return { from, to };
}

const day = (t: number) => new Date(t).toISOString().slice(0, 10);

function csvResponse(body: ReadableStream<Uint8Array>, name: string): Response {
  return new Response(body, {
    headers: {
      "content-type": "text/csv; charset=utf-8",
      "content-disposition": `attachment; filename="${name}"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });
}

function exportOf(deps: Deps, scope: ClickScope, range: { from: number; to: number }, slugOf: (id: string) => string | undefined, name: string) {
  const clicks = deps.store.readClickLog(scope, range.from, range.to);
  return csvResponse(clicksCsvStream(clicks, slugOf), `${name}-${range.from === 0 ? "all" : day(range.from)}-to-${day(range.to)}.csv`);
}

/** The link's clicks in the range as a streamed CSV download. */
export async function exportLinkClicks(deps: Deps, caller: Caller, slug: string, raw: RawQuery): Promise<Response> {
  const { domain, ...query } = raw; // the link's domain (findOwnLink), when its slug is on several
  const link = await findOwnLink(deps, caller, slug, domain);
  const range = parseCsvRange(query, deps.now());
  return exportOf(deps, { linkId: link.id }, range, (id) => (id === link.id ? link.slug : undefined), `clink-${link.slug}-clicks`);
}

/** Every click of the account's links in the range as a streamed CSV download. */
export async function exportAccountClicks(deps: Deps, caller: Caller, raw: RawQuery): Promise<Response> {
  const range = parseCsvRange(raw, deps.now());
  const links = await accountLinks(deps, caller.workspaceId);
  return exportOf(deps, { accountId: caller.workspaceId }, range, (id) => links.get(id)?.slug, "clink-clicks");
}

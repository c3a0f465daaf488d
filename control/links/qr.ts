/**
 * QR codes for short addresses, rendered on the server by `qrcode` as SVG or PNG (no script, no image service),
 * for the REST API (`GET /api/v1/links/{slug}/qr`) and the dashboard alike.
 * A code encodes the short address with the QR marker (`?qr=1`), so its clicks are recorded as via=qr; the
 * redirector never passes the marker on to the destination.
 */
import QRCode from "qrcode";
import { QR_MARKER } from "../../shared/clicks/dimensions.ts";
import { AppError } from "../../shared/errors.ts";
import type { Caller, Deps } from "../deps.ts";
import { getLink } from "./service.ts";

export const QR_FORMATS = ["svg", "png"] as const;
export type QrFormat = (typeof QR_FORMATS)[number];
/** A PNG's width and height in pixels; an SVG scales, and takes `size` only as its width and height attributes. */
export const QR_SIZE = { min: 64, max: 2048, png: 512 } as const;
/** The quiet zone around the code, in modules (the QR specification asks for 4; 2 is the default here, as before). */
export const QR_MARGIN = { min: 0, max: 16, default: 2 } as const;
/** Error correction: L recovers about 7% of the code, M 15%, Q 25%, H 30% (room for a logo over the middle). */
export const QR_LEVELS = ["L", "M", "Q", "H"] as const;
export type QrLevel = (typeof QR_LEVELS)[number];
export const QR_PARAMETERS = ["format", "size", "margin", "color", "background", "level"] as const;
/** #rgb or #rrggbb; given in the query as %23rrggbb, or without the # (a bare # would start the fragment). */
const HEX_COLOUR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

/** How a code is drawn: quiet zone, module and background colours (#rrggbb) and error-correction level. */
export interface QrStyle {
  margin: number;
  color: string;
  background: string;
  level: QrLevel;
}

export const DEFAULT_QR_STYLE: QrStyle = { margin: QR_MARGIN.default, color: "#000000", background: "#ffffff", level: "M" };

/** What a QR file is: its format and, for a PNG always, for an SVG only when asked, its size in pixels; and its style. */
export interface QrOptions {
  format: QrFormat;
  size?: number;
  style?: QrStyle;
}

const render = (s: QrStyle) => ({ margin: s.margin, errorCorrectionLevel: s.level, color: { dark: s.color, light: s.background } });
const CONTENT_TYPE: Record<QrFormat, string> = { svg: "image/svg+xml; charset=utf-8", png: "image/png" };

/** The address a QR code for `shortUrl` encodes: the short address with the QR marker. */
export function qrAddress(shortUrl: string): string {
  return `${shortUrl}${shortUrl.includes("?") ? "&" : "?"}${QR_MARKER}=1`;
}

/** The raw SVG document for `text` (only paths computed from it: the text never appears as markup). */
export function qrSvg(text: string, size?: number, style: QrStyle = DEFAULT_QR_STYLE): Promise<string> {
  return QRCode.toString(text, { type: "svg", ...render(style), ...(size ? { width: size } : {}) });
}

/** A `size` × `size` PNG of `text`. */
export function qrPng(text: string, size: number, style: QrStyle = DEFAULT_QR_STYLE): Promise<Buffer> {
  return QRCode.toBuffer(text, { type: "png", ...render(style), width: size });
}

const badParameter = (name: string, message: string) =>
  new AppError("invalid_parameter", `${name}: ${message}`, { errors: [{ path: `/${name}`, message }] });

/** An integer parameter in [min, max] (digits only: "1e3", "0x10", " 7" and "" are refused), or undefined when absent. */
function intParameter(query: URLSearchParams, name: string, min: number, max: number, unit: string): number | undefined {
  const text = query.get(name);
  if (text === null) return undefined;
  const n = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(n >= min && n <= max)) throw badParameter(name, `must be an integer from ${min} to ${max}${unit}`);
  return n;
}

/** A colour parameter as #rrggbb (#rgb expanded), or `fallback` when absent. */
function colourParameter(query: URLSearchParams, name: string, fallback: string): string {
  const text = query.get(name);
  if (text === null) return fallback;
  const hex = HEX_COLOUR.exec(text)?.[1];
  if (hex === undefined) throw badParameter(name, "must be a hex colour, #rgb or #rrggbb (%23 in a URL, or without the #)");
  return `#${(hex.length === 3 ? [...hex].map((c) => c + c).join("") : hex).toLowerCase()}`;
}

/** margin, color, background and level; the defaults for those absent. */
function parseQrStyle(query: URLSearchParams): QrStyle {
  const level = query.get("level") ?? DEFAULT_QR_STYLE.level;
  if (!(QR_LEVELS as readonly string[]).includes(level)) throw badParameter("level", `must be one of ${QR_LEVELS.join(", ")}`);
  const style: QrStyle = {
    margin: intParameter(query, "margin", QR_MARGIN.min, QR_MARGIN.max, " (modules)") ?? DEFAULT_QR_STYLE.margin,
    color: colourParameter(query, "color", DEFAULT_QR_STYLE.color),
    background: colourParameter(query, "background", DEFAULT_QR_STYLE.background),
    level: level as QrLevel,
  };
  if (style.color === style.background) throw badParameter("color", "must differ from background (the code would not scan)");
  return style;
}

/**
 * `format` (svg, the default, or png), `size` (pixels, 64-2048; a PNG's default 512) and the style (margin 0-16,
 * color and background, level L/M/Q/H), each at most once; nothing else. A size out of range is refused before
 * anything is drawn.
 */
export function parseQrQuery(query: URLSearchParams): QrOptions {
  for (const name of new Set(query.keys())) {
    if (!(QR_PARAMETERS as readonly string[]).includes(name)) throw badParameter(name, `not a parameter of the QR code (${QR_PARAMETERS.join(", ")})`);
    if (query.getAll(name).length > 1) throw badParameter(name, "must be given once");
  }
  const format = query.get("format") ?? "svg";
  if (!(QR_FORMATS as readonly string[]).includes(format)) throw badParameter("format", `must be one of ${QR_FORMATS.join(", ")}`);
  const size = intParameter(query, "size", QR_SIZE.min, QR_SIZE.max, " (pixels)");
  return { format: format as QrFormat, size: size ?? (format === "png" ? QR_SIZE.png : undefined), style: parseQrStyle(query) };
}

/** The QR code of a short address (with the QR marker) as a file, only ever served to the link's owner. */
export async function qrFile(shortUrl: string, slug: string, o: QrOptions = { format: "svg" }): Promise<Response> {
  const text = qrAddress(shortUrl);
  const style = o.style ?? DEFAULT_QR_STYLE;
  const body = o.format === "png" ? new Uint8Array(await qrPng(text, o.size ?? QR_SIZE.png, style)) : await qrSvg(text, o.size, style);
  return new Response(body, {
    headers: {
      "content-type": CONTENT_TYPE[o.format],
      "content-disposition": `inline; filename="${slug.replace(/[^A-Za-z0-9_-]/g, "")}-qr.${o.format}"`,
      "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      "x-content-type-options": "nosniff",
      "cache-control": "private, no-store",
    },
  });
}

/** The QR code of one of the caller's links (not_found for another account's or an unknown slug). */
export async function getLinkQr(deps: Deps, caller: Caller, slug: string, query: URLSearchParams): Promise<Response> {
  // `domain` names the link's domain (findOwnLink), when its slug is on several; the rest draw the code.
  const domain = query.getAll("domain");
  const drawing = new URLSearchParams(query);
  drawing.delete("domain");
  const options = parseQrQuery(drawing);
  const link = await getLink(deps, caller, slug, domain.length > 1 ? domain : domain[0]);
  return qrFile(link.shortUrl, link.slug, options);
}

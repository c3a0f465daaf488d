/**
 * QR codes for short addresses, rendered on the server as SVG by `qrcode` (no script, no image service).
 * The SVG holds only paths computed from the address; the address itself never appears in it as markup.
 */
import QRCode from "qrcode";
import { esc } from "./layout.ts";

/** The raw SVG document for `text`. */
export function qrSvg(text: string): Promise<string> {
  return QRCode.toString(text, { type: "svg", margin: 2, errorCorrectionLevel: "M" });
}

/** The same SVG, labelled for assistive technology, ready to place inline in a page. */
export async function inlineQr(text: string): Promise<string> {
  const svg = await qrSvg(text);
  return svg.trim().replace(/^<svg /, `<svg role="img" aria-label="${esc(`QR code for ${text}`)}" `);
}

/** A downloadable SVG file (served from the dashboard, so only to the link's owner). */
export async function qrDownload(text: string, slug: string): Promise<Response> {
  return new Response(await qrSvg(text), {
    headers: {
      "content-type": "image/svg+xml; charset=utf-8",
      "content-disposition": `inline; filename="${slug.replace(/[^A-Za-z0-9_-]/g, "")}-qr.svg"`,
      "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      "x-content-type-options": "nosniff",
      "cache-control": "private, no-store",
    },
  });
}

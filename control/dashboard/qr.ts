/**
 * The dashboard's QR codes: the link page's inline SVG and its download. Rendering, the QR marker and the file's
 * headers live in links/qr.ts, shared with the REST API.
 */
import { qrAddress, qrFile, qrSvg } from "../links/qr.ts";
import { esc } from "./layout.ts";

export { qrAddress, qrSvg };

/** The QR code of a short address (with the QR marker), labelled for assistive technology, to place inline in a page. */
export async function inlineQr(shortUrl: string): Promise<string> {
  const svg = await qrSvg(qrAddress(shortUrl));
  return svg.trim().replace(/^<svg /, `<svg role="img" aria-label="${esc(`QR code for ${shortUrl}`)}" `);
}

/** The QR code of a short address (with the QR marker) as a downloadable SVG file (served from the dashboard, so only to the link's owner). */
export const qrDownload = (shortUrl: string, slug: string): Promise<Response> => qrFile(shortUrl, slug);

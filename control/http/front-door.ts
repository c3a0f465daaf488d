/**
 * The embedded process's front door: whether a request is for the control plane (by its first path segment) or is a
 * short address for the redirector. It runs before every redirect, so it reads the URL in place: the segment is
 * compared where it stands with the few control segments of its length, with no slice of it made per request. (The
 * Set lookup of a slice it replaces was not measurably dearer: alternated request by request with it in one process,
 * both orders, the handlers' medians differed by under 0.1 µs.)
 */

/** First path segments the control plane answers ("" is the root: the dashboard). Slugs cannot take them (RESERVED_SLUGS). */
export const CONTROL_SEGMENTS = ["", "api", "mcp", "dashboard", "healthz", "readyz", "metrics", "static", "favicon.ico", "robots.txt", ".well-known", "oauth"] as const;

/** The segments by length: a short address is compared only with the few of its own length. */
const SEGMENTS_BY_LENGTH: readonly (readonly string[])[] = (() => {
  const table: string[][] = [];
  for (const s of CONTROL_SEGMENTS) (table[s.length] ??= []).push(s);
  return Array.from({ length: table.length }, (_, i) => table[i] ?? []);
})();

/** Paths the control plane answers (by first path segment); everything else is a short address. */
export function isControlPath(url: string): boolean {
  const p = url.indexOf("/", url.indexOf("//") + 2);
  if (p < 0) return true;
  let end = p + 1;
  while (end < url.length) {
    const c = url.charCodeAt(end);
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */) break;
    end++;
  }
  const candidates = SEGMENTS_BY_LENGTH[end - p - 1];
  if (candidates === undefined) return false;
  for (const s of candidates) if (url.startsWith(s, p + 1)) return true;
  return false;
}

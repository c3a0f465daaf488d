/** The slug of a short address, read straight from the request URL (no URL object, no regular expression). */

/** Slug characters (A-Z a-z 0-9 _ -), as a table: a loop over it is cheaper than a regular expression here. */
const SLUG_CHAR = (() => {
  const t = new Uint8Array(128);
  for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") t[c.charCodeAt(0)] = 1;
  return t;
})();
const SLUG_MAX = 40;

/**
 * Extracts the slug from a request URL without building a URL object; null unless it is 1-40 slug characters.
 * One trailing slash is allowed (`/spring/` is `/spring`): mail clients and people add one, and Bitly and Shlink
 * accept it too.
 */
export function slugOf(url: string): string | null {
  const pathStart = url.indexOf("/", url.indexOf("//") + 2);
  if (pathStart < 0) return null;
  const end = slugEnd(url, pathStart);
  return end < 0 ? null : url.slice(pathStart + 1, end);
}

/**
 * Where the slug that follows the `/` at `pathStart` ends (its last character's index + 1), or -1 unless it is 1-40
 * slug characters (then a trailing slash, a query or a fragment may follow).
 */
export function slugEnd(url: string, pathStart: number): number {
  let end = pathStart + 1;
  while (end < url.length) {
    const c = url.charCodeAt(end);
    if (c === 63 /* ? */ || c === 35 /* # */) break;
    if (c === 47 /* / */ && isPathEnd(url, end + 1)) break;
    if (c >= 128 || SLUG_CHAR[c] === 0 || end - pathStart > SLUG_MAX) return -1;
    end++;
  }
  return end === pathStart + 1 ? -1 : end;
}

/**
 * Where the authority of an absolute request URL starts, or -1 when the URL is not absolute: Bun's req.url is the
 * bare request target when the Host header is empty or not a host, and a target such as `//go.example.com/spring`
 * must not name a host (see hostOf, which this and authorityEnd read as the redirector needs it).
 */
export function authorityStart(url: string): number {
  return url.startsWith("http") ? url.indexOf("//") + 2 : -1;
}

/** Where the authority starting at `from` ends: at the path, query or fragment, or the URL's end. */
export function authorityEnd(url: string, from: number): number {
  let end = from;
  while (end < url.length) {
    const c = url.charCodeAt(end);
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */) break;
    end++;
  }
  return end;
}

function isPathEnd(url: string, at: number): boolean {
  if (at === url.length) return true;
  const c = url.charCodeAt(at);
  return c === 63 /* ? */ || c === 35 /* # */;
}

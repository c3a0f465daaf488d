/** The slug of a short address, read straight from the request URL (no URL object, no regular expression). */
import { authorityEnd, authorityStart } from "../shared/webhooks/sender.ts";

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
  // The steps serve() takes, which it runs inline to keep the indexes (the cache key is a slice of the URL).
  const from = authorityStart(url);
  const pathStart = from < 0 ? -1 : authorityEnd(url, from);
  const end = pathStart >= 0 && url.charCodeAt(pathStart) === 47 /* / */ ? slugEnd(url, pathStart) : -1;
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

function isPathEnd(url: string, at: number): boolean {
  if (at === url.length) return true;
  const c = url.charCodeAt(at);
  return c === 63 /* ? */ || c === 35 /* # */;
}

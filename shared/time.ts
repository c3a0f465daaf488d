/** What withTimeout rejects with when the time is up. */
export class TimeoutError extends Error {}

/** `p`'s outcome, or a TimeoutError after `ms`; the timer is cleared either way. */
export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new TimeoutError(`no answer within ${ms} ms`)), ms);
    p.then((v) => (clearTimeout(t), resolve(v)), (e) => (clearTimeout(t), reject(e)));
  });
}

/** ISO 8601 UTC for an epoch-ms time, null kept as null: how the API shows every date. */
export const isoOrNull = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** Date, optional time (T or space), optional fraction, optional zone (Z or ±hh[:]mm). */
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|([+-])(\d{2}):?(\d{2}))?)?$/i;

/**
 * Epoch ms of an ISO 8601 date or date-time, or null when it is not one or names a moment that does not exist
 * (February 30, 24:00, minute 60, an offset beyond ±14:00). A date-time without a zone, and a bare date, are UTC:
 * the server's own time zone must not change what a link's dates mean.
 */
export function parseIsoDateTime(value: string): number | null {
  const m = ISO_DATE_TIME.exec(value.trim());
  if (!m) return null;
  const [, y, mo, d, h = "0", mi = "0", s = "0", frac = "", zone, sign, oh = "0", om = "0"] = m;
  const year = Number(y), month = Number(mo), day = Number(d), hour = Number(h), minute = Number(mi), second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const offset = zone && sign ? (sign === "-" ? -1 : 1) * (Number(oh) * 60 + Number(om)) : 0;
  if (Math.abs(offset) > 14 * 60 || Number(om) > 59) return null;
  const ms = frac ? Math.floor(Number(`0${frac}`) * 1000) : 0;
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day); // Date.UTC would map years 0-99 to 1900-1999
  utc.setUTCHours(hour, minute, second, ms);
  return utc.getTime() - offset * 60_000;
}

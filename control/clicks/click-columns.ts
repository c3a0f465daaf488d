/**
 * A click batch as columns, for the hop from the server thread to the embedded writer thread. Posting an
 * array of objects makes the structured clone copy every field of every click; here the repeated strings
 * (link ids, User-Agents, referrers, addresses) are sent once per batch and the rest travels as typed
 * arrays, whose buffers are transferred rather than copied.
 */
import { classifyUserAgent, type DeviceInfo } from "../../shared/facts/device.ts";
import { countryFromHeader, type CountryLookup } from "../../shared/facts/geo.ts";
import type { ClickEvent, StoredClick } from "../../shared/ports.ts";

/** Per click, STRIDE int32 slots: indexes into `strings` (-1: null) and the A/B variant (-1: none). */
const LINK = 0, UA = 1, IP = 2, COUNTRY = 3, REFERRER = 4, VARIANT = 5, STRIDE = 6;

export interface ClickColumns {
  ids: string[];
  ts: Float64Array;
  fields: Int32Array;
  strings: string[];
}

export function encodeClicks(events: ClickEvent[]): { columns: ClickColumns; transfer: ArrayBuffer[] } {
  const n = events.length;
  const ids = new Array<string>(n);
  const ts = new Float64Array(n);
  const fields = new Int32Array(n * STRIDE);
  const strings: string[] = [];
  const index = new Map<string, number>();
  const intern = (s: string | null): number => {
    if (s === null) return -1;
    let i = index.get(s);
    if (i === undefined) {
      i = strings.push(s) - 1;
      index.set(s, i);
    }
    return i;
  };
  for (let i = 0; i < n; i++) {
    const e = events[i]!;
    const o = i * STRIDE;
    ids[i] = e.id;
    ts[i] = e.ts;
    fields[o + LINK] = intern(e.linkId);
    fields[o + UA] = intern(e.ua);
    fields[o + IP] = intern(e.ip);
    fields[o + COUNTRY] = intern(e.country);
    fields[o + REFERRER] = intern(e.referrer);
    fields[o + VARIANT] = e.variant ?? -1;
  }
  return { columns: { ids, ts, fields, strings }, transfer: [ts.buffer, fields.buffer] };
}

export function decodeClicks(c: ClickColumns): ClickEvent[] {
  const str = (i: number) => (i < 0 ? null : c.strings[i]!);
  const out = new Array<ClickEvent>(c.ids.length);
  for (let i = 0; i < c.ids.length; i++) {
    const o = i * STRIDE;
    const variant = c.fields[o + VARIANT]!;
    out[i] = {
      id: c.ids[i]!,
      linkId: str(c.fields[o + LINK]!)!,
      ts: c.ts[i]!,
      ua: str(c.fields[o + UA]!) ?? "",
      ip: str(c.fields[o + IP]!),
      country: str(c.fields[o + COUNTRY]!),
      referrer: str(c.fields[o + REFERRER]!),
      variant: variant < 0 ? null : variant,
    };
  }
  return out;
}

/**
 * The rows the store keeps, straight from the columns: what toStoredClick does per click, done once per
 * distinct User-Agent and address of the batch (most traffic repeats a few of them).
 */
export function decodeStoredClicks(c: ClickColumns, countryLookup: CountryLookup | null): StoredClick[] {
  const devices: (DeviceInfo | undefined)[] = [];
  const countries: (string | null | undefined)[] = [];
  const out = new Array<StoredClick>(c.ids.length);
  for (let i = 0; i < c.ids.length; i++) {
    const o = i * STRIDE;
    const ua = c.fields[o + UA]!;
    const device = ua < 0 ? classifyUserAgent("") : (devices[ua] ??= classifyUserAgent(c.strings[ua]!));
    const known = c.fields[o + COUNTRY]!;
    let country = known < 0 ? null : countryFromHeader(c.strings[known]!);
    const ip = c.fields[o + IP]!;
    if (country === null && ip >= 0 && countryLookup) country = countries[ip] === undefined ? (countries[ip] = countryLookup(c.strings[ip]!)) : countries[ip]!;
    const referrer = c.fields[o + REFERRER]!;
    const variant = c.fields[o + VARIANT]!;
    out[i] = {
      id: c.ids[i]!, linkId: c.strings[c.fields[o + LINK]!]!, ts: c.ts[i]!, country,
      device: device.device, browser: device.browser, os: device.os,
      referrer: referrer < 0 ? null : c.strings[referrer]!.slice(0, 1024), variant: variant < 0 ? null : variant,
    };
  }
  return out;
}

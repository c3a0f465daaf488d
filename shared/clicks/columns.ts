/**
 * A click batch as columns: the repeated strings of a batch (link ids, User-Agents, referrers, addresses) are
 * kept once, the rest as numbers. Two uses:
 * - the hop from the server thread to the embedded writer thread (packed, see PackedClicks): posting an array
 *   of objects makes the structured clone copy every field of every click, while typed arrays are transferred;
 * - the body of a Redis stream entry (clicksToJson): a few times smaller than the events as JSON, so the
 *   redirector serialises, Redis stores and the consumer parses that much less.
 */
import type { ClickEvent } from "../ports.ts";

/** Per click, STRIDE int32 slots: indexes into `strings` (-1: null) and the A/B variant (-1: none). */
const LINK = 0, UA = 1, IP = 2, COUNTRY = 3, REFERRER = 4, VARIANT = 5, STRIDE = 6;

export interface ClickColumns {
  ids: string[];
  ts: Float64Array;
  fields: Int32Array;
  strings: string[];
}

export function encodeClicks(events: ClickEvent[]): { columns: ClickColumns; transfer: ArrayBuffer[] } {
  const ts = new Float64Array(events.length);
  const fields = new Int32Array(events.length * STRIDE);
  const { ids, strings } = fillColumns(events, ts, fields);
  return { columns: { ids, ts, fields, strings }, transfer: [ts.buffer, fields.buffer] };
}

/** Writes the events' numbers into `ts` and `fields` (typed arrays, or plain ones for JSON); returns the strings. */
function fillColumns(events: ClickEvent[], ts: { [i: number]: number }, fields: { [i: number]: number }): { ids: string[]; strings: string[] } {
  const n = events.length;
  const ids = new Array<string>(n);
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
  return { ids, strings };
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
      variant: (variant as number) < 0 ? null : (variant as number),
    };
  }
  return out;
}

/**
 * The columns with every string (click ids, then the string table) in one: the text and each part's length.
 * Posting a batch to a thread this way clones one string instead of a thousand, which took the server thread's
 * postMessage from about 1.6 µs per click to a small fraction of that; the typed arrays are transferred.
 */
export interface PackedClicks {
  text: string;
  lengths: Int32Array;
  count: number;
  ts: Float64Array;
  fields: Int32Array;
}

export function packClicks(events: ClickEvent[]): { packed: PackedClicks; transfer: ArrayBuffer[] } {
  const { columns, transfer } = encodeClicks(events);
  const parts = columns.ids.concat(columns.strings);
  const lengths = new Int32Array(parts.length);
  for (let i = 0; i < parts.length; i++) lengths[i] = parts[i]!.length;
  return {
    packed: { text: parts.join(""), lengths, count: events.length, ts: columns.ts, fields: columns.fields },
    transfer: [...transfer, lengths.buffer],
  };
}

export function unpackClicks(p: PackedClicks): ClickEvent[] {
  const parts = new Array<string>(p.lengths.length);
  let at = 0;
  for (let i = 0; i < parts.length; i++) parts[i] = p.text.slice(at, (at += p.lengths[i]!));
  return decodeClicks({ ids: parts.slice(0, p.count), ts: p.ts, fields: p.fields, strings: parts.slice(p.count) });
}

/** Marks the column form of a stream entry body (an array is the older form: one object per event). */
const JSON_VERSION = 2;

/** A batch as the JSON body of one stream entry. */
export function clicksToJson(events: ClickEvent[]): string {
  // Plain arrays from the start: converting typed arrays for JSON.stringify cost more than the encoding itself.
  const ts = new Array<number>(events.length);
  const f = new Array<number>(events.length * STRIDE);
  const { ids, strings } = fillColumns(events, ts, f);
  return JSON.stringify({ v: JSON_VERSION, ids, ts, f, s: strings });
}

const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");

/**
 * The events of a stream entry body written by clicksToJson, or undefined when it is not one or does not hold
 * together (unknown version, columns of different lengths, an index outside the string table): such an entry
 * is skipped, never allowed to throw in the consumer. Validated and decoded in one pass (the consumer reads
 * every click this way).
 */
export function clicksFromJson(body: unknown): ClickEvent[] | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const { v, ids, ts, f, s } = body as Record<string, unknown>;
  if (v !== JSON_VERSION || !isStringArray(ids) || !isStringArray(s) || !Array.isArray(ts) || !Array.isArray(f)) return undefined;
  const n = ids.length;
  if (ts.length !== n || f.length !== n * STRIDE) return undefined;
  const index = (i: unknown): i is number => Number.isInteger(i) && (i as number) >= -1 && (i as number) < s.length;
  const str = (i: number) => (i < 0 ? null : s[i]!);
  const out = new Array<ClickEvent>(n);
  for (let i = 0; i < n; i++) {
    const o = i * STRIDE;
    const t: unknown = ts[i], link: unknown = f[o + LINK], ua: unknown = f[o + UA], ip: unknown = f[o + IP];
    const country: unknown = f[o + COUNTRY], referrer: unknown = f[o + REFERRER], variant: unknown = f[o + VARIANT];
    if (typeof t !== "number" || !Number.isFinite(t)) return undefined;
    if (!index(link) || link < 0 || !index(ua) || !index(ip) || !index(country) || !index(referrer)) return undefined;
    if (!Number.isInteger(variant) || (variant as number) < -1) return undefined;
    out[i] = {
      id: ids[i]!, linkId: s[link]!, ts: t, ua: str(ua) ?? "", ip: str(ip), country: str(country), referrer: str(referrer),
      variant: (variant as number) < 0 ? null : (variant as number),
    };
  }
  return out;
}

/**
 * Click batches in compact forms, for two hops:
 * - the server thread to the embedded writer thread (packClicks): posting an array of objects makes the
 *   structured clone copy every field of every click, while one string and typed arrays go across cheaply;
 * - the body of a Redis stream entry (clicksToJson): columns in which the repeated strings of a batch (link ids,
 *   User-Agents, referrers, addresses) are kept once, a few times smaller than the events as JSON, so the
 *   redirector serialises, Redis stores and the consumer parses that much less.
 */
import type { ClickEvent } from "../ports.ts";

/**
 * Per click, STRIDE number slots: indexes into `strings` (-1: null), the A/B variant and matched rule (-1: none),
 * and 1 when it came through a QR code (0 otherwise). Versions 2 and 3 had the first six (STRIDE_V3).
 */
const LINK = 0, UA = 1, IP = 2, COUNTRY = 3, REFERRER = 4, VARIANT = 5, RULE = 6, QR = 7, STRIDE = 8;
const STRIDE_V3 = 6;

/** Writes the events' numbers into `dt` (ms after `t0`) and `fields` (plain arrays, for JSON); returns the strings. */
function fillColumns(events: ClickEvent[], t0: number, dt: number[], fields: number[]): string[] {
  const n = events.length;
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
    dt[i] = e.ts - t0;
    fields[o + LINK] = intern(e.linkId);
    fields[o + UA] = intern(e.ua);
    fields[o + IP] = intern(e.ip);
    fields[o + COUNTRY] = intern(e.country);
    fields[o + REFERRER] = intern(e.referrer);
    fields[o + VARIANT] = e.variant ?? -1;
    fields[o + RULE] = e.rule ?? -1;
    fields[o + QR] = e.qr ? 1 : 0;
  }
  return strings;
}

/**
 * A batch for the hop from the server thread to the embedded writer thread: every string of every click in
 * one text, cut by `lengths` (-1: null), the numbers in typed arrays that are transferred, not copied.
 * Posting one string instead of a thousand took the server thread's postMessage from about 1.6 µs per click
 * to a small fraction of that. Strings are not de-duplicated through a table here, unlike the Redis form: that
 * costs a Map lookup per string on the server thread, the busiest one; only a field equal to the click before's is
 * sent as such (a comparison), which a visitor's run or one link's traffic makes common.
 */
export interface PackedClicks {
  text: string;
  /** Per click, PACKED_STRINGS lengths: id, link id, User-Agent, address, country, referrer. */
  lengths: Int32Array;
  ts: Float64Array;
  /** Per click, PACKED_NUMBERS numbers: the A/B variant and the matched rule (-1: none), 1 for a QR code's click. */
  numbers: Int32Array;
}

const PACKED_STRINGS = 6;
const PACKED_NUMBERS = 3;

/** A length meaning "the same string as this field of the click before" (a visitor's run, one link's traffic). */
const SAME = -2;

export function packClicks(events: ClickEvent[]): { packed: PackedClicks; transfer: ArrayBuffer[] } {
  const n = events.length;
  const parts: string[] = [];
  const lengths = new Int32Array(n * PACKED_STRINGS);
  const ts = new Float64Array(n);
  const numbers = new Int32Array(n * PACKED_NUMBERS);
  let k = 0;
  // A field equal to the click before's is sent as SAME: a comparison instead of copying the text (a User-Agent is
  // about 100 characters), and the writer thread gets the one string object for the run, which its own
  // comparisons and lookups then find at once.
  let id: string | null = null, link: string | null = null, ua: string | null = null, ip: string | null = null;
  let country: string | null = null, referrer: string | null = null;
  const put = (s: string | null, before: string | null) => {
    if (s === null) lengths[k++] = -1;
    else if (s === before) lengths[k++] = SAME;
    else {
      lengths[k++] = s.length;
      parts.push(s);
    }
  };
  for (let i = 0; i < n; i++) {
    const e = events[i]!;
    ts[i] = e.ts;
    numbers[i * PACKED_NUMBERS] = e.variant ?? -1;
    numbers[i * PACKED_NUMBERS + 1] = e.rule ?? -1;
    numbers[i * PACKED_NUMBERS + 2] = e.qr ? 1 : 0;
    put(e.id, id);
    put(e.linkId, link);
    put(e.ua, ua);
    put(e.ip, ip);
    put(e.country, country);
    put(e.referrer, referrer);
    id = e.id, link = e.linkId, ua = e.ua, ip = e.ip, country = e.country, referrer = e.referrer;
  }
  return { packed: { text: parts.join(""), lengths, ts, numbers }, transfer: [lengths.buffer, ts.buffer, numbers.buffer] };
}

export function unpackClicks(p: PackedClicks): ClickEvent[] {
  const n = p.ts.length;
  const out = new Array<ClickEvent>(n);
  let at = 0;
  let k = 0;
  const take = (before: string | null): string | null => {
    const len = p.lengths[k++]!;
    if (len === SAME) return before;
    if (len < 0) return null;
    return p.text.slice(at, (at += len));
  };
  let last: ClickEvent | undefined;
  for (let i = 0; i < n; i++) {
    const id = take(last?.id ?? null)!, linkId = take(last?.linkId ?? null)!, ua = take(last?.ua ?? null) ?? "";
    const ip = take(last?.ip ?? null), country = take(last?.country ?? null), referrer = take(last?.referrer ?? null);
    const variant = p.numbers[i * PACKED_NUMBERS]!, rule = p.numbers[i * PACKED_NUMBERS + 1]!;
    out[i] = {
      id, linkId, ts: p.ts[i]!, ua, ip, country, referrer,
      variant: variant < 0 ? null : variant, rule: rule < 0 ? null : rule, qr: p.numbers[i * PACKED_NUMBERS + 2] === 1,
    };
    last = out[i];
  }
  return out;
}

/**
 * Marks the column form of a stream entry body (an array is the older form: one object per event). Version 4
 * adds the matched rule and the QR flag to each click's numbers. Version 3 left out click ids, which nothing read
 * after the store began keeping clicks per batch (the entry is the batch), and gave times as ms after the first:
 * about 40% less to write, store and parse than version 2. Versions 3 and 2 are still read (their clicks have no
 * rule and did not come through a QR code), so that a rolling deploy loses nothing.
 */
const JSON_VERSION = 4;
const JSON_VERSION_NO_RULE = 3;
const JSON_VERSION_WITH_IDS = 2;

/** A batch as the JSON body of one stream entry. */
export function clicksToJson(events: ClickEvent[]): string {
  // Plain arrays from the start: converting typed arrays for JSON.stringify cost more than the encoding itself.
  const t0 = events[0]?.ts ?? 0;
  const dt = new Array<number>(events.length);
  const f = new Array<number>(events.length * STRIDE);
  const s = fillColumns(events, t0, dt, f);
  return JSON.stringify({ v: JSON_VERSION, t0, dt, f, s });
}

/** A variant or rule slot: an index, or -1 for none. */
const isSlot = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= -1;

const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");

/** The click times of a body: versions 4 and 3's offsets from t0, or version 2's times with its ids; undefined if none. */
function timesOf(body: Record<string, unknown>): number[] | undefined {
  const { v, t0, dt, ts, ids } = body;
  if (v === JSON_VERSION || v === JSON_VERSION_NO_RULE) {
    if (typeof t0 !== "number" || !Number.isFinite(t0) || !Array.isArray(dt)) return undefined;
    const out = new Array<number>(dt.length);
    for (let i = 0; i < dt.length; i++) {
      const d: unknown = dt[i];
      if (typeof d !== "number" || !Number.isFinite(d)) return undefined;
      out[i] = t0 + d;
    }
    return out;
  }
  if (v !== JSON_VERSION_WITH_IDS || !isStringArray(ids) || !Array.isArray(ts) || ts.length !== ids.length) return undefined;
  for (const t of ts) if (typeof t !== "number" || !Number.isFinite(t)) return undefined;
  return ts as number[];
}

/**
 * The events of a stream entry body written by clicksToJson (version 4, or 3 or 2), or undefined when it is not one or
 * does not hold together (unknown version, columns of different lengths, an index outside the string table):
 * such an entry is skipped, never allowed to throw in the consumer. Validated and decoded in one pass (the
 * consumer reads every click this way). Events come back without ids (""): nothing after the queue reads one (the entry
 * is the batch, and the queue names each click `<entryId>:<index>` when asked: LazyQueuedClick).
 */
export function clicksFromJson(body: unknown): ClickEvent[] | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const b = body as Record<string, unknown>;
  const { f, s } = b;
  const ts = timesOf(b);
  if (ts === undefined || !isStringArray(s) || !Array.isArray(f)) return undefined;
  const n = ts.length;
  const stride = b.v === JSON_VERSION ? STRIDE : STRIDE_V3;
  if (f.length !== n * stride) return undefined;
  const index = (i: unknown): i is number => Number.isInteger(i) && (i as number) >= -1 && (i as number) < s.length;
  const str = (i: number) => (i < 0 ? null : s[i]!);
  const out = new Array<ClickEvent>(n);
  for (let i = 0; i < n; i++) {
    const o = i * stride;
    const link: unknown = f[o + LINK], ua: unknown = f[o + UA], ip: unknown = f[o + IP];
    const country: unknown = f[o + COUNTRY], referrer: unknown = f[o + REFERRER], variant: unknown = f[o + VARIANT];
    const rule: unknown = stride === STRIDE ? f[o + RULE] : -1, qr: unknown = stride === STRIDE ? f[o + QR] : 0;
    if (!index(link) || link < 0 || !index(ua) || !index(ip) || !index(country) || !index(referrer)) return undefined;
    if (!isSlot(variant) || !isSlot(rule) || (qr !== 0 && qr !== 1)) return undefined;
    out[i] = {
      id: "", linkId: s[link]!, ts: ts[i]!, ua: str(ua) ?? "", ip: str(ip), country: str(country), referrer: str(referrer),
      variant: variant < 0 ? null : variant, rule: rule < 0 ? null : rule, qr: qr === 1,
    };
  }
  return out;
}

/**
 * The entries of the Redis click stream as the click queue reads them: one entry per batch (`n` clicks, body `b`
 * = the batch's columns as JSON, shared/clicks/columns.ts), and the two older formats still accepted, so a deploy
 * loses nothing already queued.
 */
import { clicksFromJson } from "../../clicks/columns.ts";
import type { ClickEvent } from "../../ports.ts";
import { parseJson } from "./connection.ts";

export type RawEntry = [id: string, fields: string[] | null];

/** The entries of an XREADGROUP reply on one stream. */
export function streamEntries(reply: unknown): RawEntry[] {
  const streams = reply as [string, RawEntry[]][] | null;
  return streams?.[0]?.[1] ?? [];
}

/**
 * How many clicks an entry holds, from its `n` field (written with every batch), without parsing its body:
 * 1 for the older one-click format, 0 for an entry whose body is gone (trimmed while pending).
 */
export function entryClickCount(fields: string[] | null): number {
  if (!fields) return 0;
  const n = fields.indexOf("n");
  if (n < 0 || n % 2 !== 0) return 1;
  const value = Number(fields[n + 1]);
  return Number.isInteger(value) && value > 0 ? value : 1;
}

/** The events of an entry, or undefined when it has none that can be read. */
export function entryEvents(id: string, fields: string[]): ClickEvent[] | undefined {
  const b = fields.indexOf("b");
  if (b >= 0 && b % 2 === 0) {
    const batch = parseJson<unknown>(fields[b + 1]);
    // An array: the events as objects, written by a version before the column form (a deploy loses nothing).
    if (Array.isArray(batch)) return batch.length > 0 ? (batch as ClickEvent[]) : undefined;
    const events = clicksFromJson(batch);
    return events && events.length > 0 ? events : undefined;
  }
  // Written by a version with one entry per click: accepted, so a deploy loses nothing already queued.
  const e = fields.indexOf("e");
  const event = e >= 0 && e % 2 === 0 ? parseJson<ClickEvent>(fields[e + 1]) : undefined;
  return event ? [event] : undefined;
}

/** Stream order of two entry ids `<ms>-<seq>` (compared per entry, not per click). */
export function compareStreamIds(a: string, b: string): number {
  const ad = a.indexOf("-"), bd = b.indexOf("-");
  return Number(a.slice(0, ad)) - Number(b.slice(0, bd)) || Number(a.slice(ad + 1)) - Number(b.slice(bd + 1));
}

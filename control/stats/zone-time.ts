/**
 * Wall-clock time in an IANA zone, for the analytics series: where a zone's days, Monday weeks and months start,
 * correct across daylight-saving changes (a 23- or 25-hour day). Intl is the only source of zone rules; its
 * answers are cached per UTC hour, since offsets change on whole hours in every zone in use today.
 */
import type { Interval } from "./analytics-types.ts";

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

export const floorHour = (t: number) => Math.floor(t / HOUR) * HOUR;
export const ceilHour = (t: number) => Math.ceil(t / HOUR) * HOUR;
export const floorDay = (t: number) => Math.floor(t / DAY) * DAY;
export const ceilDay = (t: number) => Math.ceil(t / DAY) * DAY;

/** The zone's canonical name (Intl's spelling), or null when Intl does not know it. */
export function canonicalZone(tz: string): string | null {
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** A UTC instant for calendar fields read as UTC (Date.UTC maps years 0-99 to 1900-1999; this does not). */
export function utcOf(year: number, month0: number, day: number, h = 0, m = 0, s = 0, ms = 0): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month0, day);
  d.setUTCHours(h, m, s, ms);
  return d.getTime();
}

/** Offsets kept per zone (about 11 years of hours): queries keep asking about the same recent hours. */
const MAX_CACHED_OFFSETS = 100_000;
const zones = new Map<string, Zone>();

/** The Zone of a canonical name, made once per process (its formatter and offsets are reused). */
export function zoneOf(name: string): Zone {
  let z = zones.get(name);
  if (!z) zones.set(name, (z = new Zone(name)));
  return z;
}

export class Zone {
  private readonly fmt: Intl.DateTimeFormat;
  private readonly offsets = new Map<number, number>();

  constructor(readonly name: string) {
    this.fmt = new Intl.DateTimeFormat("en-US", {
      timeZone: name, hourCycle: "h23", era: "short",
      year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric",
    });
  }

  /** The zone's offset from UTC at instant t, in ms. */
  offset(t: number): number {
    if (this.name === "UTC") return 0;
    const hour = floorHour(t);
    let o = this.offsets.get(hour);
    if (o === undefined) {
      if (this.offsets.size >= MAX_CACHED_OFFSETS) this.offsets.clear();
      const p: Record<string, string> = {};
      for (const { type, value } of this.fmt.formatToParts(hour)) p[type] = value;
      const year = p.era === "BC" || p.era === "B" ? 1 - Number(p.year) : Number(p.year);
      o = utcOf(year, Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second)) - hour;
      this.offsets.set(hour, o);
    }
    return o;
  }

  /** Local wall-clock time of t, as the UTC instant with the same calendar fields. */
  wall(t: number): number {
    return t + this.offset(t);
  }

  /**
   * The instant a wall-clock time happens: the first of two in a repeated (fall-back) hour; for a skipped
   * (spring-forward) time, the change itself, which is where a day starting in the gap starts.
   */
  instant(wall: number): number {
    const early = wall - this.offset(wall - DAY);
    const late = wall - this.offset(wall + DAY);
    const valid = [early, late].filter((u) => this.wall(u) === wall);
    return valid.length ? Math.min(...valid) : Math.max(early, late);
  }

  /** ISO 8601 with the zone's offset at t: 2026-03-29T03:00:00+02:00. */
  iso(t: number): string {
    const off = this.offset(t);
    const local = new Date(t + off).toISOString().slice(0, 19);
    const mins = Math.round(Math.abs(off) / 60_000);
    const hh = String(Math.floor(mins / 60)).padStart(2, "0");
    const mm = String(mins % 60).padStart(2, "0");
    return `${local}${off < 0 ? "-" : "+"}${hh}:${mm}`;
  }

  /**
   * The start of the interval holding t. Hours are UTC hours (the zone's own hours in every whole-hour zone; in
   * a zone like Asia/Kolkata, +05:30, they start at half past, because clicks are counted per UTC hour).
   */
  startOf(interval: Interval, t: number): number {
    if (interval === "hour") return floorHour(t);
    const midnight = floorDay(this.wall(t));
    if (interval === "day") return this.instant(midnight);
    if (interval === "week") {
      const sinceMonday = (new Date(midnight).getUTCDay() + 6) % 7;
      return this.instant(midnight - sinceMonday * DAY);
    }
    const d = new Date(midnight);
    return this.instant(utcOf(d.getUTCFullYear(), d.getUTCMonth(), 1));
  }

  /** The start of the interval after the one starting at `start`. */
  next(interval: Interval, start: number): number {
    if (interval === "hour") return start + HOUR;
    const midnight = floorDay(this.wall(start));
    if (interval === "day") return this.instant(midnight + DAY);
    if (interval === "week") return this.instant(midnight + 7 * DAY);
    const d = new Date(midnight);
    return this.instant(utcOf(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
  }

  /**
   * The starts of the intervals meeting [from, to), oldest first; null when there are more than `max` (so an
   * unbounded range costs max steps, not millions).
   */
  intervals(interval: Interval, from: number, to: number, max = Infinity): number[] | null {
    const starts: number[] = [];
    for (let s = this.startOf(interval, from); s < to; s = this.next(interval, s)) {
      if (starts.length === max) return null;
      starts.push(s);
    }
    return starts;
  }
}

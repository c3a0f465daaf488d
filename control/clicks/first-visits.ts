/**
 * Which clicks of a batch are their visitor's first on the link that UTC day (issue #20: unique visitors without
 * following anyone). A visitor is the first 16 hex digits of HMAC-SHA256(the day's key, address + "\n" +
 * User-Agent); the key comes from the VisitorLedger, which forgets it two days later, so the same person on two
 * days is two unrelated values. The ledger is asked once per UTC day in the batch, with every (link, visitor) pair
 * of that day, and answers which it sees for the first time.
 *
 * Bots get a visitor too (stats leave them out by default, and `bots=only` still counts unique ones). A click
 * without a known address is hashed from its User-Agent alone: such visitors are counted together, never twice.
 */
import type { ClickEvent, StoredClick, VisitorLedger } from "../../shared/ports.ts";

const DAY_MS = 86_400_000;
/** Keys of days this far back are dropped from the cache (the ledger forgets them after two days). */
const KEEP_KEYS_MS = 3 * DAY_MS;
/**
 * Pairs of a day this process remembers having seen first, so their later clicks skip the ledger (an SQLite
 * insert or a Redis call each: 0.65 µs a click of one visitor's traffic in the embedded writer thread, which
 * shares the two cores with the redirects). Past this many a day's set starts again: only a ledger call is lost.
 */
export const SEEN_PAIRS_PER_DAY = 200_000;

/** The (link, visitor) pair of each click marked as a first visit: what forget() un-sees if it is not written. */
export type Sightings = Map<StoredClick, string>;

export const dayOf = (ts: number): number => ts - (((ts % DAY_MS) + DAY_MS) % DAY_MS);

export class FirstVisits {
  /**
   * Per day, an HMAC hasher keyed with the day's key: each visitor is a copy of it fed one message, which measured
   * 0.36-0.43 µs per click against 0.90-1.04 µs for node:crypto's createHmac (Bun 1.4.5, this machine).
   */
  private readonly hashers = new Map<number, Promise<Bun.CryptoHasher>>();
  /**
   * Per day, the pairs whose first sighting this process marked (and did not forget). Only its own: a pair the
   * ledger answered "seen" for may be another consumer's first sighting, which that consumer may still forget.
   */
  private readonly seen = new Map<number, Set<string>>();

  constructor(private readonly ledger: VisitorLedger) {}

  /**
   * Sets `firstVisit` on each stored click (`stored[i]` converted from `events[i]`, or null when it was not);
   * answers the first sightings, to forget if the clicks are not written after all.
   */
  async mark(events: readonly ClickEvent[], stored: readonly (StoredClick | null)[]): Promise<Sightings> {
    const byDay = new Map<number, number[]>();
    for (let i = 0; i < stored.length; i++) {
      const s = stored[i];
      if (!s) continue;
      const day = dayOf(s.ts);
      const at = byDay.get(day);
      if (at === undefined) byDay.set(day, [i]);
      else at.push(i);
    }
    const sightings: Sightings = new Map();
    const days = await Promise.allSettled(
      [...byDay].map(async ([day, at]) => {
        const hasher = await this.hasherOf(day);
        const seen = this.seenOf(day);
        // The ledger is asked once per distinct pair not already seen first here, for its first click in the batch.
        const ask: string[] = [], askAt: number[] = [];
        const asked = new Set<string>();
        let lastIp: string | null | undefined, lastUa: string | undefined, visitor = "";
        let lastLink: string | undefined, lastVisitor: string | undefined;
        for (const i of at) {
          const e = events[i]!;
          // Hashed per click (a Map of visitors cost about as much as it saved: most differ), except a run of one
          // visitor's clicks, which is common and costs a comparison.
          if (e.ip !== lastIp || e.ua !== lastUa) {
            visitor = hasher.copy().update(`${e.ip ?? ""}\n${e.ua}`).digest("hex").slice(0, 16);
            lastIp = e.ip;
            lastUa = e.ua;
          }
          const linkId = stored[i]!.linkId;
          // The pair of the click before (a visitor's run on one link) was asked for or seen already.
          if (linkId === lastLink && visitor === lastVisitor) continue;
          lastLink = linkId;
          lastVisitor = visitor;
          const pair = `${linkId} ${visitor}`;
          if (seen.has(pair) || asked.has(pair)) continue;
          asked.add(pair);
          ask.push(pair);
          askAt.push(i);
        }
        const first = ask.length === 0 ? [] : await this.ledger.firstVisits(day, ask);
        if (seen.size + ask.length > SEEN_PAIRS_PER_DAY) seen.clear();
        for (let j = 0; j < ask.length; j++) {
          if (first[j] !== true) continue;
          const s = stored[askAt[j]!]!;
          s.firstVisit = true;
          sightings.set(s, ask[j]!);
          seen.add(ask[j]!);
        }
      }),
    );
    const failed = days.find((d) => d.status === "rejected");
    if (failed) {
      // The batch comes back (nothing acknowledged): the days already asked must count as first again then.
      await this.forget(sightings).catch(() => {});
      throw failed.reason;
    }
    return sightings;
  }

  /** Un-sees the first visits of `clicks` (all of `sightings` by default) whose clicks were not written. */
  async forget(sightings: Sightings, clicks: Iterable<StoredClick> = sightings.keys()): Promise<void> {
    const byDay = new Map<number, string[]>();
    for (const c of clicks) {
      const pair = sightings.get(c);
      if (pair === undefined) continue;
      const day = dayOf(c.ts);
      const pairs = byDay.get(day);
      if (pairs === undefined) byDay.set(day, [pair]);
      else pairs.push(pair);
    }
    for (const [day, pairs] of byDay) {
      const seen = this.seen.get(day);
      if (seen) for (const pair of pairs) seen.delete(pair);
    }
    await Promise.all([...byDay].map(([day, pairs]) => this.ledger.forgetVisits(day, pairs)));
  }

  private seenOf(day: number): Set<string> {
    let s = this.seen.get(day);
    if (s === undefined) {
      for (const known of this.seen.keys()) if (known < day - KEEP_KEYS_MS) this.seen.delete(known);
      this.seen.set(day, (s = new Set()));
    }
    return s;
  }

  private hasherOf(day: number): Promise<Bun.CryptoHasher> {
    let h = this.hashers.get(day);
    if (h === undefined) {
      for (const known of this.hashers.keys()) if (known < day - KEEP_KEYS_MS) this.hashers.delete(known);
      h = this.ledger.visitorKey(day).then((key) => new Bun.CryptoHasher("sha256", key));
      this.hashers.set(day, h);
      h.catch(() => this.hashers.delete(day)); // asked again next batch
    }
    return h;
  }
}

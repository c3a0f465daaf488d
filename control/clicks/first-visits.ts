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
 * Pairs of a day the embedded writer thread remembers having seen first, so their later clicks skip its SQLite
 * ledger (an insert each: 0.65 µs a click of one visitor's traffic, on cores the redirects share). Past this many a
 * day's set starts again: only a ledger call is lost. The scale-mode consumer remembers none (see FirstVisits).
 */
export const SEEN_PAIRS_PER_DAY = 200_000;

/**
 * The first visits marked in a read, click and pair in turn: what forget() un-sees if they are not written. Two
 * arrays, not a Map: a read's thousands of first visits are forgotten only when its write fails.
 */
export interface Sightings {
  clicks: StoredClick[];
  pairs: string[];
}

export const dayOf = (ts: number): number => ts - (((ts % DAY_MS) + DAY_MS) % DAY_MS);

export class FirstVisits {
  /**
   * Per day, an HMAC hasher keyed with the day's key: each visitor is a copy of it fed one message, which measured
   * 0.36-0.43 µs per click against 0.90-1.04 µs for node:crypto's createHmac (Bun 1.4.5, this machine).
   */
  private readonly hashers = new Map<number, Promise<Bun.CryptoHasher>>();
  /**
   * Per day, the pairs whose first sighting this process marked (and did not forget), when it remembers any. Only
   * its own: a pair the ledger answered "seen" for may be another consumer's first sighting, which that consumer may
   * still forget.
   */
  private readonly seen = new Map<number, Set<string>>();
  /** A visitor's HMAC, written in place (digest() into a buffer wants 64 bytes; the first 8 are taken, as hex). */
  private readonly digest = Buffer.alloc(64);

  /**
   * `remember`: pairs per day kept in `seen` (0: none). Remembering costs a Set lookup and insertion per click, and
   * a Set of the read's pairs asked goes with it; those cost the scale-mode consumer more than the Redis ledger
   * calls they save (200,000 spread pairs: 1.2-1.5 µs per click with both Sets, 0.14-0.19 µs for the pair strings
   * alone; the drain's conversion and hashing 2.8 -> 1.4 µs per click in process), so it asks the ledger for every
   * pair but a visitor's run on one link, and the ledger's script tells repeats apart.
   */
  constructor(private readonly ledger: VisitorLedger, private readonly remember = 0) {}

  /**
   * Sets `firstVisit` on each stored click (`stored[i]` converted from `events[i]`, or null when it was not);
   * answers the first sightings, to forget if the clicks are not written after all.
   */
  async mark(events: readonly ClickEvent[], stored: readonly (StoredClick | null)[]): Promise<Sightings> {
    const byDay = new Map<number, number[]>();
    let lastDay = NaN, lastAt: number[] = [];
    for (let i = 0; i < stored.length; i++) {
      const s = stored[i];
      if (!s) continue;
      const day = dayOf(s.ts);
      if (day !== lastDay) {
        lastDay = day;
        let at = byDay.get(day);
        if (at === undefined) byDay.set(day, (at = []));
        lastAt = at;
      }
      lastAt.push(i);
    }
    const sightings: Sightings = { clicks: [], pairs: [] };
    const days = await Promise.allSettled(
      [...byDay].map(async ([day, at]) => {
        const hasher = await this.hasherOf(day);
        const seen = this.remember > 0 ? this.seenOf(day) : null;
        // The ledger is asked for the first click of each pair (or of each run of one pair when nothing is remembered).
        const ask: string[] = [], askAt: number[] = [];
        const asked = seen === null ? null : new Set<string>();
        const digest = this.digest;
        let lastIp: string | null | undefined, lastUa: string | undefined, visitor = "";
        let lastLink: string | undefined, lastVisitor: string | undefined;
        for (const i of at) {
          const e = events[i]!;
          // Hashed per click (a Map of visitors cost about as much as it saved: most differ), except a run of one
          // visitor's clicks, which is common and costs a comparison.
          if (e.ip !== lastIp || e.ua !== lastUa) {
            hasher.copy().update(`${e.ip ?? ""}\n${e.ua}`).digest(digest);
            visitor = digest.toString("hex", 0, 8);
            lastIp = e.ip;
            lastUa = e.ua;
          }
          const linkId = stored[i]!.linkId;
          // The pair of the click before (a visitor's run on one link) was asked for or seen already.
          if (linkId === lastLink && visitor === lastVisitor) continue;
          lastLink = linkId;
          lastVisitor = visitor;
          const pair = `${linkId} ${visitor}`;
          if (asked !== null) {
            if (seen!.has(pair) || asked.has(pair)) continue;
            asked.add(pair);
          }
          ask.push(pair);
          askAt.push(i);
        }
        const first = ask.length === 0 ? [] : await this.ledger.firstVisits(day, ask);
        if (seen !== null && seen.size + ask.length > this.remember) seen.clear();
        for (let j = 0; j < ask.length; j++) {
          if (first[j] !== true) continue;
          const s = stored[askAt[j]!]!;
          s.firstVisit = true;
          sightings.clicks.push(s);
          sightings.pairs.push(ask[j]!);
          seen?.add(ask[j]!);
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
  async forget(sightings: Sightings, clicks?: Iterable<StoredClick>): Promise<void> {
    const byDay = new Map<number, string[]>();
    const add = (c: StoredClick, pair: string) => {
      const day = dayOf(c.ts);
      const pairs = byDay.get(day);
      if (pairs === undefined) byDay.set(day, [pair]);
      else pairs.push(pair);
    };
    if (clicks === undefined) sightings.clicks.forEach((c, k) => add(c, sightings.pairs[k]!));
    else {
      const pairOf = new Map(sightings.clicks.map((c, k) => [c, sightings.pairs[k]!]));
      for (const c of clicks) {
        const pair = pairOf.get(c);
        if (pair !== undefined) add(c, pair);
      }
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

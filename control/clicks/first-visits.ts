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

/** The (link, visitor) pair of each click marked as a first visit: what forget() un-sees if it is not written. */
export type Sightings = Map<StoredClick, string>;

export const dayOf = (ts: number): number => ts - (((ts % DAY_MS) + DAY_MS) % DAY_MS);

export class FirstVisits {
  /**
   * Per day, an HMAC hasher keyed with the day's key: each visitor is a copy of it fed one message, which measured
   * 0.36-0.43 µs per click against 0.90-1.04 µs for node:crypto's createHmac (Bun 1.4.5, this machine).
   */
  private readonly hashers = new Map<number, Promise<Bun.CryptoHasher>>();

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
        // Hashed for every click: a Map of the batch's visitors cost about as much as it saved (most differ).
        const pairs = at.map((i) => {
          const e = events[i]!;
          return `${stored[i]!.linkId} ${hasher.copy().update(`${e.ip ?? ""}\n${e.ua}`).digest("hex").slice(0, 16)}`;
        });
        const first = await this.ledger.firstVisits(day, pairs);
        for (let j = 0; j < at.length; j++) {
          if (first[j] !== true) continue;
          const s = stored[at[j]!]!;
          s.firstVisit = true;
          sightings.set(s, pairs[j]!);
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
    await Promise.all([...byDay].map(([day, pairs]) => this.ledger.forgetVisits(day, pairs)));
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

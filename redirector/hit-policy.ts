/**
 * The maxHits step of a request (design §4 step 3). decide() checks the limit against the best count known here;
 * this step makes it exact: a counted redirect takes a hit (one atomic step in HotState) and becomes the link's
 * gone answer when none is left, and an answer that takes no hit (HEAD, crawler preview, password form) asks for
 * the current count, so it too turns into the gone answer once the limit is reached, also when the clicks were
 * served before a restart or by another redirector. Links without maxHits pass through untouched.
 */
import { goneOutcome, type GoneOutcome, type Outcome } from "../shared/decide.ts";
import type { CompiledLink } from "../shared/link.ts";
import type { HotState, LinkStore } from "../shared/ports.ts";

/**
 * A HotState that can take a maxHits step synchronously (the in-memory one, once the link's counter is seeded:
 * undefined until then). Using it keeps a maxHits redirect off the Promise path in embedded mode.
 */
interface SyncHitCounter {
  takeHitSync(linkId: string, max: number): number | undefined;
}

function hasSyncHits(hot: HotState): hot is HotState & SyncHitCounter {
  return typeof (hot as Partial<SyncHitCounter>).takeHitSync === "function";
}

export interface HitPolicy {
  readonly hot: HotState;
  readonly store: LinkStore;
  /** `hot` when it takes hits synchronously (embedded mode), else null. */
  readonly sync: SyncHitCounter | null;
  /** Last counter value seen per maxHits link, so a HEAD or form view can answer 410 without a round trip. */
  readonly known: Map<string, number>;
}

export function createHitPolicy(hot: HotState, store: LinkStore): HitPolicy {
  return { hot, store, sync: hasSyncHits(hot) ? hot : null, known: new Map() };
}

/** The count decide() checks maxHits against: the last one seen here (0 for a link without maxHits). */
export function knownHits(p: HitPolicy, link: CompiledLink | null): number {
  return link !== null && link.maxHits !== null ? (p.known.get(link.id) ?? 0) : 0;
}

/**
 * The outcome as maxHits has it: `outcome` itself, or the link's gone answer when the limit is reached. Synchronous
 * unless a counter must be asked for (a remote or not yet seeded one, or a request that takes no hit).
 */
export function settleHits<O extends Outcome>(p: HitPolicy, link: CompiledLink | null, outcome: O): O | GoneOutcome | Promise<O | GoneOutcome> {
  if (link === null || link.maxHits === null) return outcome;
  const kind = outcome.kind;
  if (kind === "redirect" && outcome.count) {
    const taken = takeHit(p, link);
    if (typeof taken === "boolean") return taken ? outcome : goneOutcome(link, "limit");
    return taken.then((ok) => (ok ? outcome : goneOutcome(link, "limit")));
  }
  if (kind === "redirect" || kind === "password" || kind === "preview") {
    const max = link.maxHits;
    return currentHits(p, link).then((hits) => (hits >= max ? goneOutcome(link, "limit") : outcome));
  }
  return outcome;
}

/**
 * Takes one hit of a maxHits link: true when the click may be served, false when the limit was reached. In-process
 * counters (embedded mode) answer at once; only a counter not yet seeded or a remote one is awaited.
 */
export function takeHit(p: HitPolicy, link: CompiledLink): boolean | Promise<boolean> {
  const max = link.maxHits!;
  const n = p.sync?.takeHitSync(link.id, max);
  if (n !== undefined) return noteTaken(p, link, n);
  return p.hot.takeHit(link.id, max, () => storedHits(p, link.id)).then((m) => noteTaken(p, link, m));
}

function noteTaken(p: HitPolicy, link: CompiledLink, n: number): boolean {
  p.known.set(link.id, n < 0 ? link.maxHits! : n);
  return n >= 0;
}

/**
 * The link's hit count for a request that takes no hit, which therefore cannot learn it from takeHit: the shared
 * counter, else the last count seen here, else the stored hits.
 */
export async function currentHits(p: HitPolicy, link: CompiledLink): Promise<number> {
  const counted = await p.hot.peekHits(link.id);
  if (counted !== null) {
    p.known.set(link.id, counted);
    return counted;
  }
  const known = p.known.get(link.id);
  if (known !== undefined) return known;
  const stored = await storedHits(p, link.id);
  p.known.set(link.id, stored);
  return stored;
}

async function storedHits(p: HitPolicy, linkId: string): Promise<number> {
  return (await p.store.getLinkById(linkId))?.hits ?? 0;
}

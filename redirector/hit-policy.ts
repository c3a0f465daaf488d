/**
 * The maxHits step of a request (design §4 step 3). decide() checks the limit against the best count known here;
 * this step makes it exact: a counted redirect takes a hit (one atomic step in HotState) and becomes the link's
 * gone answer when none is left, and an answer that takes no hit (HEAD, crawler preview, password form) asks for
 * the current count, so it too turns into the gone answer once the limit is reached, also when the clicks were
 * served before a restart or by another redirector. Links without maxHits pass through untouched.
 *
 * A counter serves only hits the store has reserved, a block (hitBlock) at a time (hitLedger): a counter lost in a
 * crash starts again from max(recorded hits, reservation), above every hit it served, so a crash can under-serve
 * a limit by at most a block per counting process, and never exceed it.
 */
import { goneOutcome, type GoneOutcome, type Outcome } from "../shared/decide.ts";
import type { CompiledLink } from "../shared/link.ts";
import type { HitGrant, HitLedger, HitReservation, HitStart, HotState, LinkHitReservations, LinkStore } from "../shared/ports.ts";

/**
 * A HotState that can take a maxHits step synchronously (the in-memory one, once the link's counter is started
 * and while its reserved block lasts: undefined otherwise). Using it keeps a maxHits redirect off the Promise
 * path in embedded mode.
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
 * counters (embedded mode) answer at once; only a remote counter, or one that must first reserve hits in the
 * store (not started yet, or its block used up), is awaited.
 */
export function takeHit(p: HitPolicy, link: CompiledLink): boolean | Promise<boolean> {
  const max = link.maxHits!;
  const n = p.sync?.takeHitSync(link.id, max);
  if (n !== undefined) return noteTaken(p, link, n);
  return p.hot.takeHit(link.id, max, hitLedger(p.store, link.id, max)).then((m) => noteTaken(p, link, m));
}

function noteTaken(p: HitPolicy, link: CompiledLink, n: number): boolean {
  p.known.set(link.id, n < 0 ? link.maxHits! : n);
  return n >= 0;
}

/**
 * The link's hit count for a request that takes no hit, which therefore cannot learn it from takeHit: the shared
 * counter, else the last count seen here, else the count a counter started now would start from.
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

/** Where a counter started now would start: above every hit served, recorded or not (0 for a link gone). */
async function storedHits(p: HitPolicy, linkId: string): Promise<number> {
  return (await counterStart(p.store, linkId))?.count ?? 0;
}

async function counterStart(store: LinkHitReservations, linkId: string): Promise<HitStart | null> {
  const s = await store.storedHits(linkId);
  return s && { count: Math.max(s.hits, s.reserved), reserved: s.reserved };
}

/** The store's side of this link's counter: where it starts, and its reservations, a block of hitBlock(maxHits) at a time. */
export function hitLedger(store: LinkHitReservations, linkId: string, maxHits: number): HitLedger {
  const block = hitBlock(maxHits);
  return {
    start: () => counterStart(store, linkId),
    reserve: async () => grantOf(await store.reserveHits(linkId, block)),
    release: (served) => store.releaseHits(linkId, served),
  };
}

/** A reservation as a counter uses it: how far it may count, and whether the limit is all reserved. */
export function grantOf(r: HitReservation | null): HitGrant | null {
  return r && { reserved: r.reserved, final: r.reserved >= r.maxHits };
}

/** Bounds of hitBlock. */
const MIN_BLOCK = 16;
const MAX_BLOCK = 1_024;
const BLOCKS_PER_LIMIT = 64;

/**
 * Hits reserved per store write for a limit of `maxHits`: ⌈maxHits / 64⌉, at least 16, at most 1,024. A crash
 * under-serves by at most one block (reserved, never served) per counting process: 16 hits for limits up to
 * 1,024 (limits up to 16 are reserved whole, so their hits never wait for the store after the first), 1/64 of the
 * limit up to 65,536, 1,024 beyond. Serving costs one store write per block: at most 64 per link up to a limit
 * of 65,536, one per 1,024 clicks beyond (about 100 writes a second for 100,000 redirects a second).
 */
export function hitBlock(maxHits: number): number {
  return Math.min(MAX_BLOCK, Math.max(MIN_BLOCK, Math.ceil(maxHits / BLOCKS_PER_LIMIT)));
}

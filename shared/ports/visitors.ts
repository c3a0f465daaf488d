/**
 * Unique visitors without following anyone (issue #20): a visitor is a keyed hash of (address, User-Agent)
 * whose key belongs to one UTC day and is forgotten two days later, so the same person on two days is two
 * unrelated values, and nobody, the operator included, can link them. The ledger answers which (link, visitor)
 * pairs of a day are seen for the first time; the drain marks those clicks as first visits, and summing first
 * visits over any set of rollup cells gives their unique visitors.
 *
 * Adapters: memory (tests), SQLite (the embedded writer thread), Redis (standalone and Cluster), one contract
 * suite (test/contract/visitors.contract.ts).
 */
export interface VisitorLedger {
  /**
   * The secret of the UTC day starting at `day` (epoch ms): random, made on the first ask and the same for
   * every process that asks after; forgotten after two days.
   */
  visitorKey(day: number): Promise<string>;
  /** For each pair (`<linkId> <visitor>`, any opaque text) of `day`: whether this is its first sighting. */
  firstVisits(day: number, pairs: readonly string[]): Promise<boolean[]>;
  /** Un-sees pairs whose clicks could not be written, so the retry counts them as first visits again. */
  forgetVisits(day: number, pairs: readonly string[]): Promise<void>;
}

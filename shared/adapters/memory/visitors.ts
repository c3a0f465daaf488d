/** The VisitorLedger in process memory (tests, and anything that runs in one process): a set of pairs per day. */
import type { VisitorLedger } from "../../ports.ts";

const DAY_MS = 86_400_000;
/** Days older than this before the newest day asked about are forgotten, keys and pairs (two days, see the port). */
const KEEP_MS = 2 * DAY_MS;

export class MemoryVisitorLedger implements VisitorLedger {
  private readonly keys = new Map<number, string>();
  private readonly seen = new Map<number, Set<string>>();

  async visitorKey(day: number): Promise<string> {
    let key = this.keys.get(day);
    if (key === undefined) {
      this.forgetBefore(day - KEEP_MS);
      key = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
      this.keys.set(day, key);
    }
    return key;
  }

  async firstVisits(day: number, pairs: readonly string[]): Promise<boolean[]> {
    let set = this.seen.get(day);
    if (set === undefined) this.seen.set(day, (set = new Set()));
    return pairs.map((p) => set.size !== set.add(p).size);
  }

  async forgetVisits(day: number, pairs: readonly string[]): Promise<void> {
    const set = this.seen.get(day);
    if (set) for (const p of pairs) set.delete(p);
  }

  private forgetBefore(day: number): void {
    for (const d of this.keys.keys()) if (d < day) this.keys.delete(d);
    for (const d of this.seen.keys()) if (d < day) this.seen.delete(d);
  }
}

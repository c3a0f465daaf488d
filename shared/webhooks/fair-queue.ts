/**
 * The webhook sender's waiting room: one queue per account, served round-robin, so one account's burst waits
 * behind itself and never in front of another account's deliveries. What may start is bounded three ways:
 * - `concurrency`: in flight in all (the sender's global cap);
 * - `perAccount`: in flight for one account, so an account whose endpoints hang holds at most this many slots;
 * - `perHost`: in flight to one host, so many accounts pointing at one hanging host cannot take every slot
 *   (and a receiver shared by many accounts is not hit with all of them at once).
 * Queues are bounded too: an account's own (`accountQueue`) and all of them together (`totalQueue`); over either,
 * the oldest waiting item of the account holding the most is dropped (and returned, to be counted).
 * An item's host is asked for (`hostOf`) only when it may start, so push() costs the caller a lookup and a push.
 */

export interface FairItem {
  readonly accountId: string;
}

export interface FairLimits {
  concurrency: number;
  perAccount: number;
  perHost: number;
  accountQueue: number;
  totalQueue: number;
}

interface AccountQueue<T> {
  readonly id: string;
  items: (T | undefined)[];
  /** Index of the next item; avoids O(n) shift(). */
  head: number;
  inFlight: number;
}

const waiting = (q: AccountQueue<unknown>) => q.items.length - q.head;

/** Takes the account's oldest waiting item, compacting the array now and then. */
function shiftItem<T>(q: AccountQueue<T>): T {
  const item = q.items[q.head]!;
  q.items[q.head++] = undefined;
  if (q.head === q.items.length) {
    q.items = [];
    q.head = 0;
  } else if (q.head >= 1024 && q.head * 2 >= q.items.length) {
    q.items = q.items.slice(q.head);
    q.head = 0;
  }
  return item;
}

export class FairQueue<T extends FairItem> {
  private readonly accounts = new Map<string, AccountQueue<T>>();
  /** Accounts with items waiting, in round-robin order; `cursor` is whose turn comes next. */
  private ring: AccountQueue<T>[] = [];
  private cursor = 0;
  private readonly hostsInFlight = new Map<string, number>();
  private queuedCount = 0;
  private inFlightCount = 0;

  /** `hostOf`: what `perHost` counts, the destination's host and port. */
  constructor(
    private readonly limits: FairLimits,
    private readonly hostOf: (item: T) => string,
  ) {}

  get queued(): number {
    return this.queuedCount;
  }

  get inFlight(): number {
    return this.inFlightCount;
  }

  /** Queues `item`; returns the item dropped to make room, if any (the oldest of the fullest queue). */
  push(item: T): T | undefined {
    let q = this.accounts.get(item.accountId);
    if (!q) {
      q = { id: item.accountId, items: [], head: 0, inFlight: 0 };
      this.accounts.set(item.accountId, q);
    }
    let dropped: T | undefined;
    if (waiting(q) >= this.limits.accountQueue) dropped = this.dropOldest(q);
    else if (this.queuedCount >= this.limits.totalQueue) dropped = this.dropOldest(this.fullest(q));
    if (waiting(q) === 0) this.ring.push(q);
    q.items.push(item);
    this.queuedCount++;
    return dropped;
  }

  /**
   * The next item allowed to start, taking accounts in turn (an account at its cap, or whose next item's host
   * is at its cap, lets the next account go), counted in flight until finish(); undefined when none may start.
   */
  take(): T | undefined {
    if (this.inFlightCount >= this.limits.concurrency) return undefined;
    for (let tried = 0; tried < this.ring.length; tried++) {
      const at = (this.cursor + tried) % this.ring.length;
      const q = this.ring[at]!;
      if (q.inFlight >= this.limits.perAccount) continue;
      const host = this.hostOf(q.items[q.head]!);
      if ((this.hostsInFlight.get(host) ?? 0) >= this.limits.perHost) continue;
      const item = shiftItem(q);
      this.queuedCount--;
      q.inFlight++;
      this.inFlightCount++;
      this.hostsInFlight.set(host, (this.hostsInFlight.get(host) ?? 0) + 1);
      if (waiting(q) === 0) {
        this.ring.splice(at, 1);
        this.cursor = this.ring.length === 0 ? 0 : at % this.ring.length;
      } else {
        this.cursor = (at + 1) % this.ring.length;
      }
      return item;
    }
    return undefined;
  }

  /** An item take() returned is done: its slots are free again. */
  finish(item: T): void {
    this.inFlightCount--;
    const q = this.accounts.get(item.accountId)!;
    q.inFlight--;
    const host = this.hostOf(item);
    const n = this.hostsInFlight.get(host)! - 1;
    if (n === 0) this.hostsInFlight.delete(host);
    else this.hostsInFlight.set(host, n);
    if (q.inFlight === 0 && waiting(q) === 0) this.accounts.delete(q.id);
  }

  private dropOldest(q: AccountQueue<T>): T {
    const item = shiftItem(q);
    this.queuedCount--;
    if (waiting(q) === 0) this.removeFromRing(q);
    return item;
  }

  /** The account with the most waiting (`q`, the one pushing, when it has as many). Runs only when all queues are full. */
  private fullest(q: AccountQueue<T>): AccountQueue<T> {
    let best = q;
    for (const other of this.ring) if (waiting(other) > waiting(best)) best = other;
    return best;
  }

  private removeFromRing(q: AccountQueue<T>): void {
    const at = this.ring.indexOf(q);
    if (at < 0) return;
    this.ring.splice(at, 1);
    if (at < this.cursor) this.cursor--;
    if (this.cursor >= this.ring.length) this.cursor = 0;
  }
}

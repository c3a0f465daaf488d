/** The webhook sender's fair queue: accounts in turn, the three in-flight caps, and which item a full queue drops. */
import { describe, expect, test } from "bun:test";
import { FairQueue, type FairLimits } from "../../shared/webhooks/fair-queue.ts";

interface Item {
  accountId: string;
  host: string;
  name: string;
}

const LOOSE: FairLimits = { concurrency: 100, perAccount: 100, perHost: 100, accountQueue: 1000, totalQueue: 10_000 };

function queue(limits: Partial<FairLimits> = {}) {
  return new FairQueue<Item>({ ...LOOSE, ...limits }, (it) => it.host);
}

/** `n` items of `account`, named a0, a1, … after the account's first letter. */
function items(account: string, n: number, host = "hooks.test"): Item[] {
  return Array.from({ length: n }, (_, i) => ({ accountId: account, host, name: `${account[0]}${i}` }));
}

/** Takes until nothing may start; the names in the order taken. */
function takeAll(q: FairQueue<Item>): string[] {
  const taken: string[] = [];
  for (let it = q.take(); it; it = q.take()) taken.push(it.name);
  return taken;
}

describe("fair queue", () => {
  test("accounts take turns: a burst queued first does not go first", () => {
    const q = queue();
    for (const it of [...items("a", 5), ...items("b", 2), ...items("c", 1)]) q.push(it);
    expect(takeAll(q)).toEqual(["a0", "b0", "c0", "a1", "b1", "a2", "a3", "a4"]);
    expect(q.queued).toBe(0);
    expect(q.inFlight).toBe(8);
  });

  test("an account joining later takes its turn at the end of the round in progress", () => {
    const q = queue({ concurrency: 1 });
    for (const it of [...items("a", 4), ...items("c", 4)]) q.push(it);
    const first = q.take()!; // a0
    q.push(items("b", 1)[0]);
    q.finish(first);
    const order: string[] = [];
    for (let it = q.take(); it; it = q.take()) {
      order.push(it.name);
      q.finish(it);
    }
    expect(order).toEqual(["c0", "b0", "a1", "c1", "a2", "c2", "a3", "c3"]); // the round a0, c0, b0
  });

  test("at most `concurrency` in flight; finish() frees a slot", () => {
    const q = queue({ concurrency: 2 });
    for (const it of items("a", 3).concat(items("b", 3))) q.push(it);
    const started = [q.take()!, q.take()!];
    expect(q.take()).toBeUndefined();
    q.finish(started[0]);
    expect(q.take()).toBeDefined();
    expect(q.inFlight).toBe(2);
    expect(q.queued).toBe(3);
  });

  test("an account at `perAccount` waits while others go", () => {
    const q = queue({ perAccount: 2 });
    for (const it of items("a", 10).concat(items("b", 3))) q.push(it);
    expect(takeAll(q)).toEqual(["a0", "b0", "a1", "b1"]);
    expect(q.queued).toBe(9);
  });

  test("a host at `perHost` holds back items for it, whoever's they are, while other hosts go", () => {
    const q = queue({ perHost: 2 });
    for (const it of [...items("a", 3, "slow.test"), ...items("b", 3, "slow.test"), ...items("c", 2, "ok.test")]) q.push(it);
    expect(takeAll(q)).toEqual(["a0", "b0", "c0", "c1"]);
  });

  test("over the account's queue bound its oldest waiting item is dropped, and returned", () => {
    const q = queue({ concurrency: 1, accountQueue: 2 });
    const dropped = [...items("a", 4), ...items("b", 1)].map((it) => q.push(it)?.name);
    expect(dropped).toEqual([undefined, undefined, "a0", "a1", undefined]);
    expect(takeAll(q)).toEqual(["a2"]);
    expect(q.queued).toBe(2);
  });

  test("over the total bound the fullest account loses its oldest, not the one pushing", () => {
    const q = queue({ concurrency: 1, totalQueue: 4 });
    for (const it of items("a", 3)) q.push(it);
    q.push(items("b", 1)[0]);
    expect(q.push({ accountId: "c", host: "hooks.test", name: "c0" })?.name).toBe("a0");
    const first = q.take()!;
    const order = [first.name];
    q.finish(first);
    for (let it = q.take(); it; it = q.take()) {
      order.push(it.name);
      q.finish(it);
    }
    expect(order.sort()).toEqual(["a1", "a2", "b0", "c0"]);
  });

  test("an account that is done leaves no trace: counts return to zero", () => {
    const q = queue();
    for (const it of items("a", 3)) q.push(it);
    for (const it of takeAll(q).map((name) => ({ accountId: "a", host: "hooks.test", name }))) q.finish(it);
    expect([q.queued, q.inFlight]).toEqual([0, 0]);
    q.push(items("a", 1)[0]);
    expect(takeAll(q)).toEqual(["a0"]);
  });
});

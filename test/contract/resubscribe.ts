/**
 * Shared by the single-node and Cluster Redis tests: a HotState whose pub/sub connection is dropped reports the
 * restored subscription (onResubscribed), and invalidations published afterwards still arrive.
 */
import { expect } from "bun:test";
import type { Redis } from "ioredis";
import type { HotStateLifecycle, LinkCache } from "../../shared/ports.ts";

export async function waitUntil(check: () => Promise<boolean>, ms = 5_000) {
  const deadline = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`not within ${ms} ms`);
    await Bun.sleep(20);
  }
}

/** Drops the pub/sub connections through `admins` (one per node); returns how often onResubscribed fired. */
export async function dropSubscriberAndRecover(h: LinkCache & HotStateLifecycle, admins: Redis[]): Promise<number> {
  const invalidated: string[] = [];
  let resubscribed = 0;
  h.onLinkInvalidated((key) => invalidated.push(key));
  h.onResubscribed(() => resubscribed++);
  await waitUntil(() => h.ping().then(() => true, () => false));
  await h.invalidateLink("d/before");
  await waitUntil(async () => invalidated.includes("d/before"));
  expect(resubscribed).toBe(0); // the first connection is not a reconnect

  // Messages published while the connection is down are lost: that is what the callback reports.
  let killed = 0;
  for (const a of admins) killed += Number(await a.call("CLIENT", "KILL", "TYPE", "pubsub"));
  expect(killed).toBeGreaterThan(0);
  await waitUntil(async () => resubscribed >= 1);
  await h.invalidateLink("d/after");
  await waitUntil(async () => invalidated.includes("d/after"));
  return resubscribed;
}

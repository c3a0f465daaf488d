/**
 * The maxHits step (redirector/hit-policy.ts) through the fetch handler: counted redirects take a hit, answers that
 * are not clicks only look at the count, counters shared by several redirectors, started from the store, taken on
 * a remote (asynchronous) counter, a counter that fails, and hits reserved in the store by the block, so a counter
 * lost in a crash never serves past the limit.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createRedirector } from "../../redirector/handler.ts";
import { hitBlock, hitLedger } from "../../redirector/hit-policy.ts";
import { MemoryHotState } from "../../shared/adapters/memory/hot-state.ts";
import { DIMENSION_NAMES, type ClickDims } from "../../shared/clicks/dimensions.ts";
import type { HotState } from "../../shared/ports.ts";
import type { RedirectorDeps } from "../../redirector/handler.ts";
import { expectPage, expectRedirect, socketFrom, startRedirector, UA, type RedirectorHarness } from "./redirector-harness.ts";

/** The same HotState without its synchronous hit counter, as a remote (Redis) one is. */
function remote(hot: HotState): HotState {
  return new Proxy(hot, {
    get: (t, prop) => (prop === "takeHitSync" ? undefined : (Reflect.get(t, prop) as unknown)),
  });
}

/** A HotState whose hit counter cannot be reached (Redis down), everything else working. */
function countersDown(hot: HotState): HotState {
  const down = () => Promise.reject(new Error("counter unreachable"));
  return new Proxy(hot, {
    get: (t, prop) => (prop === "takeHitSync" ? undefined : prop === "takeHit" || prop === "peekHits" ? down : (Reflect.get(t, prop) as unknown)),
  });
}

let h: RedirectorHarness;
beforeAll(async () => {
  h = await startRedirector();
});
afterAll(() => h?.close());

const idOf = async (slug: string) => (await h.cp.deps.store.getLink(h.cp.deps.config.defaultDomain, slug))!.id;
const counter = async (slug: string) => h.cp.deps.hot.peekHits(await idOf(slug));

/** A second redirector on the same HotState and store, as another process in scale mode (or the same one restarted). */
function secondRedirector(wrap: (hot: HotState) => HotState = (x) => x, store: RedirectorDeps["store"] = h.cp.deps.store) {
  const { config, hot } = h.cp.deps;
  const r = createRedirector({ config, hot: wrap(hot), store, now: h.cp.clock.now, countryLookup: null, webhooks: { send() {}, drain: async () => {}, pending: () => 0 } });
  return (slug: string, method = "GET", ua = UA.desktop) => r.fetch(new Request(`http://clink.test/${slug}`, { method, headers: { "user-agent": ua } }), socketFrom("127.0.0.1"));
}

describe("counted redirects take a hit", () => {
  test("maxHits 3: three redirects, then 410; the counter stops at 3", async () => {
    const slug = await h.createLink({ url: "https://example.com/three", maxHits: 3 });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await h.visit(slug)).status);
    expect(statuses).toEqual([302, 302, 302, 410, 410]);
    expect(await counter(slug)).toBe(3);
  });

  test("on a remote counter, 30 concurrent requests for maxHits 10 get exactly 10 redirects", async () => {
    const slug = await h.createLink({ url: "https://example.com/remote", maxHits: 10 });
    const visit = secondRedirector(remote);
    const answers = await Promise.all(Array.from({ length: 30 }, () => visit(slug)));
    expect(answers.filter((r) => r.status === 302)).toHaveLength(10);
    expect(answers.filter((r) => r.status === 410)).toHaveLength(20);
  });

  test("a counter not yet in HotState starts from the hits the store recorded (after a restart)", async () => {
    const slug = await h.createLink({ url: "https://example.com/seeded", maxHits: 3 });
    const linkId = await idOf(slug);
    const dims = { ...(Object.fromEntries(DIMENSION_NAMES.map((d) => [d, null])) as ClickDims), device: "desktop", via: "link" };
    const click = { linkId, ts: h.cp.clock.now(), dims, bot: false, firstVisit: true, referrerUrl: null };
    await h.cp.deps.store.recordClicks([{ ...click, batch: "b1" }, { ...click, batch: "b1" }]);
    expect((await h.cp.deps.store.getLinkById(linkId))!.hits).toBe(2);
    expect(await counter(slug)).toBeNull();
    expectRedirect(await h.visit(slug), "https://example.com/seeded");
    expectPage(await h.visit(slug), 410);
  });

  test("a counter that cannot be reached makes the redirect 503, not an uncounted click", async () => {
    const slug = await h.createLink({ url: "https://example.com/down", maxHits: 3 });
    const res = await secondRedirector(countersDown)(slug);
    expect([res.status, res.headers.get("retry-after")]).toEqual([503, "1"]);
    expect(await counter(slug)).toBeNull();
  });
});

describe("answers that are not clicks only look at the count", () => {
  test("HEAD and the crawler card take no hit below the limit", async () => {
    const slug = await h.createLink({ url: "https://example.com/look", maxHits: 2, serveOg: true });
    expectRedirect(await h.visit(slug), "https://example.com/look");
    expectRedirect(await h.visit(slug, { method: "HEAD" }), "https://example.com/look");
    expect((await h.visit(slug, { headers: { "user-agent": UA.facebook } })).status).toBe(200);
    expect(await counter(slug)).toBe(1);
  });

  test("once another redirector served the last click, HEAD, the crawler card and the password form answer 410 here", async () => {
    const plain = await h.createLink({ url: "https://example.com/shared", maxHits: 1, serveOg: true });
    const locked = await h.createLink({ url: "https://example.com/shared-pw", maxHits: 1, password: "pw-of-shared" });
    // This redirector has seen both links below their limit...
    expectRedirect(await h.visit(plain, { method: "HEAD" }), "https://example.com/shared");
    expectPage(await h.visit(locked), 401);
    // ...then the other one serves their last clicks.
    const other = secondRedirector();
    expect((await other(plain)).status).toBe(302);
    await h.cp.deps.hot.takeHit(await idOf(locked), 1, hitLedger(h.cp.deps.store, await idOf(locked), 1));
    expectPage(await h.visit(plain, { method: "HEAD" }), 410);
    expectPage(await h.visit(plain, { headers: { "user-agent": UA.facebook } }), 410);
    expectPage(await h.visit(locked), 410);
  });

  test("a counter that cannot be reached makes HEAD on a maxHits link 503", async () => {
    const slug = await h.createLink({ url: "https://example.com/head-down", maxHits: 3 });
    expect((await secondRedirector(countersDown)(slug, "HEAD")).status).toBe(503);
  });

  test("links without maxHits never ask for a count", async () => {
    const slug = await h.createLink({ url: "https://example.com/free" });
    const visit = secondRedirector(countersDown);
    for (const method of ["GET", "HEAD"]) expectRedirect(await visit(slug, method), "https://example.com/free");
  });
});

describe("hits are reserved in the store before they are served", () => {
  /** The store as the redirector sees it, with its reservations counted. */
  function countingReservations(real: RedirectorDeps["store"]) {
    const calls = { reserveHits: 0 };
    const store = new Proxy(real, {
      get(t, prop) {
        const value = Reflect.get(t, prop) as unknown;
        if (prop !== "reserveHits" || typeof value !== "function") return value;
        return (...args: unknown[]) => (calls.reserveHits++, (value as (...a: unknown[]) => unknown).apply(t, args));
      },
    });
    return { store, calls };
  }

  test("one store write per block: the clicks within a block are answered synchronously", async () => {
    const slug = await h.createLink({ url: "https://example.com/blocks", maxHits: 1_000 });
    const { store, calls } = countingReservations(h.cp.deps.store);
    const visit = secondRedirector(undefined, store);
    const block = hitBlock(1_000);
    expect((await visit(slug)).status).toBe(302); // starts the counter: the first block is reserved
    const within = Array.from({ length: block - 1 }, () => visit(slug));
    expect(within.every((r) => r instanceof Response && r.status === 302)).toBe(true);
    expect((await visit(slug)).status).toBe(302); // the next block
    expect(calls.reserveHits).toBe(2);
    expect((await h.cp.deps.store.storedHits(await idOf(slug)))!.reserved).toBe(2 * block);
  });

  test("a counter lost with its clicks (a crash) starts again above every hit reserved: never over the limit, at most a block under", async () => {
    const slug = await h.createLink({ url: "https://example.com/crashed", maxHits: 40 });
    for (let i = 0; i < 5; i++) expectRedirect(await h.visit(slug), "https://example.com/crashed");
    // As after SIGKILL: the counter is gone and the 5 clicks were never recorded.
    await h.cp.deps.hot.resetHits(await idOf(slug));
    expect((await h.cp.deps.store.getLinkById(await idOf(slug)))!.hits).toBe(0);
    const restarted = secondRedirector();
    let served = 5;
    while ((await restarted(slug)).status === 302) served++;
    expect(served).toBeLessThanOrEqual(40);
    expect(served).toBeGreaterThanOrEqual(40 - hitBlock(40));
  });

  test("after a crash at the limit, HEAD answers 410 from the reservation, not the recorded hits", async () => {
    const slug = await h.createLink({ url: "https://example.com/crashed-head", maxHits: 3 });
    for (let i = 0; i < 3; i++) expectRedirect(await h.visit(slug), "https://example.com/crashed-head");
    await h.cp.deps.hot.resetHits(await idOf(slug));
    expectPage(await secondRedirector()(slug, "HEAD"), 410);
  });

  test("a graceful stop gives back the hits reserved and not served: the next process resumes exactly", async () => {
    const slug = await h.createLink({ url: "https://example.com/graceful", maxHits: 100 });
    const id = await idOf(slug);
    const hot = new MemoryHotState(h.cp.clock.now);
    const ledger = hitLedger(h.cp.deps.store, id, 100);
    for (let i = 0; i < 6; i++) await hot.takeHit(id, 100, ledger);
    expect((await h.cp.deps.store.storedHits(id))!.reserved).toBe(hitBlock(100));
    await hot.close();
    expect((await h.cp.deps.store.storedHits(id))!.reserved).toBe(6);
    expect(await hitLedger(h.cp.deps.store, id, 100).start()).toEqual({ count: 6, reserved: 6 });
  });
});

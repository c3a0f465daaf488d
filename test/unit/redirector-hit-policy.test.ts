/**
 * The maxHits step (redirector/hit-policy.ts) through the fetch handler: counted redirects take a hit, answers that
 * are not clicks only look at the count, counters shared by several redirectors, seeded from the store, taken on
 * a remote (asynchronous) counter, and a counter that fails.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createRedirector } from "../../redirector/handler.ts";
import type { HotState } from "../../shared/ports.ts";
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

/** A second redirector on the same HotState and store, as another process in scale mode. */
function secondRedirector(wrap: (hot: HotState) => HotState = (x) => x) {
  const { config, hot, store } = h.cp.deps;
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
    const click = { linkId, ts: h.cp.clock.now(), country: null, device: "desktop", browser: "Chrome", os: "Windows", referrer: null, variant: null };
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
    await h.cp.deps.hot.takeHit(await idOf(locked), 1, async () => 0);
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

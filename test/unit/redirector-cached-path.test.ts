/**
 * The hot path's promise: a link the redirector has cached is answered without awaiting anything and without
 * touching the store, a maxHits link included once its in-process counter is seeded (embedded mode).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { RedirectorDeps } from "../../redirector/handler.ts";
import { expectRedirect, startRedirector, type RedirectorHarness } from "./redirector-harness.ts";

/** The store as the redirector sees it: every call counted; once `failing`, every call throws. */
const storeCalls: string[] = [];
let failing = false;
function watched(real: RedirectorDeps["store"]): RedirectorDeps["store"] {
  return new Proxy(real, {
    get(t, prop) {
      const value = Reflect.get(t, prop) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        storeCalls.push(String(prop));
        if (failing) throw new Error(`store touched: ${String(prop)}`);
        return (value as (...a: unknown[]) => unknown).apply(t, args);
      };
    },
  });
}

let h: RedirectorHarness;
beforeAll(async () => {
  h = await startRedirector({ store: watched });
  // The verified custom domains are read once at start (and on a change), never per request.
  await h.redirector.domains.ready;
  storeCalls.length = 0;
});
afterAll(() => h?.close());

test("a cached link is answered synchronously, with the store failing", async () => {
  const slug = await h.createLink({ url: "https://example.com/cached" });
  expectRedirect(await h.fetch(slug), "https://example.com/cached"); // first visit: read from HotState, then cached
  expect(storeCalls).toEqual([]);
  failing = true;
  try {
    for (const method of ["GET", "HEAD", "GET"]) {
      const res = h.fetch(slug, { method });
      expect(res).toBeInstanceOf(Response);
      expectRedirect(res as Response, "https://example.com/cached");
    }
  } finally {
    failing = false;
  }
  expect(storeCalls).toEqual([]);
  expect(await h.clicks()).toHaveLength(3);
});

test("a cached maxHits link is answered synchronously once its counter is seeded, up to and past its limit", async () => {
  const slug = await h.createLink({ url: "https://example.com/cached-limit", maxHits: 3 });
  expectRedirect(await h.fetch(slug), "https://example.com/cached-limit"); // starts the counter: its hits reserved in the store
  expect(storeCalls).toEqual(["storedHits", "reserveHits"]);
  failing = true;
  try {
    const answers = [h.fetch(slug), h.fetch(slug), h.fetch(slug)];
    for (const res of answers) expect(res).toBeInstanceOf(Response);
    expect(answers.map((r) => (r as Response).status)).toEqual([302, 302, 410]);
  } finally {
    failing = false;
  }
  expect(storeCalls).toEqual(["storedHits", "reserveHits"]);
});

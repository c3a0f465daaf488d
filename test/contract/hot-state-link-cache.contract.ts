/** The LinkCache contract (HotState role): run against every adapter by hot-state.contract.ts. */
import { describe, expect, test } from "bun:test";
import type { CompiledLink } from "../../shared/link.ts";
import type { HotStateLifecycle, LinkCache } from "../../shared/ports.ts";
import { instances, uid, within } from "./hot-state-harness.ts";

function compiled(id: string): CompiledLink {
  return {
    v: 1,
    id,
    accountId: "acc1",
    slug: `s-${id}`,
    target: "https://example.com/?utm_source=x",
    rawTarget: "https://example.com/",
    status: "active",
    expiresAt: null,
    startsAt: null,
    maxHits: 10,
    passwordHash: null,
    rules: [{ kind: "country", match: "DE", url: "https://example.de/" }],
    ab: [{ url: "https://a.example/", upTo: 0.5 }, { url: "https://b.example/", upTo: 1 }],
    needsCountry: true,
    needsDevice: false,
    webhookUrl: null,
    webhookSecret: null,
    og: { title: "T <b>", description: null, imageUrl: null },
    expiredUrl: null,
    updatedAt: 1_700_000_000_000,
  };
}

export function runLinkCacheContract(make: () => Promise<LinkCache & HotStateLifecycle>) {
  describe("link cache", () => {
    const instance = instances(make);

    test("an unknown key is not cached (undefined)", async () => {
      const h = await instance();
      expect(await h.getLink(`d/${uid()}`)).toBeUndefined();
    });

    test("setLink then getLink returns the compiled link, also to a second instance", async () => {
      const [a, b] = [await instance(), await instance()];
      const key = `d/${uid()}`;
      const link = compiled(uid());
      await a.setLink(key, link);
      expect(await a.getLink(key)).toEqual(link);
      expect(await b.getLink(key)).toEqual(link);
    });

    test("negative cache: null is stored as 'known unknown', distinct from a miss", async () => {
      const h = await instance();
      const key = `d/${uid()}`;
      await h.setLink(key, null);
      expect(await h.getLink(key)).toBeNull();
    });

    test("entries expire after their TTL, negative ones too", async () => {
      const h = await instance();
      const [pos, neg] = [`d/${uid()}`, `d/${uid()}`];
      await h.setLink(pos, compiled(uid()), 60);
      await h.setLink(neg, null, 60);
      expect(await h.getLink(pos)).toBeDefined();
      await Bun.sleep(120);
      expect(await h.getLink(pos)).toBeUndefined();
      expect(await h.getLink(neg)).toBeUndefined();
    });

    test("setLink overwrites the previous entry", async () => {
      const h = await instance();
      const key = `d/${uid()}`;
      await h.setLink(key, null);
      const link = compiled(uid());
      await h.setLink(key, link);
      expect(await h.getLink(key)).toEqual(link);
    });

    test("invalidateLink drops the entry and reaches a second instance's listener within 100 ms", async () => {
      const [a, b] = [await instance(), await instance()];
      const key = `d/${uid()}`;
      const heard: string[] = [];
      b.onLinkInvalidated((k) => heard.push(k));
      await b.ping(); // the listener's subscription is in place
      await a.setLink(key, compiled(uid()));
      const start = performance.now();
      await a.invalidateLink(key);
      await within(100 - (performance.now() - start), () => heard.includes(key));
      expect(await a.getLink(key)).toBeUndefined();
      expect(await b.getLink(key)).toBeUndefined();
    });

    test("publishLinks caches each link over what was there (a negative entry) and announces each key", async () => {
      const [a, b] = [await instance(), await instance()];
      const entries = Array.from({ length: 3 }, () => ({ key: `d/${uid()}`, link: compiled(uid()) }));
      const keys = entries.map((e) => e.key);
      const heard: string[] = [];
      b.onLinkInvalidated((k) => keys.includes(k) && heard.push(k));
      await b.ping();
      await a.setLink(keys[0], null);
      await a.publishLinks(entries);
      await within(500, () => heard.length === keys.length);
      expect(heard.sort()).toEqual([...keys].sort());
      for (const { key, link } of entries) {
        expect(await a.getLink(key)).toEqual(link);
        expect(await b.getLink(key)).toEqual(link);
      }
      await a.publishLinks([]);
    });

    test("every invalidation listener is called, once per invalidation", async () => {
      const [a, b] = [await instance(), await instance()];
      const key = `d/${uid()}`;
      const first: string[] = [];
      const second: string[] = [];
      b.onLinkInvalidated((k) => k === key && first.push(k));
      b.onLinkInvalidated((k) => k === key && second.push(k));
      await b.ping();
      await a.invalidateLink(key);
      await a.invalidateLink(key);
      await within(500, () => first.length === 2 && second.length === 2);
      await Bun.sleep(30);
      expect([first.length, second.length]).toEqual([2, 2]);
    });
  });
}

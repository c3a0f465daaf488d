/** Store contract, links role (LinkStore): insert, read, update and delete. */
import { beforeAll, describe, expect, test } from "bun:test";
import { AppError } from "../../shared/errors.ts";
import type { Store } from "../../shared/ports.ts";
import { click, DOMAIN, fullLinkFor, HOUR, linkFor, rejectionOf, type StoreContext, T0, uid, uniqueSlug } from "./store-harness.ts";

export function runLinkContract(ctx: StoreContext): void {
  let store: Store;
  beforeAll(() => {
    store = ctx.store;
  });
  const { newAccount, insertOk, rawClicksOf } = ctx;

  describe("links: insert and read", () => {
    test("every field round-trips through insertLinks, getLink and getLinkById", async () => {
      const link = fullLinkFor(await newAccount());
      await insertOk([link]);
      expect(await store.getLink(link.domain, link.slug)).toEqual(link);
      expect(await store.getLinkById(link.id)).toEqual(link);
    });

    test("absent values round-trip as null and empty arrays", async () => {
      const link = linkFor(await newAccount());
      await insertOk([link]);
      expect(await store.getLinkById(link.id)).toEqual(link);
    });

    test("unknown links read as null", async () => {
      expect(await store.getLink(DOMAIN, uniqueSlug())).toBeNull();
      expect(await store.getLinkById(uid())).toBeNull();
    });

    test("slugs are case-sensitive", async () => {
      const accountId = await newAccount();
      const lower = linkFor(accountId, { slug: `promo${uid().slice(0, 8)}`, target: "https://lower.example.com/" });
      const upper = linkFor(accountId, { slug: lower.slug.toUpperCase(), target: "https://upper.example.com/" });
      await insertOk([lower, upper]);
      expect((await store.getLink(DOMAIN, lower.slug))?.target).toBe(lower.target);
      expect((await store.getLink(DOMAIN, upper.slug))?.target).toBe(upper.target);
      expect(await store.getLink(DOMAIN, `${lower.slug.slice(0, 1).toUpperCase()}${lower.slug.slice(1)}`)).toBeNull();
    });

    test("the same slug may exist once per domain", async () => {
      const accountId = await newAccount();
      const slug = uniqueSlug();
      const a = linkFor(accountId, { slug, domain: "a.example" });
      const b = linkFor(accountId, { slug, domain: "b.example" });
      await insertOk([a, b]);
      expect((await store.getLink("a.example", slug))?.id).toBe(a.id);
      expect((await store.getLink("b.example", slug))?.id).toBe(b.id);
    });

    test("insertLinks answers per row, in input order: a taken slug is false, within a batch the first wins", async () => {
      const accountId = await newAccount();
      const existing = linkFor(accountId);
      await insertOk([existing]);
      const dupSlug = uniqueSlug();
      const batch = [
        linkFor(accountId),
        linkFor(accountId, { slug: existing.slug, target: "https://loser.example.com/" }),
        linkFor(accountId, { slug: dupSlug, target: "https://first.example.com/", tags: ["first"] }),
        linkFor(accountId, { slug: dupSlug, target: "https://second.example.com/", tags: ["second"] }),
        linkFor(accountId),
      ];
      expect(await store.insertLinks(batch)).toEqual([true, false, true, false, true]);
      expect(await store.getLink(DOMAIN, existing.slug)).toEqual(existing);
      expect((await store.getLink(DOMAIN, dupSlug))?.target).toBe("https://first.example.com/");
      expect(await store.getLinkById(batch[1]!.id)).toBeNull();
      expect(await store.getLinkById(batch[3]!.id)).toBeNull();
      // The losers' tags were not written either.
      expect((await store.listLinks(accountId, { limit: 10, tag: "second" })).links).toEqual([]);
      expect((await store.listLinks(accountId, { limit: 10, tag: "first" })).links.map((l) => l.id)).toEqual([
        batch[2]!.id,
      ]);
    });

    test("insertLinks of nothing returns nothing", async () => {
      expect(await store.insertLinks([])).toEqual([]);
    });

    test("two concurrent inserts of the same slug: exactly one wins", async () => {
      const accountId = await newAccount();
      const slug = uniqueSlug();
      const results = await Promise.all(
        [1, 2, 3].map((n) => store.insertLinks([linkFor(accountId, { slug, target: `https://e${n}.example.com/` })])),
      );
      expect(results.flat().filter(Boolean)).toHaveLength(1);
    });

    test("500 links with tags go in with one call, quickly, and all read back", async () => {
      const accountId = await newAccount();
      const links = Array.from({ length: 500 }, (_, i) =>
        fullLinkFor(accountId, { createdAt: T0 + i, tags: i % 2 ? ["odd", `n${i}`] : ["even"] }),
      );
      const started = performance.now();
      await insertOk(links);
      const elapsed = performance.now() - started;
      expect(elapsed).toBeLessThan(3000);
      const odd = await store.listLinks(accountId, { limit: 500, tag: "odd" });
      expect(odd.links).toHaveLength(250);
      expect(odd.nextCursor).toBeNull();
      expect(await store.getLinkById(links[321]!.id)).toEqual(links[321]!);
    });
  });

  describe("links: update and delete", () => {
    test("updateLink writes every field except id, accountId, createdAt and hits", async () => {
      const accountId = await newAccount();
      const original = linkFor(accountId, { hits: 3, tags: ["old"], createdAt: T0 - HOUR });
      await insertOk([original]);
      const changed = fullLinkFor(await newAccount(), {
        id: original.id,
        slug: uniqueSlug("moved"),
        domain: "other.example",
        status: "archived",
        hits: 999,
        createdAt: T0 + 99 * HOUR,
        updatedAt: T0 + HOUR,
        tags: ["new", "newer"],
      });
      await store.updateLink(changed);
      const expected = { ...changed, accountId, createdAt: original.createdAt, hits: 3 };
      expect(await store.getLinkById(original.id)).toEqual(expected);
      expect(await store.getLink("other.example", changed.slug)).toEqual(expected);
      expect(await store.getLink(DOMAIN, original.slug)).toBeNull();
    });

    test("updateLink can clear every optional field", async () => {
      const full = fullLinkFor(await newAccount());
      await insertOk([full]);
      const cleared = linkFor(full.accountId, {
        id: full.id,
        slug: full.slug,
        createdAt: full.createdAt,
        hits: full.hits,
        updatedAt: T0 + HOUR,
      });
      await store.updateLink(cleared);
      expect(await store.getLinkById(full.id)).toEqual(cleared);
    });

    test("updateLink replaces the link's tags for filtering", async () => {
      const accountId = await newAccount();
      const link = linkFor(accountId, { tags: ["keep", "drop"] });
      await insertOk([link]);
      await store.updateLink({ ...link, tags: ["keep", "add"] });
      const ids = async (tag: string) => (await store.listLinks(accountId, { limit: 10, tag })).links.map((l) => l.id);
      expect(await ids("keep")).toEqual([link.id]);
      expect(await ids("add")).toEqual([link.id]);
      expect(await ids("drop")).toEqual([]);
      await store.updateLink({ ...link, tags: [] });
      expect(await ids("keep")).toEqual([]);
    });

    test("updateLink onto a slug already taken on that domain fails with slug_taken and changes nothing", async () => {
      const accountId = await newAccount();
      const a = linkFor(accountId);
      const b = linkFor(accountId);
      await insertOk([a, b]);
      const err = await rejectionOf(store.updateLink({ ...b, slug: a.slug, target: "https://changed.example.com/" }));
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe("slug_taken");
      expect(await store.getLinkById(b.id)).toEqual(b);
    });

    test("updateLink of an unknown id creates nothing", async () => {
      const ghost = linkFor(await newAccount(), { tags: ["ghost"] });
      expect(await store.updateLink(ghost)).toBe(false);
      expect(await store.getLinkById(ghost.id)).toBeNull();
    });

    test("updateLink with an expected version writes only over that version (compare and set on updatedAt)", async () => {
      const link = linkFor(await newAccount(), { tags: ["v1"], updatedAt: T0 });
      await insertOk([link]);
      const v2 = { ...link, folder: "second", tags: ["v2"], updatedAt: T0 + 1 };
      expect(await store.updateLink(v2, T0)).toBe(true);
      // A writer that read the first version loses: nothing of its write lands, tags included.
      expect(await store.updateLink({ ...link, target: "https://stale.example.com/", tags: ["stale"], updatedAt: T0 + 1 }, T0)).toBe(false);
      expect(await store.getLinkById(link.id)).toEqual(v2);
      expect((await store.listLinks(link.accountId, { limit: 10, tag: "stale" })).links).toEqual([]);
      expect(await store.updateLink({ ...v2, folder: "third", updatedAt: T0 + 2 }, T0 + 1)).toBe(true);
      expect((await store.getLinkById(link.id))?.folder).toBe("third");
      await store.deleteLink(link.id);
      expect(await store.updateLink({ ...v2, updatedAt: T0 + 3 }, T0 + 2)).toBe(false);
    });

    test("deleteLink removes the link with its tags, clicks and stats; the slug can be reused", async () => {
      const accountId = await newAccount();
      const link = linkFor(accountId, { tags: ["doomed"] });
      await insertOk([link]);
      const clicks = [click(link.id), click(link.id, { ts: T0 + 2 * HOUR })];
      await store.recordClicks(clicks);
      await store.deleteLink(link.id);

      expect(await store.getLinkById(link.id)).toBeNull();
      expect(await store.getLink(DOMAIN, link.slug)).toBeNull();
      expect((await store.listLinks(accountId, { limit: 10, tag: "doomed" })).links).toEqual([]);
      expect(await ctx.clicksOf(link.id)).toBe(0);
      await store.deleteLink(link.id); // deleting again is harmless

      const reborn = linkFor(accountId, { slug: link.slug });
      await insertOk([reborn]);
      // The raw clicks went too, and none of them passes to the new link.
      expect(await rawClicksOf(link.id)).toEqual([]);
      expect(await rawClicksOf(reborn.id)).toEqual([]);
      await store.recordClicks(clicks.map((c) => ({ ...c, batch: uid(), linkId: reborn.id }))); // a batch is recorded once
      expect((await store.getLinkById(reborn.id))?.hits).toBe(2);
      expect((await store.listLinks(accountId, { limit: 10, tag: "doomed" })).links).toEqual([]);
    });
  });
}

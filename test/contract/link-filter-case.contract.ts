/**
 * Store contract, links role (LinkStore): the tag and folder filters ignore case (a person typing "launch" finds
 * links tagged "Launch"), and listTagsAndFolders gives the account's own values for the dashboard's suggestions.
 * Letters here are ASCII: SQLite's lower() folds only those (the port says so).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import type { Store } from "../../shared/ports.ts";
import { linkFor, type StoreContext, T0 } from "./store-harness.ts";

export function runLinkFilterCaseContract(ctx: StoreContext): void {
  let store: Store;
  beforeAll(() => {
    store = ctx.store;
  });
  const { newAccount, insertOk } = ctx;

  describe("tag and folder filters ignore case", () => {
    test("a tag matches every spelling of the whole tag, newest first, only the account's", async () => {
      const accountId = await newAccount();
      const title = linkFor(accountId, { tags: ["Launch"], createdAt: T0 + 3 });
      const lower = linkFor(accountId, { tags: ["other", "launch"], createdAt: T0 + 2 });
      const upper = linkFor(accountId, { tags: ["LAUNCH"], createdAt: T0 + 1 });
      await insertOk([title, lower, upper, linkFor(accountId, { tags: ["launcher", "Lau"] })]);
      await insertOk([linkFor(await newAccount(), { tags: ["launch"] })]); // another account's
      const ids = async (tag: string) => (await store.listLinks(accountId, { limit: 10, tag })).links.map((l) => l.id);
      const all = [title.id, lower.id, upper.id];
      expect(await ids("launch")).toEqual(all);
      expect(await ids("LaUnCh")).toEqual(all);
      expect(await ids("launc")).toEqual([]); // whole tags only …
      expect(await ids("l_unch")).toEqual([]); // … and no wildcards
      expect(await ids("%")).toEqual([]);
      // The link keeps its tags as written.
      expect((await store.listLinks(accountId, { limit: 10, tag: "launch" })).links.map((l) => l.tags)).toEqual([["Launch"], ["other", "launch"], ["LAUNCH"]]);
    });

    test("a folder matches every spelling of the whole folder, and combines with the tag filter and pages", async () => {
      const accountId = await newAccount();
      const inFolder = ["Marketing", "marketing", "MARKETING"].map((folder, i) => linkFor(accountId, { folder, tags: ["x"], createdAt: T0 + 10 - i }));
      await insertOk([
        ...inFolder,
        linkFor(accountId, { folder: "Marketing/2030" }),
        linkFor(accountId, { folder: null }),
        linkFor(accountId, { folder: "marketing" }), // no tag x
      ]);
      await insertOk([linkFor(await newAccount(), { folder: "marketing", tags: ["x"] })]);
      const first = await store.listLinks(accountId, { limit: 2, folder: "mArKeTiNg", tag: "X" });
      const second = await store.listLinks(accountId, { limit: 2, folder: "mArKeTiNg", tag: "X", cursor: first.nextCursor! });
      expect([...first.links, ...second.links].map((l) => l.id)).toEqual(inFolder.map((l) => l.id));
      expect(second.nextCursor).toBeNull();
      expect((await store.listLinks(accountId, { limit: 10, folder: "marketing" })).links).toHaveLength(4);
      expect((await store.listLinks(accountId, { limit: 10, folder: "market" })).links).toEqual([]);
    });

    test("an updated link is found by its new tags in any case, no longer by its old ones", async () => {
      const accountId = await newAccount();
      const link = linkFor(accountId, { tags: ["Old"] });
      await insertOk([link]);
      expect(await store.updateLink({ ...link, tags: ["New"], updatedAt: link.updatedAt + 1 })).toBe(true);
      expect((await store.listLinks(accountId, { limit: 10, tag: "NEW" })).links.map((l) => l.id)).toEqual([link.id]);
      expect((await store.listLinks(accountId, { limit: 10, tag: "old" })).links).toEqual([]);
    });
  });

  describe("listTagsAndFolders", () => {
    test("the account's distinct tags and folders as written, sorted ignoring case, no nulls", async () => {
      const accountId = await newAccount();
      await insertOk([
        linkFor(accountId, { tags: ["beta", "Alpha"], folder: "Zeta" }),
        linkFor(accountId, { tags: ["alpha", "Gamma"], folder: "delta" }),
        linkFor(accountId, { tags: ["beta"], folder: "Zeta" }),
        linkFor(accountId, { tags: [], folder: null }),
      ]);
      await insertOk([linkFor(await newAccount(), { tags: ["secret"], folder: "Theirs" })]);
      expect(await store.listTagsAndFolders(accountId, 100)).toEqual({ tags: ["Alpha", "alpha", "beta", "Gamma"], folders: ["delta", "Zeta"] });
      expect(await store.listTagsAndFolders(await newAccount(), 100)).toEqual({ tags: [], folders: [] });
    });

    test("only the newest links are read: the work is bounded by recentLinks, not by the account's size", async () => {
      const accountId = await newAccount();
      await insertOk([
        linkFor(accountId, { tags: ["old-tag"], folder: "Old", createdAt: T0 }),
        linkFor(accountId, { tags: ["mid"], folder: "Mid", createdAt: T0 + 1 }),
        linkFor(accountId, { tags: ["new"], folder: null, createdAt: T0 + 2 }),
      ]);
      expect(await store.listTagsAndFolders(accountId, 2)).toEqual({ tags: ["mid", "new"], folders: ["Mid"] });
      expect(await store.listTagsAndFolders(accountId, 3)).toEqual({ tags: ["mid", "new", "old-tag"], folders: ["Mid", "Old"] });
    });

    test("a tag removed from the account's last link that had it is no longer suggested", async () => {
      const accountId = await newAccount();
      const link = linkFor(accountId, { tags: ["gone", "kept"], folder: "F" });
      await insertOk([link]);
      expect(await store.updateLink({ ...link, tags: ["kept"], folder: null, updatedAt: link.updatedAt + 1 })).toBe(true);
      expect(await store.listTagsAndFolders(accountId, 10)).toEqual({ tags: ["kept"], folders: [] });
    });
  });
}

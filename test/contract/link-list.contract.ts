/** Store contract, links role (LinkStore): listLinks, its filters and cursor pages. */
import { beforeAll, describe, expect, test } from "bun:test";
import { AppError } from "../../shared/errors.ts";
import type { Store } from "../../shared/ports.ts";
import { linkFor, rejectionOf, type StoreContext, T0, uid, uniqueSlug } from "./store-harness.ts";

export function runLinkListContract(ctx: StoreContext): void {
  let store: Store;
  beforeAll(() => {
    store = ctx.store;
  });
  const { newAccount, insertOk } = ctx;

  describe("listLinks", () => {
    test("newest first, id descending among equal creation times, only the account's links", async () => {
      const accountId = await newAccount();
      const other = await newAccount();
      const links = [
        linkFor(accountId, { createdAt: T0 + 1 }),
        linkFor(accountId, { createdAt: T0 + 3 }),
        linkFor(accountId, { createdAt: T0 + 2 }),
        linkFor(accountId, { createdAt: T0 + 2 }),
        linkFor(accountId, { createdAt: T0 + 2 }),
      ];
      await insertOk(links);
      await insertOk([linkFor(other, { createdAt: T0 + 10 })]);
      const expected = [...links]
        .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
        .map((l) => l.id);
      const page = await store.listLinks(accountId, { limit: 50 });
      expect(page.links.map((l) => l.id)).toEqual(expected);
      expect(page.nextCursor).toBeNull();
      expect(page.links[0]).toEqual(links[1]!);
      expect(await store.listLinks(uid(), { limit: 50 })).toEqual({ links: [], nextCursor: null });
    });

    test("cursor pages visit every link exactly once, in order, ending with a null cursor", async () => {
      const accountId = await newAccount();
      // Ties on createdAt straddle page boundaries, which is what the id tiebreak in the cursor is for.
      const links = Array.from({ length: 11 }, (_, i) => linkFor(accountId, { createdAt: T0 + Math.floor(i / 3) }));
      await insertOk(links);
      const all = (await store.listLinks(accountId, { limit: 500 })).links.map((l) => l.id);
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await store.listLinks(accountId, { limit: 3, cursor });
        expect(page.links.length).toBeLessThanOrEqual(3);
        seen.push(...page.links.map((l) => l.id));
        cursor = page.nextCursor ?? undefined;
        if (cursor !== undefined) expect(typeof page.nextCursor).toBe("string");
        pages++;
      } while (cursor !== undefined && pages < 20);
      expect(pages).toBe(4);
      expect(seen).toEqual(all);
      expect(new Set(seen).size).toBe(11);
    });

    test("when the last page is exactly full, its nextCursor is null", async () => {
      const accountId = await newAccount();
      await insertOk(Array.from({ length: 4 }, (_, i) => linkFor(accountId, { createdAt: T0 + i })));
      const first = await store.listLinks(accountId, { limit: 2 });
      expect(first.nextCursor).not.toBeNull();
      const second = await store.listLinks(accountId, { limit: 2, cursor: first.nextCursor! });
      expect(second.links).toHaveLength(2);
      expect(second.nextCursor).toBeNull();
    });

    test("an empty cursor string means the first page", async () => {
      const accountId = await newAccount();
      await insertOk([linkFor(accountId)]);
      expect((await store.listLinks(accountId, { limit: 5, cursor: "" })).links).toHaveLength(1);
    });

    test("a cursor that is not one we issued is invalid input (400), never an internal error", async () => {
      const accountId = await newAccount();
      const b64 = (s: string) => Buffer.from(s).toString("base64url");
      const bad = [
        "garbage!",
        "bm90IGpzb24",
        b64("{}"),
        b64("[1]"),
        b64(`["x","y"]`),
        b64(`[1.5,"id"]`),
        b64(`[1,""]`),
        b64(`[1e300,"id"]`),
        "x".repeat(5000),
        "%00",
      ];
      for (const cursor of bad) {
        const err = await rejectionOf(store.listLinks(accountId, { limit: 5, cursor }));
        expect(err).toBeInstanceOf(AppError);
        expect((err as AppError).code).toBe("invalid_input");
        expect((err as AppError).status).toBe(400);
        expect((err as AppError).errors).toEqual([{ path: "/cursor", message: "invalid cursor" }]);
      }
    });

    test("tag filter matches whole tags (ignoring case: link-filter-case.contract.ts)", async () => {
      const accountId = await newAccount();
      const red = linkFor(accountId, { tags: ["red", "blue"], createdAt: T0 + 2 });
      const reddish = linkFor(accountId, { tags: ["reddish"], createdAt: T0 + 1 });
      const upper = linkFor(accountId, { tags: ["Red"] });
      await insertOk([red, reddish, upper]);
      await insertOk([linkFor(await newAccount(), { tags: ["red"] })]); // another account's
      const ids = async (tag: string) => (await store.listLinks(accountId, { limit: 10, tag })).links.map((l) => l.id);
      expect(await ids("red")).toEqual([red.id, upper.id]);
      expect(await ids("re")).toEqual([]);
      expect(await ids("%")).toEqual([]);
      expect(await ids("blue")).toEqual([red.id]);
    });

    test("folder and status filters match whole values, and combine with each other and with pagination", async () => {
      const accountId = await newAccount();
      const inFolder = [0, 1, 2, 3].map((i) =>
        linkFor(accountId, { folder: "Marketing", status: i === 3 ? "paused" : "active", createdAt: T0 + i }),
      );
      await insertOk([
        ...inFolder,
        linkFor(accountId, { folder: "Marketing/2030" }),
        linkFor(accountId, { folder: "Market" }),
        linkFor(accountId, { folder: null, status: "paused" }),
      ]);
      const ids = async (f: { folder?: string; status?: "active" | "paused" | "archived" }) =>
        (await store.listLinks(accountId, { limit: 10, ...f })).links.map((l) => l.id);
      expect(await ids({ folder: "Marketing" })).toEqual(inFolder.map((l) => l.id).reverse());
      expect(await ids({ folder: "Marketing", status: "paused" })).toEqual([inFolder[3]!.id]);
      expect(await ids({ status: "archived" })).toEqual([]);
      expect(await ids({ status: "paused" })).toHaveLength(2);

      const first = await store.listLinks(accountId, { limit: 2, folder: "Marketing", status: "active" });
      const second = await store.listLinks(accountId, {
        limit: 2,
        folder: "Marketing",
        status: "active",
        cursor: first.nextCursor!,
      });
      expect([...first.links, ...second.links].map((l) => l.id)).toEqual([2, 1, 0].map((i) => inFolder[i]!.id));
      expect(second.nextCursor).toBeNull();
    });

    test("domain filter: the links on one domain, the same slug on another left out; combines with pages", async () => {
      const accountId = await newAccount();
      const slug = uniqueSlug("dom");
      const onCustom = [linkFor(accountId, { domain: "go.brand.example", slug, createdAt: T0 + 1 }), linkFor(accountId, { domain: "go.brand.example", createdAt: T0 + 2 })];
      const onBase = linkFor(accountId, { slug, createdAt: T0 + 3 });
      await insertOk([...onCustom, onBase, linkFor(accountId, { domain: "go.brand.example.net" })]);
      await insertOk([linkFor(await newAccount(), { domain: "go.brand.example" })]);
      const ids = async (f: { domain?: string; limit?: number; cursor?: string }) => store.listLinks(accountId, { limit: 10, ...f });
      expect((await ids({ domain: "go.brand.example" })).links.map((l) => l.id)).toEqual([onCustom[1]!.id, onCustom[0]!.id]);
      expect((await ids({ domain: onBase.domain })).links.map((l) => l.id)).toEqual([onBase.id]);
      expect((await ids({ domain: "GO.brand.example" })).links).toEqual([]);
      const first = await ids({ domain: "go.brand.example", limit: 1 });
      expect((await ids({ domain: "go.brand.example", limit: 1, cursor: first.nextCursor! })).links.map((l) => l.id)).toEqual([onCustom[0]!.id]);
      expect(await store.countLinks(accountId, { domain: "go.brand.example" })).toBe(2);
    });

    test("q searches slug and target, ignoring letter case", async () => {
      const accountId = await newAccount();
      const bySlug = linkFor(accountId, { slug: uniqueSlug("SummerSale"), createdAt: T0 + 2 });
      const byTarget = linkFor(accountId, { target: "https://shop.example.com/SUMMER-sale", createdAt: T0 + 1 });
      const neither = linkFor(accountId, { target: "https://winter.example.com/" });
      await insertOk([bySlug, byTarget, neither]);
      await insertOk([linkFor(await newAccount(), { slug: uniqueSlug("summersale") })]); // another account's
      const ids = async (q: string) => (await store.listLinks(accountId, { limit: 10, q })).links.map((l) => l.id);
      expect(await ids("summersale")).toEqual([bySlug.id]);
      expect(await ids("SUMMER")).toEqual([bySlug.id, byTarget.id]);
      expect(await ids("shop.EXAMPLE")).toEqual([byTarget.id]);
      expect(await ids("autumn")).toEqual([]);
      expect(await ids("")).toHaveLength(3); // empty search: no filter
    });

    test("q takes LIKE wildcards (% and _) and backslashes literally", async () => {
      const accountId = await newAccount();
      const underscore = linkFor(accountId, { slug: uniqueSlug("a_b"), createdAt: T0 + 3 });
      const plain = linkFor(accountId, { slug: uniqueSlug("axb"), createdAt: T0 + 2 });
      const percent = linkFor(accountId, { target: "https://example.com/?off=50%25&x=50%", createdAt: T0 + 1 });
      const backslash = linkFor(accountId, { target: "https://example.com/a\\b" });
      await insertOk([underscore, plain, percent, backslash]);
      const ids = async (q: string) => (await store.listLinks(accountId, { limit: 10, q })).links.map((l) => l.id);
      expect(await ids("_")).toEqual([underscore.id]);
      expect(await ids("a_b")).toEqual([underscore.id]);
      expect(await ids("50%")).toEqual([percent.id]);
      expect(await ids("%")).toEqual([percent.id]);
      expect(await ids("a\\b")).toEqual([backslash.id]);
    });

    test("countLinks counts what listLinks would list with the same filters, up to `max` when given", async () => {
      const accountId = await newAccount();
      await insertOk([
        ...Array.from({ length: 4 }, (_, i) => linkFor(accountId, { folder: "Sales", tags: ["Q1"], status: i === 0 ? "paused" : "active" })),
        linkFor(accountId, { folder: "sales", target: "https://shop.example.com/x" }),
        linkFor(accountId, { folder: null }),
      ]);
      await insertOk([linkFor(await newAccount(), { folder: "Sales" })]); // another account's
      const filters = [{}, { folder: "SALES" }, { folder: "Sales", status: "active" as const }, { tag: "q1" }, { q: "shop.EXAMPLE" }, { folder: "none" }];
      for (const f of filters) {
        const listed = (await store.listLinks(accountId, { limit: 500, ...f })).links.length;
        expect([f, await store.countLinks(accountId, f)]).toEqual([f, listed]);
      }
      expect(await store.countLinks(accountId, {})).toBe(6);
      expect(await store.countLinks(accountId, {}, 4)).toBe(4);
      expect(await store.countLinks(accountId, { folder: "Sales" }, 100)).toBe(5);
      expect(await store.countLinks(uid(), {})).toBe(0);
    });

    test("limit bounds the page", async () => {
      const accountId = await newAccount();
      await insertOk(Array.from({ length: 3 }, () => linkFor(accountId)));
      const page = await store.listLinks(accountId, { limit: 1 });
      expect(page.links).toHaveLength(1);
      expect(page.nextCursor).not.toBeNull();
    });
  });
}

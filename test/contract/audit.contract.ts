/**
 * The AuditStore contract, run against SQLite and Postgres (audit-sqlite/postgres.test.ts): entries come back newest
 * first (ties by id) with the actor's email, each filter and the page position narrow them, one workspace never sees
 * another's, and the retention prune deletes the oldest entries first, at most as many as asked.
 */
import { describe, expect, test } from "bun:test";
import type { AuditEntry, ListedAuditEntry, Store } from "../../shared/ports.ts";
import { storeContext, T0, uid } from "./store-harness.ts";

const YEAR = 365 * 86_400_000;

export function runAuditContract(name: string, make: () => Promise<Store>, cleanup?: () => Promise<void>) {
  describe(`AuditStore contract: ${name}`, () => {
    const ctx = storeContext(make, cleanup);
    const entry = (workspaceId: string, over: Partial<AuditEntry> = {}): AuditEntry => ({
      id: uid(), workspaceId, at: T0, actorAccountId: null, actorKeyId: null, actorGrantId: null, action: "link.created",
      targetType: "link", targetId: uid(), detail: {}, ...over,
    });
    const listed = (e: AuditEntry, actorEmail: string | null = null): ListedAuditEntry => ({ ...e, actorEmail });
    const ids = (entries: readonly { id: string }[]) => entries.map((e) => e.id);

    test("entries round-trip with the actor's email, newest first, ties by id; an empty append writes nothing", async () => {
      const account = await ctx.newAccount();
      const ws = uid();
      const [a, b, c] = [
        entry(ws, { id: `a${uid()}`, at: T0, actorAccountId: account, actorKeyId: "key1", detail: { slug: "launch", fields: ["target", "tags"] } }),
        entry(ws, { id: `b${uid()}`, at: T0 + 1, actorAccountId: uid(), actorGrantId: "grant1", action: "key.revoked", targetType: "key", targetId: "k1" }),
        entry(ws, { id: `c${uid()}`, at: T0 + 1, action: "session.signed_in", targetType: null, targetId: null, detail: { nested: { n: 1, ok: true }, text: "é \"quoted\"" } }),
      ];
      await ctx.store.appendAudit([a, b]);
      await ctx.store.appendAudit([c]);
      await ctx.store.appendAudit([]);
      // b's actor has no account any more (or never had): its email is unknown.
      expect(await ctx.store.listAudit(ws, { limit: 10 })).toEqual([listed(c), listed(b), listed(a, `${account}@example.com`)]);
    });

    test("each filter, and the page position, narrows the list; limit bounds it", async () => {
      const ws = uid();
      const alice = uid();
      const entries = Array.from({ length: 6 }, (_, i) =>
        entry(ws, { at: T0 + i * 1000, action: i % 2 ? "link.deleted" : "link.created", actorAccountId: i < 3 ? alice : null }),
      );
      await ctx.store.appendAudit(entries);
      const newestFirst = [...entries].reverse();
      expect(ids(await ctx.store.listAudit(ws, { limit: 10 }))).toEqual(ids(newestFirst));
      expect(ids(await ctx.store.listAudit(ws, { limit: 2 }))).toEqual(ids(newestFirst.slice(0, 2)));
      expect(ids(await ctx.store.listAudit(ws, { limit: 10, action: "link.deleted" }))).toEqual(ids(newestFirst.filter((e) => e.action === "link.deleted")));
      expect(ids(await ctx.store.listAudit(ws, { limit: 10, actorAccountId: alice }))).toEqual(ids(newestFirst.slice(3)));
      // from and to are inclusive.
      expect(ids(await ctx.store.listAudit(ws, { limit: 10, from: T0 + 2000, to: T0 + 4000 }))).toEqual(ids(newestFirst.slice(1, 4)));
      expect(ids(await ctx.store.listAudit(ws, { limit: 10, from: T0 + 2000, to: T0 + 4000, action: "link.created", actorAccountId: alice }))).toEqual([entries[2]!.id]);
      // A page continues strictly after the position of the last entry shown.
      const third = newestFirst[2]!;
      expect(ids(await ctx.store.listAudit(ws, { limit: 10, after: { at: third.at, id: third.id } }))).toEqual(ids(newestFirst.slice(3)));
      expect(ids(await ctx.store.listAudit(ws, { limit: 1, after: { at: third.at, id: third.id }, action: "link.created" }))).toEqual([entries[2]!.id]);
    });

    test("paging through entries at the same instant visits each once (the id breaks ties, compared byte by byte)", async () => {
      const ws = uid();
      // Upper and lower case ids at one instant: a collation that ignored case would order them differently.
      const entries = ["A1", "a1", "B2", "b2", "Z9", "z9", "09"].map((p) => entry(ws, { id: `${p}${uid()}` }));
      await ctx.store.appendAudit(entries);
      const seen: string[] = [];
      let after: { at: number; id: string } | undefined;
      for (;;) {
        const page = await ctx.store.listAudit(ws, { limit: 2, after });
        if (page.length === 0) break;
        seen.push(...ids(page));
        const last = page[page.length - 1]!;
        after = { at: last.at, id: last.id };
      }
      expect(seen).toEqual(ids(entries).sort((x, y) => (x < y ? 1 : x > y ? -1 : 0)));
    });

    test("a workspace sees only its own entries, whatever the filters", async () => {
      const mine = uid();
      const theirs = uid();
      const actor = uid();
      await ctx.store.appendAudit([entry(mine, { actorAccountId: actor }), entry(theirs, { actorAccountId: actor })]);
      const got = await ctx.store.listAudit(mine, { limit: 10, actorAccountId: actor, action: "link.created", from: 0, to: T0 });
      expect(got.map((e) => e.workspaceId)).toEqual([mine]);
      expect(await ctx.store.listAudit(uid(), { limit: 10 })).toEqual([]);
    });

    test("the prune deletes entries older than the bound, the oldest first, at most max at a time", async () => {
      // Far older than every other test's entries, so the prune's bound reaches only these.
      const ws = uid();
      const old = Array.from({ length: 5 }, (_, i) => entry(ws, { at: T0 - 10 * YEAR + i }));
      const kept = entry(ws, { at: T0 - 5 * YEAR });
      await ctx.store.appendAudit([...old, kept]);
      const bound = T0 - 5 * YEAR; // strictly older only: `kept` is at the bound
      expect(await ctx.store.pruneAudit(bound, 2)).toBe(2);
      expect(ids(await ctx.store.listAudit(ws, { limit: 10 }))).toEqual(ids([kept, ...old.slice(2).reverse()]));
      expect(await ctx.store.pruneAudit(bound, 10)).toBe(3);
      expect(await ctx.store.pruneAudit(bound, 10)).toBe(0);
      expect(ids(await ctx.store.listAudit(ws, { limit: 10 }))).toEqual([kept.id]);
    });
  });
}

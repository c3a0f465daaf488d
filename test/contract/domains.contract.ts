/**
 * The DomainStore contract, run against SQLite and Postgres (domains-sqlite/postgres.test.ts): a hostname is unique
 * across accounts, updates round-trip, the verified list is what redirectors serve, and deleting a domain with
 * links is refused, deletes them, or moves them (refused when a slug is taken on the target), all or nothing.
 */
import { describe, expect, test } from "bun:test";
import type { DomainRecord } from "../../shared/domain.ts";
import type { Store } from "../../shared/ports.ts";
import { linkFor, storeContext, T0, uid, uniqueSlug } from "./store-harness.ts";

export function runDomainContract(name: string, make: () => Promise<Store>, cleanup?: () => Promise<void>) {
  describe(`DomainStore contract: ${name}`, () => {
    const ctx = storeContext(make, cleanup);
    const host = () => `go${uid().slice(0, 8)}.example.com`;
    const domain = (accountId: string, over: Partial<DomainRecord> = {}): DomainRecord => ({
      id: uid(), accountId, hostname: host(), method: "dns", token: `clink-${uid()}`, state: "pending", checkedAt: null, checkOk: null,
      checkResult: null, verifiedAt: null, rootRedirect: null, notFoundRedirect: null, createdAt: T0, updatedAt: T0, ...over,
    });

    test("a hostname is taken once across every account; the second create writes nothing", async () => {
      const a = await ctx.newAccount();
      const b = await ctx.newAccount();
      const d = domain(a);
      expect(await ctx.store.createDomain(d)).toBe(true);
      expect(await ctx.store.createDomain(domain(b, { hostname: d.hostname }))).toBe(false);
      expect(await ctx.store.createDomain(domain(a, { hostname: d.hostname }))).toBe(false);
      expect(await ctx.store.listDomains(b)).toEqual([]);
      expect(await ctx.store.listDomains(a)).toEqual([d]);
      expect(await ctx.store.getDomain(d.id)).toEqual(d);
      expect(await ctx.store.getDomainByHostname(d.hostname)).toEqual(d);
      expect(await ctx.store.getDomainByHostname("nobody.example.com")).toBeNull();
    });

    test("an update round-trips every changeable field; only verified domains are served", async () => {
      const a = await ctx.newAccount();
      const d = domain(a, { createdAt: T0 - 1 });
      const other = domain(a, { createdAt: T0 });
      await ctx.store.createDomain(d);
      await ctx.store.createDomain(other);
      expect((await ctx.store.listVerifiedDomains()).some((v) => v.hostname === d.hostname)).toBe(false);
      const changed: DomainRecord = {
        ...d, method: "http", token: "t2", state: "verified", checkedAt: T0 + 5, checkOk: true, checkResult: "found the file",
        verifiedAt: T0 + 5, rootRedirect: "https://example.com/", notFoundRedirect: "https://example.com/404", updatedAt: T0 + 5,
      };
      expect(await ctx.store.updateDomain(changed, T0)).toBe(true);
      // Over a version that is no longer there: nothing written.
      expect(await ctx.store.updateDomain({ ...changed, rootRedirect: null, updatedAt: T0 + 9 }, T0)).toBe(false);
      expect(await ctx.store.getDomain(d.id)).toEqual(changed);
      expect(await ctx.store.listDomains(a)).toEqual([changed, other]);
      const served = await ctx.store.listVerifiedDomains();
      expect(served.filter((v) => v.hostname === d.hostname)).toEqual([{ hostname: d.hostname, rootRedirect: "https://example.com/", notFoundRedirect: "https://example.com/404" }]);
      expect(served.some((v) => v.hostname === other.hostname)).toBe(false);
      const failed = { ...changed, state: "pending" as const, checkOk: false, checkResult: "no TXT record", updatedAt: T0 + 6 };
      expect(await ctx.store.updateDomain(failed, T0 + 5)).toBe(true);
      expect(await ctx.store.getDomain(d.id)).toEqual(failed);
      expect(await ctx.store.updateDomain({ ...failed, id: uid() }, T0 + 6)).toBe(false);
    });

    test("deleting a domain with links: refused by default, deletes them, or moves them unless a slug is taken there", async () => {
      const a = await ctx.newAccount();
      const d = domain(a);
      await ctx.store.createDomain(d);
      const slug = uniqueSlug();
      const l1 = linkFor(a, { domain: d.hostname, slug });
      const l2 = linkFor(a, { domain: d.hostname });
      await ctx.store.insertLinks([l1, l2]);
      expect(await ctx.store.countDomainLinks(d.hostname)).toBe(2);
      expect(await ctx.store.deleteDomain(d.id, { kind: "refuse" })).toEqual({ ok: false, reason: "has_links", count: 2 });
      expect(await ctx.store.getDomain(d.id)).toEqual(d);

      const target = host();
      await ctx.store.insertLinks([linkFor(a, { domain: target, slug })]);
      expect(await ctx.store.deleteDomain(d.id, { kind: "move", toDomain: target })).toEqual({ ok: false, reason: "slug_conflict", count: 1 });
      expect(await ctx.store.countDomainLinks(d.hostname)).toBe(2);

      const free = host();
      const moved = await ctx.store.deleteDomain(d.id, { kind: "move", toDomain: free });
      expect(moved).toEqual({ ok: true, links: [l1, l2].map((l) => ({ id: l.id, slug: l.slug })).sort((x, y) => (x.id < y.id ? -1 : 1)) });
      expect(await ctx.store.getDomain(d.id)).toBeNull();
      expect((await ctx.store.getLink(free, slug))?.id).toBe(l1.id);
      expect(await ctx.store.getLink(d.hostname, slug)).toBeNull();

      const e = domain(a);
      await ctx.store.createDomain(e);
      const l3 = linkFor(a, { domain: e.hostname });
      await ctx.store.insertLinks([l3]);
      expect(await ctx.store.deleteDomain(e.id, { kind: "delete" })).toEqual({ ok: true, links: [{ id: l3.id, slug: l3.slug }] });
      expect(await ctx.store.getLinkById(l3.id)).toBeNull();
      expect(await ctx.store.countDomainLinks(e.hostname)).toBe(0);
      // The hostname is free again.
      expect(await ctx.store.createDomain(domain(await ctx.newAccount(), { hostname: e.hostname }))).toBe(true);
    });

    test("linkDomains (the start-up check of BASE_URL's host) leaves out custom domains, not unregistered hosts", async () => {
      const a = await ctx.newAccount();
      const d = domain(a);
      await ctx.store.createDomain(d);
      const stray = host();
      await ctx.store.insertLinks([linkFor(a, { domain: d.hostname }), linkFor(a, { domain: stray })]);
      const listed = await ctx.store.linkDomains();
      expect([listed.includes(d.hostname), listed.includes(stray)]).toEqual([false, true]);
    });

    test("export carries every domain after its account; import writes it once, and skips one without its account or whose hostname is taken", async () => {
      const a = await ctx.newAccount();
      const d = domain(a, { state: "verified", checkedAt: T0 + 1, checkOk: true, checkResult: "found", verifiedAt: T0 + 1, rootRedirect: "https://example.com/" });
      await ctx.store.createDomain(d);
      const records = [];
      for await (const r of ctx.store.exportAll()) records.push(r);
      const account = records.find((r) => r.type === "account" && r.data.id === a)!;
      expect(records).toContainEqual({ type: "domain", data: d });
      expect(records.findIndex((r) => r.type === "domain")).toBeGreaterThan(records.indexOf(account));

      // Gone from the store, then imported back: written as it was; again: skipped, and so are a domain whose account
      // is missing and another account's claim to the same hostname.
      await ctx.store.deleteDomain(d.id, { kind: "refuse" });
      const orphan = domain(uid());
      expect((await ctx.store.importRecords([account, { type: "domain", data: d }, { type: "domain", data: orphan }])).domain).toEqual({ inserted: 1, skipped: 1 });
      expect(await ctx.store.getDomain(d.id)).toEqual(d);
      expect(await ctx.store.getDomain(orphan.id)).toBeNull();
      const claim = domain(await ctx.newAccount(), { hostname: d.hostname });
      expect((await ctx.store.importRecords([{ type: "domain", data: d }, { type: "domain", data: claim }])).domain).toEqual({ inserted: 0, skipped: 2 });
      expect((await ctx.store.getDomainByHostname(d.hostname))?.id).toBe(d.id);
    });

    test("a domain without links is deleted whatever the disposal; a missing one is nothing to do", async () => {
      const a = await ctx.newAccount();
      const d = domain(a);
      await ctx.store.createDomain(d);
      expect(await ctx.store.deleteDomain(d.id, { kind: "refuse" })).toEqual({ ok: true, links: [] });
      expect(await ctx.store.listDomains(a)).toEqual([]);
      expect(await ctx.store.deleteDomain(d.id, { kind: "delete" })).toEqual({ ok: true, links: [] });
    });
  });
}

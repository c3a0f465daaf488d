/** Store contract, administration role (AdminStore): lifecycle, readiness, export and import. */
import { beforeAll, describe, expect, test } from "bun:test";
import type { ApiKeyRecord, ClickCellRecord, ExportRecord, Store } from "../../shared/ports.ts";
import { click, collect, DOMAIN, fullLinkFor, HOUR, linkFor, NO_DIMS, rejectionOf, type StoreContext, T0, uid } from "./store-harness.ts";

export function runAdminContract(ctx: StoreContext): void {
  let store: Store;
  beforeAll(() => {
    store = ctx.store;
  });
  const { open, newAccount, insertOk, clicksOf } = ctx;
  const cellsOf = (linkId: string) => collect(ctx.store.readCells({ linkId }, 0, Number.MAX_SAFE_INTEGER));

  describe("lifecycle", () => {
    test("migrate() again on a migrated database is a no-op", async () => {
      await store.migrate();
      await store.migrate();
      await store.ping();
    });

    test("two stores migrating the same database at the same time both succeed", async () => {
      const [a, b] = [await open(), await open()];
      await Promise.all([a.migrate(), b.migrate()]);
      await Promise.all([a.ping(), b.ping()]);
    });

    test("data written by one store is visible from another store on the same database", async () => {
      const accountId = await newAccount();
      const link = linkFor(accountId);
      await insertOk([link]);
      const other = await open();
      expect(await other.getAccount(accountId)).not.toBeNull();
      expect(await other.getLinkById(link.id)).toEqual(link);
    });

    test("ping() rejects once the store is closed", async () => {
      const s = await open();
      await s.ping();
      await s.close();
      expect(await rejectionOf(s.ping())).toBeInstanceOf(Error);
    });
  });

  describe("operations: readiness, export and import", () => {
    /** Everything exportAll yields, in order. */
    async function exportAll(s: Store = store): Promise<ExportRecord[]> {
      const out: ExportRecord[] = [];
      for await (const r of s.exportAll()) out.push(r);
      return out;
    }

    /** An account, one of its keys, a link with every field and clicks in two hours, one of them unknown. */
    async function populated() {
      const accountId = await newAccount();
      const key: ApiKeyRecord = {
        id: uid(), accountId, createdBy: accountId, name: "export", keyHash: `hash-${uid()}`, prefix: "ck_Exp0", createdAt: T0,
        lastUsedAt: T0 + 5, revokedAt: null, scopes: ["links:read"],
      };
      await store.createApiKey(key);
      const link = fullLinkFor(accountId, { hits: 0 });
      await insertOk([link]);
      await store.recordClicks([
        click(link.id, { ts: T0 + 1, dims: { country: "US", variant: "0", city: `Quote "and, comma"` }, firstVisit: true }),
        click(link.id, { ts: T0 + 2, dims: { country: "US", variant: "0", city: `Quote "and, comma"` } }),
        click(link.id, { ts: T0 + HOUR, dims: { country: null, device: "mobile", browser: "Safari" }, bot: true }),
      ]);
      return { accountId, key, link: (await store.getLinkById(link.id))! };
    }

    test("pendingMigrations() is 0 once migrated", async () => {
      expect(await store.pendingMigrations()).toBe(0);
    });

    test("linkDomains() lists each domain holding a link once, sorted, and drops one whose last link is deleted", async () => {
      const accountId = await newAccount();
      const tag = uid().slice(0, 8);
      const [early, late] = [`a-${tag}.example`, `z-${tag}.example`];
      const onLate = [linkFor(accountId, { domain: late }), linkFor(accountId, { domain: late })];
      const onEarly = linkFor(accountId, { domain: early });
      await insertOk([...onLate, onEarly]);

      const domains = await store.linkDomains();
      expect(domains).toEqual([...new Set(domains)].sort());
      expect(domains.filter((d) => d === late)).toHaveLength(1);
      expect(domains.indexOf(early)).toBeLessThan(domains.indexOf(late));

      await store.deleteLink(onEarly.id);
      expect(await store.linkDomains()).not.toContain(early);
      expect(await store.linkDomains()).toContain(late);
    });

    test("hasAccounts() is true once an account exists", async () => {
      await newAccount();
      expect(await store.hasAccounts()).toBe(true);
    });

    test("exportAll yields every account, key, link and rollup cell with every field, owners first", async () => {
      const { accountId, key, link } = await populated();
      const records = await exportAll();
      const order = ["account", "workspace", "member", "apiKey", "link", "cell", "webhookEndpoint", "webhookDelivery", "domain"];
      const ranks = records.map((r) => order.indexOf(r.type));
      expect(ranks).toEqual([...ranks].sort((a, b) => a - b));

      expect(records).toContainEqual({ type: "account", data: (await store.getAccount(accountId))! });
      expect(records).toContainEqual({ type: "workspace", data: { id: accountId, name: "Personal", personalOf: accountId, defaultDomain: null, createdAt: T0 } });
      expect(records).toContainEqual({ type: "member", data: { workspaceId: accountId, accountId, role: "owner", createdAt: T0 } });
      expect(records).toContainEqual({ type: "apiKey", data: key });
      expect(records).toContainEqual({ type: "link", data: link });
      expect(link.hits).toBe(3);
      const cells = records.filter((r) => r.type === "cell" && r.data.linkId === link.id).map((r) => r.data);
      expect(cells).toHaveLength(2);
      const dims = click(link.id).dims;
      expect(cells).toContainEqual({
        linkId: link.id, hour: T0, dims: { ...dims, variant: "0", city: `Quote "and, comma"` }, bot: false, clicks: 2, visitors: 1,
      });
      expect(cells).toContainEqual({
        linkId: link.id, hour: T0 + HOUR, dims: { ...dims, country: null, device: "mobile", browser: "Safari" }, bot: true, clicks: 1, visitors: 0,
      });
    });

    test("importRecords writes another instance's records (tags indexed, stats intact) and a re-import skips them all", async () => {
      const account = { id: uid(), email: `Import-${uid()}@Example.com`, passwordHash: "$argon2id$x", createdAt: T0 };
      const key: ApiKeyRecord = {
        id: uid(), accountId: account.id, createdBy: account.id, name: "moved", keyHash: `hash-${uid()}`, prefix: "ck_Mov0", createdAt: T0,
        lastUsedAt: null, revokedAt: T0 + 9, scopes: ["stats:read", "links:write"],
      };
      const link = fullLinkFor(account.id, { hits: 3, tags: ["moved", "twice"] });
      const cell: ClickCellRecord = {
        linkId: link.id, hour: T0, dims: { ...NO_DIMS, country: "US", os: "iOS", referrer: "t.co", variant: "1", via: "qr" },
        bot: false, clicks: 2, visitors: 2,
      };
      const batch: ExportRecord[] = [
        { type: "account", data: account },
        { type: "apiKey", data: key },
        { type: "link", data: link },
        { type: "cell", data: cell },
        // An export file of an earlier version holds four-dimension rollups: imported as cells.
        { type: "rollup", data: { linkId: link.id, hour: T0 + HOUR, device: "mobile", browser: "Safari", country: null, variant: 1, clicks: 1 } },
      ];
      const all = (inserted: number, skipped: number) => ({ inserted, skipped });
      expect(await store.importRecords(batch)).toEqual({
        account: all(1, 0), workspace: all(0, 0), member: all(0, 0), apiKey: all(1, 0), link: all(1, 0), cell: all(2, 0), rollup: all(0, 0), webhookEndpoint: all(0, 0), webhookDelivery: all(0, 0), domain: all(0, 0),
      });

      expect(await store.getAccount(account.id)).toEqual({ ...account, email: account.email.toLowerCase() });
      // A file from before workspaces: the account comes with its personal workspace, which holds its key and link.
      expect(await store.listMemberships(account.id)).toEqual([
        { workspace: { id: account.id, name: "Personal", personalOf: account.id, defaultDomain: null, createdAt: T0 }, role: "owner" },
      ]);
      expect(await store.findApiKeyByHash(key.keyHash)).toEqual(key);
      expect(await store.getLinkById(link.id)).toEqual(link);
      expect((await store.listLinks(account.id, { limit: 10, tag: "twice" })).links.map((l) => l.id)).toEqual([link.id]);
      const rolled = { ...NO_DIMS, device: "mobile", browser: "Safari", variant: "1" };
      const cells = await cellsOf(link.id);
      expect(cells.sort((a, b) => a.hour - b.hour)).toEqual([cell, { linkId: link.id, hour: T0 + HOUR, dims: rolled, bot: false, clicks: 1, visitors: 0 }]);

      expect(await store.importRecords(batch)).toEqual({
        account: all(0, 1), workspace: all(0, 0), member: all(0, 0), apiKey: all(0, 1), link: all(0, 1), cell: all(0, 2), rollup: all(0, 0), webhookEndpoint: all(0, 0), webhookDelivery: all(0, 0), domain: all(0, 0),
      });
      expect(await clicksOf(link.id)).toBe(3);
      expect((await store.getLinkById(link.id))?.hits).toBe(3);
    });

    test("records whose unique value is taken or whose owner is missing are skipped, without failing the batch", async () => {
      const { accountId, link: existing } = await populated();
      const existingAccount = (await store.getAccount(accountId))!;
      const clash = { ...existingAccount, id: uid() }; // same email, another id
      const orphanKey: ApiKeyRecord = {
        id: uid(), accountId: clash.id, createdBy: clash.id, name: "orphan", keyHash: `hash-${uid()}`, prefix: "ck_Orp0", createdAt: T0,
        lastUsedAt: null, revokedAt: null, scopes: null,
      };
      const sameSlug = linkFor(accountId, { slug: existing.slug }); // another id, slug taken on the domain
      const fresh = linkFor(accountId);
      const result = await store.importRecords([
        { type: "account", data: clash },
        { type: "apiKey", data: orphanKey },
        { type: "link", data: sameSlug },
        { type: "link", data: fresh },
        { type: "cell", data: { linkId: sameSlug.id, hour: T0, dims: NO_DIMS, bot: false, clicks: 5, visitors: 0 } },
        { type: "cell", data: { linkId: fresh.id, hour: T0, dims: NO_DIMS, bot: true, clicks: 4, visitors: 0 } },
      ]);
      expect(result).toEqual({
        account: { inserted: 0, skipped: 1 },
        workspace: { inserted: 0, skipped: 0 },
        member: { inserted: 0, skipped: 0 },
        apiKey: { inserted: 0, skipped: 1 },
        link: { inserted: 1, skipped: 1 },
        cell: { inserted: 1, skipped: 1 },
        rollup: { inserted: 0, skipped: 0 },
        webhookEndpoint: { inserted: 0, skipped: 0 },
        webhookDelivery: { inserted: 0, skipped: 0 },
        domain: { inserted: 0, skipped: 0 },
      });
      expect(await store.getAccount(clash.id)).toBeNull();
      expect(await store.findApiKeyByHash(orphanKey.keyHash)).toBeNull();
      expect(await store.getLink(DOMAIN, existing.slug)).toEqual(existing);
      expect(await store.getLinkById(fresh.id)).toEqual(fresh);
      expect(await clicksOf(fresh.id)).toBe(4);
      expect(await clicksOf(existing.id)).toBe(3);
    });

    test("an export in progress does not block writes to the same database", async () => {
      const { link } = await populated();
      const reader = await open();
      const exporting = exportAll(reader);
      await store.recordClicks([click(link.id)]);
      const records = await exporting;
      expect(records.some((r) => r.type === "link" && r.data.id === link.id)).toBe(true);
    });
  });
}

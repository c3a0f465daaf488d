/**
 * The EventWebhookStore contract, run against SQLite and Postgres (event-webhooks-sqlite/postgres.test.ts):
 * endpoints per account, fan-out of events to subscribed active endpoints, claims that never hand a row out twice
 * and stay fair between accounts, attempts recorded only by the claim's holder, the log, send again, pruning.
 */
import { describe, expect, test } from "bun:test";
import type { ExportRecord, Store, WebhookDelivery, WebhookEndpoint, WebhookEventRecord, WebhookEventType } from "../../shared/ports.ts";
import { collect, linkFor, rejectionOf, storeContext, T0, uid } from "./store-harness.ts";

const HOUR = 3_600_000;

export function runEventWebhookContract(name: string, make: () => Promise<Store>, cleanup?: () => Promise<void>) {
  describe(`EventWebhookStore contract: ${name}`, () => {
    const ctx = storeContext(make, cleanup);

    const endpoint = (accountId: string, over: Partial<WebhookEndpoint> = {}): WebhookEndpoint => ({
      id: uid(), accountId, url: "https://hooks.example.com/in", secret: "whsec_c2VjcmV0", events: ["link.created", "link.deleted"],
      active: true, createdAt: T0, updatedAt: T0, ...over,
    });
    const event = (accountId: string | null, type: WebhookEventType, over: Partial<WebhookEventRecord> = {}): WebhookEventRecord => ({
      id: uid(), type, accountId, linkId: uid(), payload: JSON.stringify({ type, n: uid() }), at: T0, giveUpAt: T0 + 24 * HOUR, ...over,
    });

    test("endpoints are the account's own: another account neither lists, reads, changes nor deletes them", async () => {
      const a = await ctx.newAccount();
      const b = await ctx.newAccount();
      const e = endpoint(a, { events: ["link.updated", "link.clicked"] });
      await ctx.store.createWebhookEndpoint(e);
      expect(await ctx.store.listWebhookEndpoints(a)).toEqual([e]);
      expect(await ctx.store.getWebhookEndpoint(a, e.id)).toEqual(e);
      expect(await ctx.store.listWebhookEndpoints(b)).toEqual([]);
      expect(await ctx.store.getWebhookEndpoint(b, e.id)).toBeNull();
      expect(await ctx.store.updateWebhookEndpoint({ ...e, accountId: b, url: "https://evil.example.com/" })).toBe(false);
      expect(await ctx.store.deleteWebhookEndpoint(b, e.id)).toBe(false);
      const changed = { ...e, url: "https://hooks.example.com/v2", events: ["link.created"] as WebhookEventType[], active: false, updatedAt: T0 + 1 };
      expect(await ctx.store.updateWebhookEndpoint(changed)).toBe(true);
      expect(await ctx.store.getWebhookEndpoint(a, e.id)).toEqual(changed);
      expect(await ctx.store.deleteWebhookEndpoint(a, e.id)).toBe(true);
      expect(await ctx.store.getWebhookEndpoint(a, e.id)).toBeNull();
    });

    test("an event becomes one pending delivery per active endpoint subscribed to it, once however often it is written", async () => {
      const a = await ctx.newAccount();
      const subscribed = endpoint(a);
      const other = endpoint(a, { events: ["link.clicked"] });
      const inactive = endpoint(a, { active: false });
      for (const e of [subscribed, other, inactive]) await ctx.store.createWebhookEndpoint(e);
      const ev = event(a, "link.created");
      expect(await ctx.store.enqueueWebhookEvents([ev])).toBe(1);
      expect(await ctx.store.enqueueWebhookEvents([ev])).toBe(0);
      const { deliveries } = await ctx.store.listWebhookDeliveries(a, subscribed.id, 10);
      expect(deliveries).toEqual([{
        id: `${ev.id}_${subscribed.id}`, endpointId: subscribed.id, accountId: a, eventType: "link.created", payload: ev.payload,
        createdAt: T0, status: "pending", attempts: 0, nextAttemptAt: T0, giveUpAt: T0 + 24 * HOUR, lastAttemptAt: null, lastError: null, deliveredAt: null,
      }]);
      expect((await ctx.store.listWebhookDeliveries(a, other.id, 10)).deliveries).toEqual([]);
      expect((await ctx.store.listWebhookDeliveries(a, inactive.id, 10)).deliveries).toEqual([]);
    });

    test("subscribedAccounts names the accounts with an active endpoint for the type, each once", async () => {
      const a = await ctx.newAccount();
      const b = await ctx.newAccount();
      const c = await ctx.newAccount();
      await ctx.store.createWebhookEndpoint(endpoint(a, { events: ["link.clicked"] }));
      await ctx.store.createWebhookEndpoint(endpoint(a, { events: ["link.created", "link.clicked"] }));
      await ctx.store.createWebhookEndpoint(endpoint(b, { events: ["link.clicked"], active: false }));
      await ctx.store.createWebhookEndpoint(endpoint(c, { events: ["link.created"] }));
      const clicked = await ctx.store.subscribedAccounts("link.clicked");
      expect(clicked.filter((id) => [a, b, c].includes(id))).toEqual([a]);
      const created = (await ctx.store.subscribedAccounts("link.created")).filter((id) => [a, b, c].includes(id));
      expect(created.sort()).toEqual([a, c].sort());
      expect((await ctx.store.subscribedAccounts("link.updated")).filter((id) => [a, b, c].includes(id))).toEqual([]);
    });

    test("a click event without an account goes to the endpoints of the link's owner, with the link's slug and domain", async () => {
      const a = await ctx.newAccount();
      const link = linkFor(a);
      await ctx.insertOk([link]);
      const e = endpoint(a, { events: ["link.clicked"] });
      await ctx.store.createWebhookEndpoint(e);
      const clicked = { payload: JSON.stringify({ type: "link.clicked", data: { linkId: link.id } }) };
      expect(await ctx.store.enqueueWebhookEvents([event(null, "link.clicked", { linkId: link.id, ...clicked }), event(null, "link.clicked", clicked)])).toBe(1);
      const [d] = (await ctx.store.listWebhookDeliveries(a, e.id, 10)).deliveries;
      expect(d!.eventType).toBe("link.clicked");
      expect(JSON.parse(d!.payload)).toEqual({ type: "link.clicked", data: { linkId: link.id, slug: link.slug, domain: link.domain } });
    });

    test("claims hand each due row to one claimer, at most perAccount of an account, and an unfinished claim comes due again", async () => {
      const now = T0 + 1000 * HOUR + Math.floor(Math.random() * HOUR); // after every other test's rows, claimed here too
      const a = await ctx.newAccount();
      const b = await ctx.newAccount();
      const ea = endpoint(a);
      const eb = endpoint(b);
      await ctx.store.createWebhookEndpoint(ea);
      await ctx.store.createWebhookEndpoint(eb);
      await ctx.store.enqueueWebhookEvents([...Array.from({ length: 5 }, () => event(a, "link.created", { at: now })), event(b, "link.created", { at: now })]);
      await ctx.store.claimWebhookDeliveries(now - 1, now + 10, 1000, 1000); // earlier rows of other tests out of the way
      const second = await ctx.open();
      const [first, other] = await Promise.all([
        ctx.store.claimWebhookDeliveries(now, now + 60_000, 2, 100),
        second.claimWebhookDeliveries(now, now + 60_000, 2, 100),
      ]);
      const mine = [...first, ...other].filter((d) => d.accountId === a || d.accountId === b);
      const ids = mine.map((d) => d.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(first.filter((d) => d.accountId === a).length).toBeLessThanOrEqual(2);
      expect(mine.some((d) => d.accountId === b)).toBe(true);
      expect(mine.find((d) => d.accountId === b)).toMatchObject({ url: eb.url, secret: eb.secret, lease: now + 60_000, nextAttemptAt: now + 60_000 });
      const again = (await ctx.store.claimWebhookDeliveries(now + 60_000, now + 120_000, 100, 100)).filter((d) => d.accountId === a || d.accountId === b);
      expect(again.map((d) => d.id).sort()).toEqual([...new Set([...ids, ...again.map((d) => d.id)])].sort());
      expect(again.length).toBe(6);
    });

    test("accounts take turns across claims: one account's backlog never holds the others back", async () => {
      const now = T0 + 3000 * HOUR + Math.floor(Math.random() * HOUR);
      await ctx.store.claimWebhookDeliveries(now - 1, now + 10, 1000, 1000); // earlier rows of other tests out of the way
      const accounts = [await ctx.newAccount(), await ctx.newAccount(), await ctx.newAccount()];
      for (const a of accounts) {
        await ctx.store.createWebhookEndpoint(endpoint(a));
        await ctx.store.enqueueWebhookEvents(Array.from({ length: 3 }, () => event(a, "link.created", { at: now })));
      }
      const turns: string[] = [];
      for (let i = 0; i < 6; i++) turns.push(...(await ctx.store.claimWebhookDeliveries(now, now + 60_000, 1, 1)).map((d) => d.accountId));
      expect(new Set(turns.slice(0, 3)).size).toBe(3);
      expect(new Set(turns.slice(3, 6)).size).toBe(3);
    });

    test("an attempt is recorded only under its claim: delivered, retried later, or failed for good", async () => {
      const a = await ctx.newAccount();
      const e = endpoint(a);
      await ctx.store.createWebhookEndpoint(e);
      const now = T0 + 2000 * HOUR + Math.floor(Math.random() * HOUR);
      const [ev1, ev2, ev3] = [event(a, "link.created", { at: now }), event(a, "link.deleted", { at: now }), event(a, "link.created", { at: now })];
      await ctx.store.enqueueWebhookEvents([ev1, ev2, ev3]);
      const claimed = (await ctx.store.claimWebhookDeliveries(now, now + 5_000, 10, 1000)).filter((d) => d.accountId === a);
      expect(claimed.length).toBe(3);
      const [d1, d2, d3] = [ev1, ev2, ev3].map((ev) => claimed.find((d) => d.id === `${ev.id}_${e.id}`)!);
      expect(await ctx.store.finishWebhookAttempt(d1.id, now + 4_999, { ok: true, at: now + 1, error: null, nextAttemptAt: null })).toBe(false);
      expect(await ctx.store.finishWebhookAttempt(d1.id, d1.lease, { ok: true, at: now + 1, error: null, nextAttemptAt: null })).toBe(true);
      expect(await ctx.store.finishWebhookAttempt(d1.id, d1.lease, { ok: true, at: now + 2, error: null, nextAttemptAt: null })).toBe(false);
      expect(await ctx.store.finishWebhookAttempt(d2.id, d2.lease, { ok: false, at: now + 1, error: "answered HTTP 500", nextAttemptAt: now + 30_000 })).toBe(true);
      expect(await ctx.store.finishWebhookAttempt(d3.id, d3.lease, { ok: false, at: now + 1, error: "no answer within 5 s", nextAttemptAt: null })).toBe(true);
      expect(await ctx.store.postponeWebhookDelivery(d3.id, d3.lease, now + 9)).toBe(false); // finished: not pending
      const log = new Map((await ctx.store.listWebhookDeliveries(a, e.id, 10)).deliveries.map((d) => [d.id, d]));
      expect(log.get(d1.id)).toMatchObject({ status: "delivered", attempts: 1, deliveredAt: now + 1, nextAttemptAt: null, lastError: null });
      expect(log.get(d2.id)).toMatchObject({ status: "pending", attempts: 1, nextAttemptAt: now + 30_000, lastError: "answered HTTP 500", lastAttemptAt: now + 1 });
      expect(log.get(d3.id)).toMatchObject({ status: "failed", attempts: 1, nextAttemptAt: null, lastError: "no answer within 5 s" });
      // Send again: pending and due now, for the account's own delivery only.
      const b = await ctx.newAccount();
      expect(await ctx.store.retryWebhookDelivery(b, e.id, d3.id, now + 10, now + HOUR)).toBeNull();
      expect(await ctx.store.retryWebhookDelivery(a, e.id, d3.id, now + 10, now + HOUR)).toMatchObject({ status: "pending", nextAttemptAt: now + 10, giveUpAt: now + HOUR, attempts: 1 });
      // Pruning takes finished rows only.
      expect(await ctx.store.pruneWebhookDeliveries(now + 1, 100_000)).toBeGreaterThanOrEqual(1);
      expect((await ctx.store.listWebhookDeliveries(a, e.id, 10)).deliveries.map((d) => d.id).sort()).toEqual([d2.id, d3.id].sort());
    });

    test("the log pages newest first, and another account sees none of it", async () => {
      const a = await ctx.newAccount();
      const e = endpoint(a);
      await ctx.store.createWebhookEndpoint(e);
      await ctx.store.enqueueWebhookEvents(Array.from({ length: 5 }, (_, i) => event(a, "link.created", { at: T0 + i })));
      const one = await ctx.store.listWebhookDeliveries(a, e.id, 2);
      const two = await ctx.store.listWebhookDeliveries(a, e.id, 2, one.nextCursor!);
      const three = await ctx.store.listWebhookDeliveries(a, e.id, 2, two.nextCursor!);
      expect([...one.deliveries, ...two.deliveries, ...three.deliveries].map((d) => d.createdAt)).toEqual([T0 + 4, T0 + 3, T0 + 2, T0 + 1, T0]);
      expect(three.nextCursor).toBeNull();
      expect((await ctx.store.listWebhookDeliveries(await ctx.newAccount(), e.id, 10)).deliveries).toEqual([]);
    });

    test("a claimed delivery given back unattempted is due later with its attempts unchanged, only under its claim", async () => {
      const a = await ctx.newAccount();
      const e = endpoint(a);
      await ctx.store.createWebhookEndpoint(e);
      const now = T0 + 4000 * HOUR + Math.floor(Math.random() * HOUR);
      await ctx.store.claimWebhookDeliveries(now - 1, now + 1000 * HOUR, 1000, 1000); // earlier rows of other tests out of the way
      await ctx.store.enqueueWebhookEvents([event(a, "link.created", { at: now })]);
      const [d] = (await ctx.store.claimWebhookDeliveries(now, now + 5_000, 10, 10)).filter((x) => x.accountId === a);
      expect(await ctx.store.postponeWebhookDelivery(d!.id, d!.lease + 1, now + 60_000)).toBe(false);
      expect(await ctx.store.postponeWebhookDelivery(d!.id, d!.lease, now + 60_000)).toBe(true);
      expect((await ctx.store.listWebhookDeliveries(a, e.id, 10)).deliveries[0]).toMatchObject({ status: "pending", attempts: 0, nextAttemptAt: now + 60_000 });
      expect((await ctx.store.claimWebhookDeliveries(now + 59_999, now + 70_000, 10, 1000)).filter((x) => x.accountId === a)).toEqual([]);
      expect((await ctx.store.claimWebhookDeliveries(now + 60_000, now + 70_000, 10, 1000)).filter((x) => x.accountId === a).length).toBe(1);
    });

    test("pruning deletes at most `max` finished deliveries older than the cut, oldest first, never a pending one", async () => {
      const a = await ctx.newAccount();
      const e = endpoint(a);
      await ctx.store.createWebhookEndpoint(e);
      const old = T0 - 10 * HOUR;
      await ctx.store.enqueueWebhookEvents([...Array.from({ length: 3 }, (_, i) => event(a, "link.created", { at: old + i })), event(a, "link.deleted", { at: old - 1 })]);
      const claimed = await ctx.store.claimWebhookDeliveries(old + 2, old + HOUR, 10, 10);
      for (const d of claimed.filter((x) => x.eventType === "link.created")) {
        await ctx.store.finishWebhookAttempt(d.id, d.lease, { ok: true, at: old + 3, error: null, nextAttemptAt: null });
      }
      expect(await ctx.store.pruneWebhookDeliveries(T0 - 5 * HOUR, 2)).toBe(2);
      expect((await ctx.store.listWebhookDeliveries(a, e.id, 10)).deliveries.map((d) => d.createdAt).sort()).toEqual([old - 1, old + 2]);
      expect(await ctx.store.pruneWebhookDeliveries(T0 - 5 * HOUR, 2)).toBe(1);
      expect(await ctx.store.pruneWebhookDeliveries(T0 - 5 * HOUR, 2)).toBe(0);
      expect((await ctx.store.listWebhookDeliveries(a, e.id, 10)).deliveries.map((d) => d.status)).toEqual(["pending"]);
    });

    describe("a link change and its events commit together", () => {
      const everything: WebhookEventType[] = ["link.created", "link.updated", "link.deleted"];
      /** An event the store refuses: its payload breaks the outbox's NOT NULL (a store failing mid-transaction). */
      const refused = (e: WebhookEventRecord): WebhookEventRecord => ({ ...e, payload: null as unknown as string });
      const subscribedAccount = async () => {
        const a = await ctx.newAccount();
        const e = endpoint(a, { events: everything });
        await ctx.store.createWebhookEndpoint(e);
        return { a, e, log: async () => (await ctx.store.listWebhookDeliveries(a, e.id, 50)).deliveries.map((d) => d.id).sort() };
      };

      test("insertLinks writes the events of the links it inserted, and only those", async () => {
        const { a, e, log } = await subscribedAccount();
        const taken = linkFor(a);
        await ctx.insertOk([taken]);
        const fresh = linkFor(a);
        const clash = linkFor(a, { slug: taken.slug });
        const events = [fresh, clash].map((l) => event(a, "link.created", { linkId: l.id }));
        expect(await ctx.store.insertLinks([fresh, clash], events)).toEqual([true, false]);
        expect(await log()).toEqual([`${events[0]!.id}_${e.id}`]);
      });

      test("an event the outbox refuses rolls the insert back", async () => {
        const { a, log } = await subscribedAccount();
        const link = linkFor(a);
        await rejectionOf(ctx.store.insertLinks([link], [refused(event(a, "link.created", { linkId: link.id }))]));
        expect(await ctx.store.getLinkById(link.id)).toBeNull();
        expect(await log()).toEqual([]);
      });

      test("an event the outbox refuses rolls the update back; a refused update writes no event", async () => {
        const { a, e, log } = await subscribedAccount();
        const [link, other] = [linkFor(a), linkFor(a)];
        await ctx.insertOk([link, other]);
        const changed = { ...link, target: "https://example.com/changed", updatedAt: T0 + 1 };
        await rejectionOf(ctx.store.updateLink(changed, link.updatedAt, [refused(event(a, "link.updated", { linkId: link.id }))]));
        expect((await ctx.store.getLinkById(link.id))?.target).toBe(link.target);
        // The reverse: the change fails (another link's slug), so its event is not written.
        const clash = event(a, "link.updated", { linkId: link.id });
        await rejectionOf(ctx.store.updateLink({ ...changed, slug: other.slug }, link.updatedAt, [clash]));
        // A lost compare-and-set writes nothing either; a won one writes its event.
        expect(await ctx.store.updateLink(changed, link.updatedAt - 1, [event(a, "link.updated", { linkId: link.id })])).toBe(false);
        expect(await log()).toEqual([]);
        const won = event(a, "link.updated", { linkId: link.id });
        expect(await ctx.store.updateLink(changed, link.updatedAt, [won])).toBe(true);
        expect(await log()).toEqual([`${won.id}_${e.id}`]);
      });

      test("an event the outbox refuses rolls the delete back; deleting a link already gone writes no event", async () => {
        const { a, e, log } = await subscribedAccount();
        const link = linkFor(a);
        await ctx.insertOk([link]);
        await rejectionOf(ctx.store.deleteLink(link.id, [refused(event(a, "link.deleted", { linkId: link.id }))]));
        expect(await ctx.store.getLinkById(link.id)).not.toBeNull();
        const deleted = event(a, "link.deleted", { linkId: link.id });
        await ctx.store.deleteLink(link.id, [deleted]);
        expect(await ctx.store.getLinkById(link.id)).toBeNull();
        await ctx.store.deleteLink(link.id, [event(a, "link.deleted", { linkId: link.id })]);
        expect(await log()).toEqual([`${deleted.id}_${e.id}`]);
      });
    });

    describe("export and import (npm run export / import)", () => {
      test("exportAll carries every endpoint, its secret included, and every delivery with every field, after the links", async () => {
        const a = await ctx.newAccount();
        const e = endpoint(a, { secret: `whsec_${uid()}`, active: false, events: ["link.deleted"] });
        const live = endpoint(a);
        for (const x of [e, live]) await ctx.store.createWebhookEndpoint(x);
        await ctx.store.enqueueWebhookEvents([event(a, "link.created"), event(a, "link.created", { at: T0 + 1 })]);
        const claimed = (await ctx.store.claimWebhookDeliveries(T0 + 5, T0 + 100, 10, 1000)).find((d) => d.accountId === a)!;
        await ctx.store.finishWebhookAttempt(claimed.id, claimed.lease, { ok: false, at: T0 + 6, error: "answered HTTP 500", nextAttemptAt: T0 + 60 });
        const records = await collect(ctx.store.exportAll());
        const types = records.map((r) => r.type);
        expect(types.indexOf("webhookEndpoint")).toBeGreaterThan(types.lastIndexOf("link"));
        expect(types.lastIndexOf("webhookEndpoint")).toBeLessThan(types.indexOf("webhookDelivery"));
        expect(records).toContainEqual({ type: "webhookEndpoint", data: e });
        expect(records).toContainEqual({ type: "webhookEndpoint", data: live });
        const log = (await ctx.store.listWebhookDeliveries(a, live.id, 10)).deliveries;
        expect(log).toHaveLength(2);
        expect(log.some((d) => d.lastError === "answered HTTP 500")).toBe(true);
        for (const d of log) expect(records).toContainEqual({ type: "webhookDelivery", data: d });
      });

      test("importRecords writes another instance's endpoints and deliveries, skips them when present or without owner", async () => {
        const account = { id: uid(), email: `hooks-${uid()}@example.com`, passwordHash: "$argon2id$x", createdAt: T0 };
        const e = endpoint(account.id, { secret: "whsec_bW92ZWQ=", events: ["link.created", "link.clicked"] });
        const pending: WebhookDelivery = {
          id: `evt_${uid()}_${e.id}`, endpointId: e.id, accountId: account.id, eventType: "link.clicked", payload: '{"type":"link.clicked","ü":"\u00e9"}',
          createdAt: T0, status: "pending", attempts: 3, nextAttemptAt: T0 + HOUR, giveUpAt: T0 + 24 * HOUR, lastAttemptAt: T0 + 10,
          lastError: "no answer within 5 s", deliveredAt: null,
        };
        const delivered: WebhookDelivery = { ...pending, id: `evt_${uid()}_${e.id}`, eventType: "link.created", status: "delivered", attempts: 1, nextAttemptAt: null, lastError: null, deliveredAt: T0 + 1 };
        const orphanEndpoint = endpoint(uid());
        const orphanDelivery: WebhookDelivery = { ...pending, id: `evt_${uid()}_x`, endpointId: uid() };
        const batch: ExportRecord[] = [
          { type: "account", data: account },
          { type: "webhookEndpoint", data: e },
          { type: "webhookEndpoint", data: orphanEndpoint },
          { type: "webhookDelivery", data: pending },
          { type: "webhookDelivery", data: delivered },
          { type: "webhookDelivery", data: orphanDelivery },
        ];
        const first = await ctx.store.importRecords(batch);
        expect([first.webhookEndpoint, first.webhookDelivery]).toEqual([{ inserted: 1, skipped: 1 }, { inserted: 2, skipped: 1 }]);
        expect(await ctx.store.getWebhookEndpoint(account.id, e.id)).toEqual(e);
        expect(await ctx.store.listWebhookEndpoints(orphanEndpoint.accountId)).toEqual([]);
        const log = (await ctx.store.listWebhookDeliveries(account.id, e.id, 10)).deliveries;
        expect(log.sort((x, y) => (x.id < y.id ? -1 : 1))).toEqual([pending, delivered].sort((x, y) => (x.id < y.id ? -1 : 1)));
        // The moved pending delivery is due and claimed as any other, with the moved secret.
        const claimed = (await ctx.store.claimWebhookDeliveries(T0 + HOUR, T0 + 2 * HOUR, 10, 1000)).find((d) => d.id === pending.id);
        expect(claimed).toMatchObject({ url: e.url, secret: e.secret, attempts: 3 });
        const again = await ctx.store.importRecords(batch);
        expect([again.webhookEndpoint, again.webhookDelivery]).toEqual([{ inserted: 0, skipped: 2 }, { inserted: 0, skipped: 3 }]);
      });
    });

    test("deleting an endpoint deletes its deliveries", async () => {
      const a = await ctx.newAccount();
      const e = endpoint(a);
      await ctx.store.createWebhookEndpoint(e);
      await ctx.store.enqueueWebhookEvents([event(a, "link.created")]);
      await ctx.store.deleteWebhookEndpoint(a, e.id);
      expect((await ctx.store.listWebhookDeliveries(a, e.id, 10)).deliveries).toEqual([]);
    });
  });
}

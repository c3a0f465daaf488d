/**
 * Store contract, links role: the externalId (unique per account, found by the list filter) and the live-state
 * filter, the same on every adapter. The service builds upserts and `ext_…` lookups on these.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { LINK_STATES } from "../../shared/enums.ts";
import { linkState } from "../../shared/link.ts";
import type { Store } from "../../shared/ports.ts";
import { linkFor, rejectionOf, type StoreContext, T0 } from "./store-harness.ts";

const HOUR = 3_600_000;

export function runLinkFeatureContract(ctx: StoreContext): void {
  let store: Store;
  beforeAll(() => {
    store = ctx.store;
  });
  const { newAccount, insertOk } = ctx;

  describe("externalId", () => {
    test("is unique per account: a second insert with it is refused, another account may use it", async () => {
      const [a, b] = [await newAccount(), await newAccount()];
      await insertOk([linkFor(a, { externalId: "ext-1" })]);
      expect(await store.insertLinks([linkFor(a, { externalId: "ext-1" }), linkFor(a, { externalId: "ext-2" })])).toEqual([false, true]);
      await insertOk([linkFor(b, { externalId: "ext-1" })]);
      // Links without one do not collide.
      await insertOk([linkFor(a), linkFor(a)]);
    });

    test("an update to another link's externalId is refused with external_id_taken and writes nothing", async () => {
      const a = await newAccount();
      const [one, two] = [linkFor(a, { externalId: "one" }), linkFor(a, { externalId: "two" })];
      await insertOk([one, two]);
      const p = (await rejectionOf(store.updateLink({ ...two, externalId: "one", updatedAt: two.updatedAt + 1 }, two.updatedAt))) as { code: string };
      expect(p.code).toBe("external_id_taken");
      expect((await store.getLinkById(two.id))?.externalId).toBe("two");
    });

    test("the list filter finds the account's link by it, and only the account's", async () => {
      const [a, b] = [await newAccount(), await newAccount()];
      const mine = linkFor(a, { externalId: "order:9" });
      await insertOk([mine, linkFor(b, { externalId: "order:9" })]);
      expect((await store.listLinks(a, { limit: 5, externalId: "order:9" })).links).toEqual([mine]);
      expect((await store.listLinks(a, { limit: 5, externalId: "order:10" })).links).toEqual([]);
    });
  });

  describe("state filter", () => {
    test("each live state selects exactly the links linkState() puts in it at that moment", async () => {
      const a = await newAccount();
      const now = T0 + 10 * HOUR;
      const links = [
        linkFor(a),
        linkFor(a, { status: "paused" }),
        linkFor(a, { status: "archived", expiresAt: now - HOUR }),
        linkFor(a, { expiresAt: now - HOUR }),
        linkFor(a, { expiresAt: now }), // expiry is the moment itself
        linkFor(a, { startsAt: now + HOUR }),
        linkFor(a, { startsAt: now }), // live from that moment
        linkFor(a, { maxHits: 5, hits: 5 }),
        linkFor(a, { maxHits: 5, hits: 4 }),
        linkFor(a, { startsAt: now + HOUR, maxHits: 1, hits: 1 }),
      ];
      await insertOk(links);
      for (const state of LINK_STATES) {
        const expected = links.filter((l) => linkState(l, l.hits, now) === state).map((l) => l.id).sort();
        const found = (await store.listLinks(a, { limit: 50, state: { state, now } })).links.map((l) => l.id).sort();
        expect({ state, ids: found }).toEqual({ state, ids: expected });
      }
    });
  });
}

/**
 * Store contract, links role (LinkHitReservations): maxHits hits reserved in blocks before counters serve them,
 * atomic across connections, never beyond the stored limit, and ended when the limit is removed.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import type { HitReservation, Store } from "../../shared/ports.ts";
import { click, linkFor, type StoreContext, uid } from "./store-harness.ts";

export function runHitReservationContract(ctx: StoreContext): void {
  let store: Store;
  beforeAll(() => {
    store = ctx.store;
  });
  const { newAccount, insertOk } = ctx;

  /** A new link with this limit (and these recorded hits); returns its id. */
  async function limited(maxHits: number | null, hits = 0): Promise<string> {
    const link = linkFor(await newAccount(), { maxHits, hits });
    await insertOk([link]);
    return link.id;
  }

  const reserved = (r: HitReservation | null) => r && r.reserved;

  describe("hit reservations (maxHits)", () => {
    test("a new link has nothing reserved; an unknown one has no stored hits", async () => {
      expect(await store.storedHits(await limited(100))).toEqual({ hits: 0, reserved: 0 });
      expect(await store.storedHits(uid())).toBeNull();
    });

    test("each reservation raises the reservation by one block", async () => {
      const id = await limited(100);
      expect(await store.reserveHits(id, 16)).toEqual({ hits: 0, reserved: 16, maxHits: 100 });
      expect(reserved(await store.reserveHits(id, 16))).toBe(32);
      expect(await store.storedHits(id)).toEqual({ hits: 0, reserved: 32 });
    });

    test("never beyond the stored maxHits: the last block is what is left, then nothing", async () => {
      const id = await limited(20);
      expect(reserved(await store.reserveHits(id, 16))).toBe(16);
      expect(reserved(await store.reserveHits(id, 16))).toBe(20);
      expect(reserved(await store.reserveHits(id, 16))).toBe(20);
    });

    test("recorded hits above the reservation (clicks served before it existed) are reserved past, not again", async () => {
      const id = await limited(100, 50);
      expect(await store.reserveHits(id, 16)).toEqual({ hits: 50, reserved: 66, maxHits: 100 });
      await store.recordClicks(Array.from({ length: 30 }, () => click(id)));
      expect(reserved(await store.reserveHits(id, 16))).toBe(96);
    });

    test("a link without maxHits, or none at all, gets no reservation", async () => {
      const free = await limited(null);
      expect(await store.reserveHits(free, 16)).toBeNull();
      expect(await store.storedHits(free)).toEqual({ hits: 0, reserved: 0 });
      expect(await store.reserveHits(uid(), 16)).toBeNull();
    });

    test("atomic across connections: 40 concurrent reservations from two stores raise it 40 blocks, each seeing another total", async () => {
      const id = await limited(1_000_000);
      const other = await ctx.open();
      const made = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? store : other).reserveHits(id, 5)));
      expect(made.map((r) => reserved(r)!).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => (i + 1) * 5));
      expect((await store.storedHits(id))!.reserved).toBe(200);
    });

    test("releaseHits lowers the reservation to what was served, never raises it", async () => {
      const id = await limited(100);
      await store.reserveHits(id, 32);
      await store.releaseHits(id, 20);
      expect((await store.storedHits(id))!.reserved).toBe(20);
      await store.releaseHits(id, 25);
      expect((await store.storedHits(id))!.reserved).toBe(20);
    });

    test("removing maxHits ends the reservation; other updates, a lowered limit included, keep it", async () => {
      const id = await limited(100);
      await store.reserveHits(id, 32);
      const link = (await store.getLinkById(id))!;
      await store.updateLink({ ...link, target: "https://example.com/moved", updatedAt: link.updatedAt + 1 });
      expect((await store.storedHits(id))!.reserved).toBe(32);
      await store.updateLink({ ...link, maxHits: 10, updatedAt: link.updatedAt + 2 });
      expect((await store.storedHits(id))!.reserved).toBe(32);
      expect(reserved(await store.reserveHits(id, 16))).toBe(32);
      await store.updateLink({ ...link, maxHits: null, updatedAt: link.updatedAt + 3 });
      expect(await store.storedHits(id)).toEqual({ hits: 0, reserved: 0 });
      await store.updateLink({ ...link, maxHits: 50, updatedAt: link.updatedAt + 4 });
      expect(reserved(await store.reserveHits(id, 16))).toBe(16);
    });
  });
}

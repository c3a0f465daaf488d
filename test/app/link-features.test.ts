/**
 * The three link features built on the one declaration of the link: `expiredUrl` (where an ended link sends
 * visitors), `externalId` (the caller's own id, with upsert on create) and `state` (the live state computed at read
 * time), over the REST API in process. The redirect side of expiredUrl is tested with the redirector's own tests.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { jsonOf, problemOf, startControlPlane, START_TIME, type InProcessControlPlane } from "../helpers/in-process.ts";
import { ledgerFrom } from "../helpers/hit-ledger.ts";

let cp: InProcessControlPlane;
let key: string;
let otherKey: string;

beforeAll(async () => {
  cp = await startControlPlane();
  key = (await cp.createKey("features@example.com")).key;
  otherKey = (await cp.createKey("someone-else@example.com")).key;
});
afterAll(() => cp.close());

const create = (json: unknown, k = key) => cp.request("POST", "/api/v1/links", { key: k, json });
const patch = (slug: string, json: unknown) => cp.request("PATCH", `/api/v1/links/${slug}`, { key, json });
const get = (slug: string, k = key) => cp.request("GET", `/api/v1/links/${slug}`, { key: k });
const list = (query: string) => cp.request("GET", `/api/v1/links?${query}`, { key });

describe("expiredUrl", () => {
  test("is set on create, shown, changed and cleared by PATCH", async () => {
    const res = await create({ url: "https://example.com/sale", slug: "sale-2030", expiredUrl: "https://example.com/sale-over" });
    expect(res.status).toBe(201);
    expect((await jsonOf(res)).expiredUrl).toBe("https://example.com/sale-over");
    expect((await jsonOf(await patch("sale-2030", { expiredUrl: "https://example.com/next" }))).expiredUrl).toBe("https://example.com/next");
    expect((await jsonOf(await patch("sale-2030", { expiredUrl: "" }))).expiredUrl).toBeNull();
  });

  test("is checked like every address: not http(s), or this service's own short address, is refused", async () => {
    const bad = await problemOf(await create({ url: "https://example.com/", expiredUrl: "javascript:alert(1)" }), 400, "invalid_input");
    expect(bad.errors).toEqual([{ path: "/expiredUrl", message: "must use http or https" }]);
    const loop = await problemOf(await create({ url: "https://example.com/", expiredUrl: "http://clink.test/other" }), 400, "invalid_input");
    expect(loop.errors?.[0].path).toBe("/expiredUrl");
  });

  test("reaches the redirector's compiled link", async () => {
    await create({ url: "https://example.com/a", slug: "ends-somewhere", expiredUrl: "https://example.com/b" });
    const compiled = await cp.deps.hot.getLink(`${cp.deps.config.defaultDomain}/ends-somewhere`);
    expect(compiled?.expiredUrl).toBe("https://example.com/b");
  });
});

describe("externalId", () => {
  test("create with a new externalId answers 201; again with the same one updates that link and answers 200", async () => {
    const first = await create({ url: "https://example.com/v1", externalId: "crm-42", tags: ["a"] });
    expect(first.status).toBe(201);
    const made = await jsonOf(first);
    expect(made.externalId).toBe("crm-42");
    const again = await create({ url: "https://example.com/v2", externalId: "crm-42", folder: "f" });
    expect(again.status).toBe(200);
    const updated = await jsonOf(again);
    expect(updated).toMatchObject({ slug: made.slug, target: "https://example.com/v2", folder: "f", tags: ["a"], externalId: "crm-42" });
    // Re-running the same create changes nothing more.
    const third = await jsonOf(await create({ url: "https://example.com/v2", externalId: "crm-42", folder: "f" }));
    expect({ ...third, updatedAt: null }).toEqual({ ...updated, updatedAt: null });
  });

  test("GET, PATCH and DELETE /links/ext_{externalId} reach the link", async () => {
    const made = await jsonOf(await create({ url: "https://example.com/x", externalId: "order:77" }));
    expect((await jsonOf(await get("ext_order:77"))).slug).toBe(made.slug);
    expect((await jsonOf(await patch("ext_order:77", { folder: "orders" }))).folder).toBe("orders");
    expect((await cp.request("DELETE", "/api/v1/links/ext_order:77", { key })).status).toBe(204);
    await problemOf(await get("ext_order:77"), 404, "not_found");
  });

  test("is per account: another account's externalId is unknown to the caller, and the same id is free for it", async () => {
    const mine = await jsonOf(await create({ url: "https://example.com/mine", externalId: "shared-id" }));
    await problemOf(await get("ext_shared-id", otherKey), 404, "not_found");
    const theirs = await create({ url: "https://example.com/theirs", externalId: "shared-id" }, otherKey);
    expect(theirs.status).toBe(201);
    expect((await jsonOf(theirs)).slug).not.toBe(mine.slug);
    expect((await jsonOf(await get("ext_shared-id"))).target).toBe("https://example.com/mine");
  });

  test("PATCH to an externalId another link of the account has answers 409 external_id_taken", async () => {
    await create({ url: "https://example.com/1", slug: "ext-one", externalId: "one" });
    await create({ url: "https://example.com/2", slug: "ext-two", externalId: "two" });
    await problemOf(await patch("ext-two", { externalId: "one" }), 409, "external_id_taken");
    expect((await jsonOf(await get("ext-two"))).externalId).toBe("two");
  });

  test("an upsert cannot rename the link: a different slug is refused", async () => {
    await create({ url: "https://example.com/1", slug: "keeps-its-slug", externalId: "fixed" });
    const p = await problemOf(await create({ url: "https://example.com/2", slug: "another-slug", externalId: "fixed" }), 400, "invalid_input");
    expect(p.errors?.[0].path).toBe("/slug");
    expect((await create({ url: "https://example.com/2", slug: "keeps-its-slug", externalId: "fixed" })).status).toBe(200);
  });

  test("bad externalIds are refused with the field named; slugs starting ext_ are reserved", async () => {
    for (const externalId of ["a/b", "with space", "x".repeat(201), "50%", "é"]) {
      const p = await problemOf(await create({ url: "https://example.com/", externalId }), 400, "invalid_input");
      expect(p.errors?.[0].path).toBe("/externalId");
    }
    await problemOf(await create({ url: "https://example.com/", slug: "ext_thing" }), 400, "slug_reserved");
  });

  test("bulk: rows with a known externalId update, new ones create, a repeated one in the same request fails alone", async () => {
    await create({ url: "https://example.com/old", externalId: "bulk-known" });
    const res = await cp.request("POST", "/api/v1/bulk", {
      key,
      json: [
        { url: "https://example.com/new", externalId: "bulk-known" },
        { url: "https://example.com/fresh", externalId: "bulk-new" },
        { url: "https://example.com/dup", externalId: "bulk-new" },
      ],
    });
    const body = await jsonOf(res);
    expect(body).toMatchObject({ created: 1, updated: 1, failed: 1 });
    expect(body.results.map((r: { ok: boolean; action?: string }) => r.action ?? r.ok)).toEqual(["updated", "created", false]);
    expect(body.results[2].error.errors[0].path).toBe("/externalId");
    expect((await jsonOf(await get("ext_bulk-known"))).target).toBe("https://example.com/new");
  });

  test("the list filters by externalId", async () => {
    await create({ url: "https://example.com/f", externalId: "findable" });
    const { links } = await jsonOf(await list("externalId=findable"));
    expect(links.map((l: { externalId: string }) => l.externalId)).toEqual(["findable"]);
  });
});

describe("state", () => {
  const hour = 3_600_000;

  test("each link answer carries the live state now, and it moves with the clock", async () => {
    const at = (ms: number) => new Date(ms).toISOString();
    await create({ url: "https://example.com/", slug: "state-later", startsAt: at(START_TIME + 2 * hour), expiresAt: at(START_TIME + 4 * hour) });
    await create({ url: "https://example.com/", slug: "state-paused", status: "paused" });
    await create({ url: "https://example.com/", slug: "state-archived", status: "archived" });
    const state = async (slug: string) => (await jsonOf(await get(slug))).state;
    expect([await state("state-later"), await state("state-paused"), await state("state-archived")]).toEqual(["scheduled", "paused", "archived"]);
    cp.clock.advance(3 * hour);
    expect(await state("state-later")).toBe("live");
    cp.clock.advance(2 * hour);
    expect(await state("state-later")).toBe("expired");
  });

  test("a link whose click limit is used up is limit_reached, from the redirectors' counter", async () => {
    const made = await jsonOf(await create({ url: "https://example.com/", slug: "state-limit", maxHits: 2 }));
    expect(made.state).toBe("live");
    const id = (await cp.deps.store.getLink(cp.deps.config.defaultDomain, "state-limit"))!.id;
    for (let i = 0; i < 2; i++) await cp.deps.hot.takeHit(id, 2, ledgerFrom(0));
    expect(await jsonOf(await get("state-limit"))).toMatchObject({ state: "limit_reached", hits: 2 });
  });

  test("after a crash lost the counter, a limit whose hits were all reserved reads limit_reached (it answers 410)", async () => {
    await create({ url: "https://example.com/", slug: "state-crashed", maxHits: 20 });
    const id = (await cp.deps.store.getLink(cp.deps.config.defaultDomain, "state-crashed"))!.id;
    // What a crashed process leaves: the whole limit reserved, its clicks never recorded, no counter running.
    await cp.deps.store.reserveHits(id, 20);
    await cp.deps.hot.resetHits(id);
    expect(await jsonOf(await get("state-crashed"))).toMatchObject({ state: "limit_reached", hits: 20 });
  });

  test("the list filters by state, evaluated at the request's time", async () => {
    const t = cp.clock.now();
    const at = (ms: number) => new Date(ms).toISOString();
    await create({ url: "https://example.com/", slug: "f-live", tags: ["state-filter"] });
    await create({ url: "https://example.com/", slug: "f-expired", tags: ["state-filter"], expiresAt: at(t + hour) });
    await create({ url: "https://example.com/", slug: "f-scheduled", tags: ["state-filter"], startsAt: at(t + 5 * hour) });
    await create({ url: "https://example.com/", slug: "f-paused", tags: ["state-filter"], status: "paused" });
    cp.clock.advance(2 * hour);
    const slugs = async (state: string) => (await jsonOf(await list(`tag=state-filter&state=${state}`))).links.map((l: { slug: string }) => l.slug);
    expect(await slugs("live")).toEqual(["f-live"]);
    expect(await slugs("expired")).toEqual(["f-expired"]);
    expect(await slugs("scheduled")).toEqual(["f-scheduled"]);
    expect(await slugs("paused")).toEqual(["f-paused"]);
    expect(await slugs("archived")).toEqual([]);
  });

  test("an unknown state is refused naming the values", async () => {
    const p = await problemOf(await list("state=dead"), 400, "invalid_input");
    expect(p.errors).toEqual([{ path: "/state", message: "must be live, scheduled, expired, limit_reached, paused or archived" }]);
  });
});

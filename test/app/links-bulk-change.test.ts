/**
 * PATCH /api/v1/links/bulk and POST /api/v1/links/bulk-delete through the Elysia app in process (issue #25): many
 * links by slugs or by the list's filters (a page of at most 500 per call, continued by nextCursor), each row
 * reported, validated as a single update, redirector caches updated, another account's links never touched.
 */
import { beforeEach, afterEach, describe, expect, test } from "bun:test";
import { BASE_URL, jsonOf, problemOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

let cp: InProcessControlPlane;
let keyA: string;
let keyB: string;

const MANY = 1_100;
const patch = (json: unknown, key = keyA) => cp.request("PATCH", "/api/v1/links/bulk", { key, json });
const remove = (json: unknown, key = keyA) => cp.request("POST", "/api/v1/links/bulk-delete", { key, json });
const ok = async (res: Response) => {
  expect(res.status).toBe(200);
  return jsonOf(res);
};
const link = async (slug: string, key = keyA) => jsonOf(await cp.request("GET", `/api/v1/links/${slug}`, { key }));
const compiled = (slug: string) => cp.deps.hot.getLink(`${cp.deps.config.defaultDomain}/${slug}`);
async function count(query: string, key = keyA): Promise<number> {
  const res = await cp.request("GET", `/api/v1/links/export?format=json${query}`, { key });
  return JSON.parse(await res.text()).length;
}

/** Repeats a filtered bulk call with each nextCursor until done; the bodies of every call. */
async function untilDone(call: (json: unknown) => Promise<Response>, body: Record<string, unknown>): Promise<any[]> {
  const bodies: any[] = [];
  let cursor: string | undefined;
  do {
    const b = await ok(await call(cursor ? { ...body, cursor } : body));
    bodies.push(b);
    cursor = b.nextCursor ?? undefined;
  } while (cursor);
  return bodies;
}

beforeEach(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  keyA = (await cp.createKey("alice@example.com")).key;
  keyB = (await cp.createKey("bob@example.com")).key;
});
afterEach(() => cp?.close());

async function seed(n: number, tags = ["campaign"]) {
  for (let from = 0; from < n; from += 500) {
    const rows = Array.from({ length: Math.min(500, n - from) }, (_, j) => ({ url: `https://example.com/${from + j}`, slug: `c-${from + j}`, tags, folder: "spring" }));
    expect((await ok(await cp.request("POST", "/api/v1/bulk", { key: keyA, json: rows }))).created).toBe(rows.length);
  }
  expect((await cp.request("POST", "/api/v1/links", { key: keyB, json: { url: "https://example.com/bob", slug: "bobs-link", tags, folder: "spring" } })).status).toBe(201);
}

describe("update by slugs", () => {
  test("each row reported: updated, another account's or unknown slug 404, a repeated slug invalid_input", async () => {
    await seed(5);
    const body = await ok(await patch({ slugs: ["c-0", "c-1", "bobs-link", "c-1", "nope-slug", "c-2"], changes: { status: "paused", folder: "autumn" } }));
    expect(body.results.map((r: any) => [r.index, r.slug, r.status, r.error?.code])).toEqual([
      [0, "c-0", "updated", undefined], [1, "c-1", "updated", undefined], [2, "bobs-link", "failed", "not_found"],
      [3, "c-1", "failed", "invalid_input"], [4, "nope-slug", "failed", "not_found"], [5, "c-2", "updated", undefined],
    ]);
    expect([body.updated, body.failed, body.nextCursor]).toEqual([3, 3, null]);
    expect(body.results[2].error).toMatchObject({ status: 404, code: "not_found", title: "Not found" });
    for (const slug of ["c-0", "c-1", "c-2"]) expect(await link(slug)).toMatchObject({ status: "paused", folder: "autumn", state: "paused" });
    expect(await link("c-3")).toMatchObject({ status: "active", folder: "spring" });
    expect(await link("bobs-link", keyB)).toMatchObject({ status: "active", folder: "spring" });
  });

  test("the redirectors' copies follow, as after a single update; ext_ names a link by its externalId", async () => {
    await seed(2);
    await ok(await cp.request("PATCH", "/api/v1/links/c-1", { key: keyA, json: { externalId: "crm-1" } }));
    expect((await compiled("c-0"))?.status).toBe("active");
    await ok(await patch({ slugs: ["c-0", "ext_crm-1"], changes: { targetUrl: "https://example.org/new", password: "s3cret" } }));
    for (const slug of ["c-0", "c-1"]) {
      expect(await link(slug)).toMatchObject({ target: "https://example.org/new", hasPassword: true });
      expect((await compiled(slug))?.target).toBe("https://example.org/new");
    }
  });

  test("addTags and removeTags change each link's own tags, ignoring case; a link they would overfill fails alone", async () => {
    await seed(2, ["campaign", "Old"]);
    const full = Array.from({ length: 20 }, (_, i) => `t${i}`);
    expect((await cp.request("POST", "/api/v1/links", { key: keyA, json: { url: "https://example.com/full", slug: "full-tags", tags: full } })).status).toBe(201);
    const body = await ok(await patch({ slugs: ["c-0", "c-1", "full-tags"], addTags: ["New", "CAMPAIGN"], removeTags: ["old"] }));
    expect(body.results.map((r: any) => r.error?.errors ?? r.status)).toEqual(["updated", "updated", [{ path: "/tags", message: expect.any(String) }]]);
    expect((await link("c-0")).tags).toEqual(["campaign", "New"]);
    expect((await link("full-tags")).tags).toEqual(full);
  });
});

test("a schedule that would start after it ends fails on the links where it would, alone", async () => {
  await seed(2);
  await ok(await cp.request("PATCH", "/api/v1/links/c-1", { key: keyA, json: { expiresAt: "2030-03-01T00:00:00Z" } }));
  const body = await ok(await patch({ slugs: ["c-0", "c-1"], changes: { startsAt: "2030-06-01T00:00:00Z" } }));
  expect(body.results.map((r: any) => [r.status, r.error?.errors?.[0]?.path])).toEqual([["updated", undefined], ["failed", "/startsAt"]]);
  expect((await link("c-1")).startsAt).toBeNull();
});

describe("update by filter", () => {
  test("1,100 matches: 500 per call and a nextCursor, every link changed once though it leaves the filter; bob's untouched", async () => {
    await seed(MANY);
    const bodies = await untilDone(patch, { filter: { tag: "campaign", state: "live" }, changes: { status: "archived" } });
    expect(bodies.map((b) => [b.updated, b.failed, b.nextCursor === null])).toEqual([[500, 0, false], [500, 0, false], [100, 0, true]]);
    const slugs = bodies.flatMap((b) => b.results.map((r: any) => r.slug));
    expect(new Set(slugs).size).toBe(MANY);
    expect(await count("&status=archived")).toBe(MANY);
    expect((await compiled("c-7"))?.status).toBe("archived");
    expect(await link("bobs-link", keyB)).toMatchObject({ status: "active", state: "live" });
  });

  test("limit sets the page; filters combine as the list's; no match is an empty answer", async () => {
    await seed(30);
    await ok(await patch({ slugs: ["c-1", "c-2", "c-3"], changes: { folder: "other" } }));
    const first = await ok(await patch({ filter: { folder: "SPRING" }, limit: 10, changes: { maxHits: 5 } }));
    expect([first.updated, typeof first.nextCursor]).toEqual([10, "string"]);
    expect(await count("&folder=spring")).toBe(27);
    const none = await ok(await patch({ filter: { tag: "nothing-here" }, changes: { status: "paused" } }));
    expect(none).toEqual({ results: [], updated: 0, failed: 0, nextCursor: null });
    const everything = await ok(await patch({ filter: {}, changes: { utmSource: "news" } }));
    expect(everything.updated).toBe(30);
  });
});

describe("delete", () => {
  test("by slugs: each row reported, another account's link 404 and kept, the redirectors' copies dropped", async () => {
    await seed(3);
    await compiled("c-0");
    const body = await ok(await remove({ slugs: ["c-0", "bobs-link", "c-2"] }));
    expect(body.results.map((r: any) => [r.slug, r.status, r.error?.code])).toEqual([["c-0", "deleted", undefined], ["bobs-link", "failed", "not_found"], ["c-2", "deleted", undefined]]);
    expect([body.deleted, body.failed, body.nextCursor]).toEqual([2, 1, null]);
    await problemOf(await cp.request("GET", "/api/v1/links/c-0", { key: keyA }), 404, "not_found");
    expect((await compiled("c-0")) ?? null).toBeNull();
    expect((await link("c-1")).slug).toBe("c-1");
    expect((await link("bobs-link", keyB)).slug).toBe("bobs-link");
  });

  test("by filter across pages: every match deleted, nothing else", async () => {
    await seed(MANY);
    expect((await cp.request("POST", "/api/v1/links", { key: keyA, json: { url: "https://example.com/keep", slug: "keep-me", tags: ["other"] } })).status).toBe(201);
    const bodies = await untilDone(remove, { filter: { tag: "campaign" } });
    expect(bodies.map((b) => b.deleted)).toEqual([500, 500, 100]);
    expect(await count("")).toBe(1);
    expect(await count("", keyB)).toBe(1);
  });
});

describe("refused calls change nothing", () => {
  const cases: [string, unknown, string[]][] = [
    ["neither slugs nor filter", { changes: { status: "paused" } }, ["/"]],
    ["both slugs and filter", { slugs: ["c-0"], filter: {}, changes: { status: "paused" } }, ["/"]],
    ["nothing to change", { slugs: ["c-0"] }, ["/changes"]],
    ["an empty changes object", { slugs: ["c-0"], changes: {} }, ["/changes"]],
    ["a bad destination", { slugs: ["c-0"], changes: { targetUrl: "javascript:alert(1)" } }, ["/changes/targetUrl"]],
    ["a bad status", { slugs: ["c-0"], changes: { status: "gone" } }, ["/changes/status"]],
    ["an unknown change", { slugs: ["c-0"], changes: { colour: "red" } }, ["/changes/colour"]],
    ["an externalId for many links", { slugs: ["c-0"], changes: { externalId: "same" } }, ["/changes/externalId"]],
    ["tags and addTags", { slugs: ["c-0"], changes: { tags: ["a"] }, addTags: ["b"] }, ["/changes/tags"]],
    ["501 slugs", { slugs: Array.from({ length: 501 }, (_, i) => `c-${i}`), changes: { status: "paused" } }, ["/slugs"]],
    ["no slugs", { slugs: [], changes: { status: "paused" } }, ["/slugs"]],
    ["a cursor without filter", { slugs: ["c-0"], cursor: "abc", changes: { status: "paused" } }, ["/cursor"]],
    ["a bad filter state", { filter: { state: "gone" }, changes: { status: "paused" } }, ["/filter/state"]],
    ["an unknown filter", { filter: { colour: "red" }, changes: { status: "paused" } }, ["/filter/colour"]],
    ["a bad cursor", { filter: {}, cursor: "!!", changes: { status: "paused" } }, ["/cursor"]],
    ["limit 501", { filter: {}, limit: 501, changes: { status: "paused" } }, ["/limit"]],
    ["an unknown field", { slugs: ["c-0"], changes: { status: "paused" }, dryRun: true }, ["/dryRun"]],
    ["an array body", [{ slug: "c-0" }], ["/"]],
  ];
  for (const [name, json, paths] of cases) {
    test(`update: ${name} answers 400 invalid_input at ${paths.join(", ")}`, async () => {
      await seed(1);
      const problem = await problemOf(await patch(json), 400, "invalid_input");
      expect(problem.errors?.map((e) => e.path)).toEqual(paths);
      expect(await link("c-0")).toMatchObject({ status: "active", tags: ["campaign"], target: "https://example.com/0" });
    });
  }

  test("delete: neither or both selectors, 501 slugs, changes, a bad filter: 400 invalid_input", async () => {
    await seed(1);
    for (const [json, path] of [[{}, "/"], [{ slugs: ["c-0"], filter: {} }, "/"], [{ slugs: Array(501).fill("c-0") }, "/slugs"], [{ slugs: ["c-0"], changes: {} }, "/changes"], [{ filter: { status: "x" } }, "/filter/status"]] as const) {
      expect((await problemOf(await remove(json), 400, "invalid_input")).errors?.map((e) => e.path)).toEqual([path]);
    }
    expect((await link("c-0")).slug).toBe("c-0");
  });

  test("no key: 401; not JSON: 400 invalid_json; other methods: 405 naming the one each answers", async () => {
    await problemOf(await cp.request("PATCH", "/api/v1/links/bulk", { json: { slugs: ["c-0"], changes: { status: "paused" } } }), 401, "unauthorized");
    await problemOf(await cp.request("POST", "/api/v1/links/bulk-delete", { key: "nope", json: { slugs: ["c-0"] } }), 401, "unauthorized");
    await problemOf(await cp.request("PATCH", "/api/v1/links/bulk", { key: keyA, body: "{", headers: { "content-type": "application/json" } }), 400, "invalid_json");
    await problemOf(await cp.request("POST", "/api/v1/links/bulk-delete", { key: keyA, body: "slugs=c-0", headers: { "content-type": "application/x-www-form-urlencoded" } }), 415, "unsupported_media_type");
    for (const [method, path, allow] of [["GET", "bulk", "PATCH"], ["DELETE", "bulk", "PATCH"], ["GET", "bulk-delete", "POST"], ["DELETE", "bulk-delete", "POST"]]) {
      const res = await cp.request(method, `/api/v1/links/${path}`, { key: keyA });
      expect(res.headers.get("allow")).toBe(allow);
      await problemOf(res, 405, "method_not_allowed");
    }
  });
});

test("the OpenAPI document describes both routes with their bodies", async () => {
  const doc = await jsonOf(await cp.request("GET", "/api/v1/openapi.json"));
  expect(Object.keys(doc.paths["/api/v1/links/bulk"])).toEqual(["patch"]);
  expect(Object.keys(doc.paths["/api/v1/links/bulk-delete"])).toEqual(["post"]);
  const body = doc.paths["/api/v1/links/bulk"].patch.requestBody.content["application/json"].schema;
  expect(Object.keys(body.properties)).toEqual(["slugs", "domain", "filter", "cursor", "limit", "changes", "addTags", "removeTags"]);
  expect(body.properties.slugs.maxItems).toBe(500);
  expect(BASE_URL).toBe(doc.servers[0].url);
});

test("export, bulk and bulk-delete are reserved: no link can take the paths these routes answer", async () => {
  for (const slug of ["export", "bulk", "bulk-delete", "Bulk"]) {
    await problemOf(await cp.request("POST", "/api/v1/links", { key: keyA, json: { url: "https://example.com", slug } }), 400, "slug_reserved");
  }
});

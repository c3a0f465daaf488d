/** GET /api/v1/links (filters, cursors, query errors) and POST /api/v1/bulk through the Elysia app in process. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BASE_URL, jsonOf, problemOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

let cp: InProcessControlPlane;
let keyA: string;
let keyB: string;

const list = async (query: string, key = keyA) => {
  const res = await cp.request("GET", `/api/v1/links${query}`, { key });
  expect(res.status).toBe(200);
  return jsonOf(res);
};
const slugsOf = (body: { links: { slug: string }[] }) => body.links.map((l) => l.slug);
const bulk = (json: unknown, key = keyA) => cp.request("POST", "/api/v1/bulk", { key, json });

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  keyA = (await cp.createKey("alice@example.com")).key;
  keyB = (await cp.createKey("bob@example.com")).key;
  // One second apart, so "newest first" has one right answer: item-6 first.
  for (let i = 0; i < 7; i++) {
    const json = { url: `https://shop.example.com/Item/${i}`, slug: `item-${i}`, tags: i % 2 ? ["odd", "shop"] : ["even"], folder: i < 3 ? "spring" : "summer" };
    expect((await cp.request("POST", "/api/v1/links", { key: keyA, json })).status).toBe(201);
    cp.clock.advance(1000);
  }
  await cp.request("PATCH", "/api/v1/links/item-6", { key: keyA, json: { status: "paused" } });
  await cp.request("POST", "/api/v1/links", { key: keyB, json: { url: "https://shop.example.com/bob", slug: "bobs-item" } });
});
afterAll(() => cp?.close());

describe("list", () => {
  test("newest first, only the caller's links, nextCursor null on the last page", async () => {
    expect(await list("").then((b) => [slugsOf(b), b.nextCursor])).toEqual([["item-6", "item-5", "item-4", "item-3", "item-2", "item-1", "item-0"], null]);
    expect(slugsOf(await list("", keyB))).toEqual(["bobs-item"]);
  });

  test("filters by tag, by folder (whole values, ignoring case), by status, and combined", async () => {
    expect(slugsOf(await list("?tag=odd"))).toEqual(["item-5", "item-3", "item-1"]);
    expect(slugsOf(await list("?folder=spring"))).toEqual(["item-2", "item-1", "item-0"]);
    expect(slugsOf(await list("?status=paused"))).toEqual(["item-6"]);
    expect(slugsOf(await list("?status=active&folder=summer&tag=even"))).toEqual(["item-4"]);
    expect(slugsOf(await list("?tag=ODD&folder=Spring"))).toEqual(["item-1"]);
    expect(slugsOf(await list("?tag=od"))).toEqual([]);
  });

  test("q searches slug and target, ignoring case; % and _ are literal characters", async () => {
    expect(slugsOf(await list("?q=ITEM/4"))).toEqual(["item-4"]);
    expect(slugsOf(await list("?q=item-2"))).toEqual(["item-2"]);
    expect(slugsOf(await list("?q=%25"))).toEqual([]);
    expect(slugsOf(await list("?q=item_"))).toEqual([]);
  });

  test("empty filter values mean no filter", async () => {
    expect(slugsOf(await list("?tag=&folder=&status=&q=&cursor=&limit="))).toHaveLength(7);
  });

  test("a cursor walks every link once, newest first, and its pages keep the filters", async () => {
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const body: any = await list(`?tag=odd&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      pages.push(slugsOf(body));
      cursor = body.nextCursor;
      expect(cursor === null || /^[A-Za-z0-9_-]+$/.test(cursor)).toBe(true);
    } while (cursor && pages.length < 10);
    expect(pages).toEqual([["item-5", "item-3"], ["item-1"]]);
  });

  test("limit defaults to 50 and goes up to 500", async () => {
    const c = await cp.createKey("many@example.com");
    const res = await bulk(Array.from({ length: 60 }, (_, i) => ({ url: `https://many.example.com/${i}` })), c.key);
    expect((await jsonOf(res)).created).toBe(60);
    const first = await list("", c.key);
    expect([first.links.length, typeof first.nextCursor]).toEqual([50, "string"]);
    expect((await list(`?cursor=${first.nextCursor}`, c.key)).links).toHaveLength(10);
    expect((await list("?limit=500", c.key)).links).toHaveLength(60);
  });

  const badQueries: [string, string, string][] = [
    ["limit=0", "/limit", "must be an integer from 1 to 500"],
    ["limit=501", "/limit", "must be an integer from 1 to 500"],
    ["limit=abc", "/limit", "must be an integer from 1 to 500"],
    ["limit=0x10", "/limit", "must be an integer from 1 to 500"],
    ["limit=1e2", "/limit", "must be an integer from 1 to 500"],
    ["limit=-1", "/limit", "must be an integer from 1 to 500"],
    ["status=deleted", "/status", "must be active, paused or archived"],
    [`q=${"q".repeat(501)}`, "/q", "must be a string of at most 500 characters"],
    ["cursor=%%%garbage", "/cursor", "invalid cursor"],
    ["cursor=bm90LWEtY3Vyc29y", "/cursor", "invalid cursor"],
    [`cursor=${Buffer.from(JSON.stringify(["1", "x"])).toString("base64url")}`, "/cursor", "invalid cursor"],
  ];
  for (const [query, path, message] of badQueries) {
    test(`${query.slice(0, 40)} answers 400 invalid_input at ${path}`, async () => {
      const problem = await problemOf(await cp.request("GET", `/api/v1/links?${query}`, { key: keyA }), 400, "invalid_input");
      expect(problem.errors).toEqual([{ path, message }]);
    });
  }

  test("every bad query parameter is named in one answer", async () => {
    const problem = await problemOf(await cp.request("GET", "/api/v1/links?limit=0&status=gone", { key: keyA }), 400, "invalid_input");
    expect(problem.errors!.map((e) => e.path)).toEqual(["/limit", "/status"]);
  });

  test("a cursor taken from another account's list only positions the page (the caller's newer link is skipped, none of the other account's appear)", async () => {
    const page = await list("?limit=1");
    expect(slugsOf(await list(`?cursor=${page.nextCursor}`, keyB))).toEqual([]);
  });
});

describe("bulk", () => {
  test("good rows are created and bad rows fail alone, one result per row in input order", async () => {
    const rows: unknown[] = Array.from({ length: 500 }, (_, i) => ({ url: `https://bulk.example.com/${i}` }));
    rows[3] = { url: "javascript:alert(1)" };
    rows[10] = { url: "https://e.com", slug: "bulk-dup" };
    rows[11] = { url: "https://e.com", slug: "bulk-dup" };
    rows[12] = { url: "https://e.com", slug: "api" };
    rows[13] = { nope: 1 };
    rows[14] = { url: "https://e.com", slug: "item-0" };
    const res = await bulk(rows);
    expect(res.status).toBe(200);
    const body = await jsonOf(res);
    expect([body.results.length, body.created, body.failed]).toEqual([500, 495, 5]);
    expect(body.results.map((r: { index: number }) => r.index)).toEqual([...Array(500).keys()]);
    const first = body.results[0];
    expect(first).toEqual({ index: 0, ok: true, slug: first.slug, domain: new URL(BASE_URL).host, shortUrl: `${BASE_URL}/${first.slug}`, target: "https://bulk.example.com/0", action: "created" });
    expect(body.results[3]).toEqual({ index: 3, ok: false, error: {
      type: "https://clink.dev/problems/invalid-input", title: "Invalid input", status: 400, detail: "url must use http or https", code: "invalid_input",
      errors: [{ path: "/url", message: "must use http or https" }],
    } });
    expect(body.results[10]).toMatchObject({ index: 10, ok: true, slug: "bulk-dup" });
    expect(body.results[11]).toMatchObject({ index: 11, ok: false, error: { status: 409, code: "slug_taken", detail: '"bulk-dup" is already taken' } });
    expect(body.results[12]).toMatchObject({ index: 12, ok: false, error: { status: 400, code: "slug_reserved" } });
    expect(body.results[13]).toMatchObject({ index: 13, ok: false, error: { code: "invalid_input", errors: [{ path: "/url" }, { path: "/nope", message: "unknown field" }] } });
    expect(body.results[14]).toMatchObject({ index: 14, ok: false, error: { code: "slug_taken" } });
    // What was created is listed, with the link object's defaults.
    const stored = await jsonOf(await cp.request("GET", `/api/v1/links/${body.results[499].slug}`, { key: keyA }));
    expect([stored.target, stored.status, stored.tags]).toEqual(["https://bulk.example.com/499", "active", []]);
  });

  test("a { links: [...] } envelope is accepted", async () => {
    expect(await jsonOf(await bulk({ links: [{ url: "https://e.com/env", slug: "bulk-envelope" }] }))).toMatchObject({ created: 1, failed: 0 });
  });

  test("an empty array creates nothing and answers 200", async () => {
    expect(await jsonOf(await bulk([]))).toEqual({ results: [], created: 0, updated: 0, failed: 0 });
  });

  test("more than 500 rows answers 400 invalid_input at / and creates nothing", async () => {
    const res = await bulk(Array.from({ length: 501 }, (_, i) => ({ url: "https://too-many.example.com", slug: `too-many-${i}` })));
    const problem = await problemOf(res, 400, "invalid_input");
    expect([problem.detail, problem.errors]).toEqual(["Bulk create takes at most 500 links", [{ path: "/", message: "at most 500 links per request" }]]);
    expect(slugsOf(await list("?q=too-many"))).toEqual([]);
  });

  test("a body that is neither an array nor an envelope answers 400 invalid_input", async () => {
    await problemOf(await bulk({ url: "https://e.com" }), 400, "invalid_input");
    await problemOf(await bulk({ links: [], extra: 1 }), 400, "invalid_input");
    await problemOf(await bulk("rows"), 400, "invalid_input");
  });

  test("a bulk with malformed JSON answers 400 invalid_json", async () => {
    await problemOf(await cp.request("POST", "/api/v1/bulk", { key: keyA, body: "[{", headers: { "content-type": "application/json" } }), 400, "invalid_json");
  });
});

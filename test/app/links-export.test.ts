/**
 * GET /api/v1/links/export through the Elysia app in process (issue #25): every link of the caller, all or filtered
 * as the list is, as CSV (RFC 4180, formulas neutralised) or a JSON array, streamed page by page.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EXPORT_COLUMNS } from "../../control/links/export.ts";
import { parseCsv } from "./stats-helpers.ts";
import { BASE_URL, jsonOf, problemOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

let cp: InProcessControlPlane;
let keyA: string;
let keyB: string;

const MANY = 1_203;
const exportOf = (query = "", key = keyA) => cp.request("GET", `/api/v1/links/export${query}`, { key });

/** Every link of the list, page by page, as the list shows them. */
async function listAll(query = ""): Promise<any[]> {
  const links: any[] = [];
  let cursor: string | null = "";
  while (cursor !== null) {
    const body: any = await jsonOf(await cp.request("GET", `/api/v1/links?limit=500&cursor=${cursor}${query}`, { key: keyA }));
    links.push(...body.links);
    cursor = body.nextCursor;
  }
  return links;
}

const HOSTILE = {
  url: 'https://example.com/a?x=1,2&q="quoted"',
  slug: "hostile",
  folder: "=HYPERLINK(\"http://evil.test\",\"x\")",
  tags: ["+SUM(1,2)", "@cmd", "-2+3"],
  ogTitle: "line one\r\nline two, with \"quotes\"",
  ogDescription: "-1+1 and more",
  utmSource: "ünïcødé 🎉",
  rules: [{ kind: "country", match: "DE", url: "https://example.de/?a=1,b=2" }],
};

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  keyA = (await cp.createKey("alice@example.com")).key;
  keyB = (await cp.createKey("bob@example.com")).key;
  for (let from = 0; from < MANY; from += 500) {
    const rows = Array.from({ length: Math.min(500, MANY - from) }, (_, j) => {
      const i = from + j;
      return { url: `https://example.com/item/${i}`, slug: `item-${i}`, tags: i % 3 === 0 ? ["three"] : [], folder: i % 2 ? "odd" : "even" };
    });
    const res = await cp.request("POST", "/api/v1/bulk", { key: keyA, json: rows });
    expect((await jsonOf(res)).created).toBe(rows.length);
  }
  cp.clock.advance(1000);
  expect((await cp.request("POST", "/api/v1/links", { key: keyA, json: HOSTILE })).status).toBe(201);
  expect((await cp.request("PATCH", "/api/v1/links/item-7", { key: keyA, json: { status: "paused" } })).status).toBe(200);
  expect((await cp.request("POST", "/api/v1/links", { key: keyB, json: { url: "https://example.com/bob", slug: "bobs-link" } })).status).toBe(201);
});
afterAll(() => cp?.close());

describe("CSV", () => {
  test("a header of the link object's fields, then every link of the caller, newest first, as the list has them", async () => {
    const res = await exportOf();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="clink-links-2030-01-15.csv"');
    expect([res.headers.get("cache-control"), res.headers.get("x-content-type-options"), res.headers.get("ratelimit-limit")]).toEqual(["no-store", "nosniff", "100000"]);
    const [header, ...rows] = parseCsv(await res.text());
    expect(header).toEqual(EXPORT_COLUMNS);
    expect(header).toEqual(expect.arrayContaining(["slug", "target", "shortUrl", "state", "tags", "folder", "createdAt"]));
    const listed = await listAll();
    expect(rows).toHaveLength(MANY + 1);
    expect(rows.map((r) => r[header.indexOf("slug")])).toEqual(listed.map((l) => l.slug));
    expect(rows.map((r) => r[header.indexOf("state")])).toEqual(listed.map((l) => l.state));
    expect(rows.some((r) => r.includes("bobs-link"))).toBe(false);
    const item = rows.find((r) => r[header.indexOf("slug")] === "item-3")!;
    expect(Object.fromEntries(header.map((h, i) => [h, item[i]]))).toMatchObject({
      target: "https://example.com/item/3", shortUrl: `${BASE_URL}/item-3`, tags: "three", folder: "odd", status: "active", maxHits: "", hasPassword: "false", rules: "", abUrls: "", expiresAt: "",
    });
  });

  test("hostile values are quoted (RFC 4180) and formulas neutralised with a leading apostrophe", async () => {
    const text = await (await exportOf("?q=hostile")).text();
    const [header, row, ...rest] = parseCsv(text);
    expect(rest).toEqual([]);
    const got = Object.fromEntries(header.map((h, i) => [h, row[i]]));
    expect(got).toMatchObject({
      target: HOSTILE.url, folder: `'${HOSTILE.folder}`, tags: "'+SUM(1,2),@cmd,-2+3", ogTitle: HOSTILE.ogTitle,
      ogDescription: `'${HOSTILE.ogDescription}`, utmSource: HOSTILE.utmSource, rules: JSON.stringify(HOSTILE.rules),
    });
    expect(text).toContain('"line one\r\nline two, with ""quotes"""');
  });

  test("the body arrives in several chunks, a page of the list at a time", async () => {
    const reader = (await exportOf()).body!.getReader();
    let chunks = 0;
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks++;
    expect(chunks).toBeGreaterThanOrEqual(Math.ceil((MANY + 1) / 500) + 1);
  });
});

describe("filters, as the list takes them", () => {
  const slugs = async (query: string) => {
    const [header, ...rows] = parseCsv(await (await exportOf(query)).text());
    return rows.map((r) => r[header.indexOf("slug")]);
  };
  for (const query of ["&tag=three", "&folder=ODD", "&status=paused", "&state=paused", "&q=item-12", "&tag=three&folder=even", "&tag=nothing"]) {
    test(`${query.slice(1)} exports exactly what the list shows`, async () => {
      const expected = (await listAll(query)).map((l) => l.slug);
      expect(await slugs(`?format=csv${query}`)).toEqual(expected);
      if (query !== "&tag=nothing") expect(expected.length).toBeGreaterThan(0);
    });
  }
  test("tag=three crosses pages of the list (over 400 links)", async () => {
    expect(await slugs("?tag=three")).toHaveLength(Math.ceil(MANY / 3));
  });
  test("an empty filter value means no filter; no link matching gives the header alone", async () => {
    expect(await slugs("?tag=&folder=")).toHaveLength(MANY + 1);
    expect(await (await exportOf("?tag=nothing")).text()).toBe(`${EXPORT_COLUMNS.join(",")}\r\n`);
  });
});

describe("JSON", () => {
  test("one array of link objects, equal to the list's pages", async () => {
    const res = await exportOf("?format=json");
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="clink-links-2030-01-15.json"');
    const links = JSON.parse(await res.text());
    expect(links).toEqual(await listAll());
    expect(links).toHaveLength(MANY + 1);
  });

  test("filtered, and an empty result is an empty array", async () => {
    expect(JSON.parse(await (await exportOf("?format=json&tag=three&folder=odd")).text())).toEqual(await listAll("&tag=three&folder=odd"));
    expect(JSON.parse(await (await exportOf("?format=json&tag=nothing")).text())).toEqual([]);
    expect(JSON.parse(await (await exportOf("?format=json", keyB)).text()).map((l: any) => l.slug)).toEqual(["bobs-link"]);
  });
});

describe("errors", () => {
  test("no key or a bad key: 401", async () => {
    await problemOf(await cp.request("GET", "/api/v1/links/export"), 401, "unauthorized");
    await problemOf(await exportOf("", "not-a-key"), 401, "unauthorized");
  });
  const badParameters: [string, string][] = [
    ["?format=xml", "format"], ["?format=", "format"], ["?format=csv&format=json", "format"], ["?limit=10", "limit"],
    ["?cursor=abc", "cursor"], ["?search=x", "search"], ["?tag=a&tag=b", "tag"],
  ];
  for (const [query, name] of badParameters) {
    test(`${query} answers 400 invalid_parameter naming ${name}`, async () => {
      const problem = await problemOf(await exportOf(query), 400, "invalid_parameter");
      expect(problem.errors?.map((e) => e.path)).toEqual([`/${name}`]);
    });
  }
  test("a bad filter value answers as the list does: 400 invalid_input before any byte is sent", async () => {
    for (const [query, path] of [["?state=gone", "/state"], ["?status=deleted", "/status"], [`?q=${"x".repeat(501)}`, "/q"]]) {
      const problem = await problemOf(await exportOf(query), 400, "invalid_input");
      expect(problem.errors?.map((e) => e.path)).toEqual([path]);
    }
  });
  test("the OpenAPI document lists the route with format and the list's filters", async () => {
    const doc = await jsonOf(await cp.request("GET", "/api/v1/openapi.json"));
    const get = doc.paths["/api/v1/links/export"].get;
    expect(get.parameters.map((p: { name: string }) => p.name)).toEqual(["format", "q", "tag", "folder", "status", "state", "externalId", "domain"]);
    expect(Object.keys(get.responses["200"].content)).toEqual(["text/csv"]);
  });

  test("other methods answer 405 naming GET", async () => {
    const res = await cp.request("POST", "/api/v1/links/export", { key: keyA });
    expect(res.headers.get("allow")).toBe("GET");
    await problemOf(res, 405, "method_not_allowed");
  });
});

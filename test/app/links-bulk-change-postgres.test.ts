/**
 * Export and bulk changes over the Postgres store (issue #25): both page through the store's list cursor, so the
 * same walk over 1,100 links is checked on the second store's SQL.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { EXPORT_COLUMNS } from "../../control/links/export.ts";
import { jsonOf, START_TIME, type InProcessControlPlane } from "../helpers/in-process.ts";
import { parseCsv, startPostgresControlPlane } from "./stats-helpers.ts";

const MANY = 1_100;
let cp: InProcessControlPlane;
let keyA: string;
let keyB: string;

const ok = async (res: Response) => {
  expect(res.status).toBe(200);
  return jsonOf(res);
};
const SLUG = EXPORT_COLUMNS.indexOf("slug");
const exported = async (query: string, key = keyA) => parseCsv(await (await cp.request("GET", `/api/v1/links/export${query}`, { key })).text()).slice(1);

beforeAll(async () => {
  cp = await startPostgresControlPlane(START_TIME);
  keyA = (await cp.createKey("alice@example.com")).key;
  keyB = (await cp.createKey("bob@example.com")).key;
  for (let from = 0; from < MANY; from += 500) {
    const rows = Array.from({ length: Math.min(500, MANY - from) }, (_, j) => ({ url: `https://example.com/${from + j}`, slug: `pg-${from + j}`, tags: ["Campaign"] }));
    expect((await ok(await cp.request("POST", "/api/v1/bulk", { key: keyA, json: rows }))).created).toBe(rows.length);
  }
  expect((await cp.request("POST", "/api/v1/links", { key: keyB, json: { url: "https://example.com/b", slug: "pg-bob", tags: ["campaign"] } })).status).toBe(201);
});
afterAll(() => cp?.close());

test("export: every link across three list pages, once each, and only the caller's", async () => {
  const rows = await exported("?tag=campaign");
  expect(rows).toHaveLength(MANY);
  expect(new Set(rows.map((r) => r[SLUG])).size).toBe(MANY);
  expect((await exported("", keyB)).map((r) => r[SLUG])).toEqual(["pg-bob"]);
});

test("bulk update by filter over pages, then bulk delete by filter: every match once, bob's link untouched", async () => {
  const pages: number[] = [];
  let cursor: string | null = null;
  do {
    const body: any = await ok(await cp.request("PATCH", "/api/v1/links/bulk", { key: keyA, json: { filter: { tag: "campaign", status: "active" }, changes: { status: "paused" }, ...(cursor ? { cursor } : {}) } }));
    pages.push(body.updated);
    cursor = body.nextCursor;
  } while (cursor);
  expect(pages).toEqual([500, 500, 100]);
  expect(await exported("?status=paused")).toHaveLength(MANY);
  const deleted: number[] = [];
  do {
    const body: any = await ok(await cp.request("POST", "/api/v1/links/bulk-delete", { key: keyA, json: { filter: { status: "paused" }, limit: 400, ...(cursor ? { cursor } : {}) } }));
    deleted.push(body.deleted);
    cursor = body.nextCursor;
  } while (cursor);
  expect(deleted).toEqual([400, 400, 300]);
  expect(await exported("")).toHaveLength(0);
  expect((await exported("", keyB))[0]).toEqual(expect.arrayContaining(["pg-bob", "active"]));
});

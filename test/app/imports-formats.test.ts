/**
 * Each importer on its sample file (test/fixtures/imports, written from the sources' documented exports with
 * unicode, quotes, embedded line breaks and hostile rows), through POST /api/v1/imports over app.handle: what is
 * carried over, what is refused and why, re-imports that change nothing, and skip versus rename.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import { fixture, importToEnd, linkBySlug, reportsOf } from "./imports-helpers.ts";

let cp: InProcessControlPlane;
beforeAll(async () => (cp = await startControlPlane()));
afterAll(() => cp.close());

describe("Bitly CSV export", () => {
  test("slugs, destinations, titles, tags, dates and clicks carried over; hostile, undated and duplicate rows reported", async () => {
    const { key } = await cp.createKey("bitly@example.com");
    const job = await importToEnd(cp, key, fixture("bitly.csv"), { format: "bitly" });
    expect(job).toMatchObject({ status: "done", format: "bitly", onConflict: "skip", totalRows: 8, progress: 1, error: null });
    expect(job.counts).toEqual({ created: 4, skipped: 1, renamed: 0, failed: 3 });
    expect(reportsOf(job)).toEqual(["6 failed invalid_url", "7 failed invalid_url", "8 failed invalid_date", "9 skipped duplicate_row"]);
    const spring = await linkBySlug(cp, key, "3xKq9Zp");
    expect(spring).toMatchObject({
      target: "https://example.com/spring?utm=a&b=1", ogTitle: 'Spring sale, 50% off — "today" only', tags: ["launch", "Q1"],
      createdAt: "2021-03-04T05:06:07.000Z", hits: 1234, externalId: "bitly:bit.ly:3xKq9Zp",
    });
    expect(await linkBySlug(cp, key, "cafe1")).toMatchObject({ target: "https://xn--exmple-cua.com/%C3%BC/%C3%B1", ogTitle: "Ünïcödé 日本語 title" });
    // Cells are data: a formula is stored as the text it is, never evaluated (exports neutralise it later).
    expect(await linkBySlug(cp, key, "formula1")).toMatchObject({ ogTitle: '=HYPERLINK("http://evil.test","click")', tags: ["=cmd|' /C calc'!A0", "+tag"], hits: 7 });
    expect((await linkBySlug(cp, key, "multiline")).ogTitle).toBe("Line one\nline two");
  });

  test("importing the same file again changes nothing: every row is already imported", async () => {
    const { key } = await cp.createKey("bitly@example.com"); // the account of the test above, which imported it
    const before = await linkBySlug(cp, key, "3xKq9Zp");
    cp.clock.advance(60_000);
    const again = await importToEnd(cp, key, fixture("bitly.csv"), { format: "bitly", onConflict: "rename" });
    expect(again.counts).toEqual({ created: 0, skipped: 5, renamed: 0, failed: 3 });
    expect(again.rows.filter((r: any) => r.code === "already_imported")).toHaveLength(4);
    expect(await linkBySlug(cp, key, "3xKq9Zp")).toEqual(before);
  });
});

describe("Bitly's web export and its API's JSON", () => {
  test("web export: the custom back-half when the link has one, else the bitlink's; Destination URL, title, date, tags", async () => {
    const { key } = await cp.createKey("bitly-web@example.com");
    const job = await importToEnd(cp, key, fixture("bitly-web.csv"), { format: "bitly" });
    expect(job.counts).toEqual({ created: 3, skipped: 0, renamed: 0, failed: 1 });
    expect(reportsOf(job)).toEqual(["5 failed invalid_url"]);
    expect(await linkBySlug(cp, key, "spring-sale")).toMatchObject({
      target: "https://example.com/spring?utm_source=bitly", ogTitle: 'Spring sale, "50%" off', tags: ["launch", "Q1"],
      createdAt: "2023-03-01T09:30:00.000Z", externalId: "bitly:bit.ly:3aBcDeF",
    });
    expect(await linkBySlug(cp, key, "4XyZ9q")).toMatchObject({ target: "https://xn--exmple-cua.com/%C3%BC", ogTitle: "Ünïcödé 日本語", externalId: "bitly:bit.ly:4XyZ9q" });
    expect(await linkBySlug(cp, key, "formula")).toMatchObject({ ogTitle: '=HYPERLINK("http://evil.test")', tags: ["=cmd|' /C calc'!A0"] });
  });

  test("the API's bitlinks JSON, two pages saved one after the other: custom bitlink first, tags, dates; again: nothing new", async () => {
    const { key } = await cp.createKey("bitly-api@example.com");
    const job = await importToEnd(cp, key, fixture("bitly-api.json"), { format: "bitly" });
    expect(job).toMatchObject({ status: "done", totalRows: 3 });
    expect(job.counts).toEqual({ created: 2, skipped: 0, renamed: 0, failed: 1 });
    expect(reportsOf(job)).toEqual(["4 failed invalid_url"]);
    expect(await linkBySlug(cp, key, "docs-home")).toMatchObject({
      target: "https://example.com/docs?ref=bitly", ogTitle: 'Docs — "home"', tags: ["docs", "Q4"], createdAt: "2020-10-26T17:20:40.000Z",
      externalId: "bitly:bit.ly:3kQpA1b",
    });
    expect(await linkBySlug(cp, key, "3zZyXw9")).toMatchObject({ ogTitle: "日本語", tags: [], createdAt: "2021-01-02T03:04:05.000Z" });
    const again = await importToEnd(cp, key, fixture("bitly-api.json"), { format: "bitly" });
    expect(again.counts).toEqual({ created: 0, skipped: 2, renamed: 0, failed: 1 });
  });

  test("JSON that is not the API's answer: the job fails saying why, with nothing written", async () => {
    const { key } = await cp.createKey("bitly-bad@example.com");
    const cut = '{"links":[{"id":"bit.ly/a1","link":"https://bit.ly/a1","long_url":"https://example.com/a"}]}{"links":';
    for (const [body, code] of [['{"data":[]}', "missing_header"], [cut, "malformed_file"], ['{"links":[]} trailing', "malformed_file"]] as const) {
      const job = await importToEnd(cp, key, body, { format: "bitly" });
      expect([job.status, job.error?.code, job.counts.created]).toEqual(["failed", code, 0]);
    }
    expect((await cp.request("GET", "/api/v1/links/a1", { key })).status).toBe(404);
  });
});

describe("Shlink CSV export", () => {
  test("short codes, | separated tags and visits; a data: URL and a non-ASCII short code refused", async () => {
    const { key } = await cp.createKey("shlink@example.com");
    const job = await importToEnd(cp, key, fixture("shlink.csv"), { format: "shlink" });
    expect(job.counts).toEqual({ created: 2, skipped: 0, renamed: 0, failed: 2 });
    expect(reportsOf(job)).toEqual(["3 failed invalid_slug", "4 failed invalid_url"]);
    expect((await linkBySlug(cp, key, "start")).tags).toEqual(["docs", "guides"]);
    const emoji = await linkBySlug(cp, key, "emoji");
    expect(emoji).toMatchObject({ ogTitle: "Party 🎉", tags: ["fun", "🎉"], hits: 12, createdAt: "2023-05-04T10:00:00.000Z", externalId: "shlink:s.test:emoji" });
  });

  test("a slug another account holds is skipped with onConflict=skip and renamed with onConflict=rename", async () => {
    const other = await cp.createKey("slug-owner@example.com");
    expect((await cp.request("POST", "/api/v1/links", { key: other.key, json: { url: "https://example.com/", slug: "guides" } })).status).toBe(201);
    const csv = "shortCode,longUrl\nguides,https://example.org/guides\n";
    const skip = await cp.createKey("skipper@example.com");
    const skipped = await importToEnd(cp, skip.key, csv, { format: "shlink", onConflict: "skip" });
    expect(skipped.counts).toEqual({ created: 0, skipped: 1, renamed: 0, failed: 0 });
    expect(skipped.rows).toEqual([{ row: 2, outcome: "skipped", code: "slug_taken", message: 'The slug "guides" is taken', slug: "guides" }]);
    const rename = await cp.createKey("renamer@example.com");
    const renamed = await importToEnd(cp, rename.key, csv, { format: "shlink", onConflict: "rename" });
    expect(renamed.counts).toEqual({ created: 1, skipped: 0, renamed: 1, failed: 0 });
    expect(renamed.rows[0]).toMatchObject({ row: 2, outcome: "renamed", slug: "guides", newSlug: "guides-2" });
    expect((await linkBySlug(cp, rename.key, "guides-2")).target).toBe("https://example.org/guides");
  });
});

describe("Kutt and YOURLS exports, and any CSV with a mapping", () => {
  test("Kutt's JSON: address, target, description and visit_count; a vbscript: target refused", async () => {
    const { key } = await cp.createKey("kutt@example.com");
    const job = await importToEnd(cp, key, fixture("kutt.json"), { format: "kutt" });
    expect(job.counts).toEqual({ created: 2, skipped: 0, renamed: 0, failed: 1 });
    expect(reportsOf(job)).toEqual(["4 failed invalid_url"]);
    expect(await linkBySlug(cp, key, "kutt-one")).toMatchObject({ ogTitle: 'First "quoted" link', hits: 5, externalId: "kutt:7b0c9c8e-1f2a-4c3d-9e8f-0a1b2c3d4e5f" });
  });

  test("Kutt's API pages saved one after another (50 links a page at most): every page's links", async () => {
    const { key } = await cp.createKey("kutt-pages@example.com");
    const job = await importToEnd(cp, key, fixture("kutt-pages.json"), { format: "kutt" });
    expect(job.counts).toEqual({ created: 3, skipped: 0, renamed: 0, failed: 0 });
    expect(await linkBySlug(cp, key, "page-one-b")).toMatchObject({ target: "https://example.net/1b", ogTitle: "Locked one", hasPassword: false, expiresAt: null });
    expect(await linkBySlug(cp, key, "page-two")).toMatchObject({ ogTitle: 'Brace } and " inside', hits: 11, createdAt: "2024-02-03T08:00:00.000Z" });
  });

  test("YOURLS: keyword, timestamp as UTC or Unix time, clicks; short and reserved keywords renamed on request", async () => {
    const { key } = await cp.createKey("yourls@example.com");
    const skip = await importToEnd(cp, key, fixture("yourls.csv"), { format: "yourls" });
    expect(reportsOf(skip)).toEqual(["2 failed invalid_slug", "3 skipped slug_reserved"]);
    expect(await linkBySlug(cp, key, "my-link")).toMatchObject({ ogTitle: "Tïtle with, comma", createdAt: "2019-07-08T09:10:11.000Z", hits: 9 });
    const rename = await importToEnd(cp, key, fixture("yourls.csv"), { format: "yourls", onConflict: "rename" });
    expect(rename.counts).toEqual({ created: 2, skipped: 1, renamed: 2, failed: 0 });
    expect(reportsOf(rename)).toEqual(["2 renamed invalid_slug", "3 renamed slug_reserved", "4 skipped already_imported"]);
    expect(await linkBySlug(cp, key, "ab-2")).toMatchObject({ hits: 42, createdAt: "2019-07-08T09:10:11.000Z" });
    expect((await linkBySlug(cp, key, "docs-2")).target).toBe("https://yourls.example/docs");
  });

  test("a CSV with a column mapping; semicolon-separated files too", async () => {
    const { key } = await cp.createKey("mapped@example.com");
    const mapping = JSON.stringify({ url: "Long URL", slug: "Back-half", title: "Name", tags: "Labels" });
    const job = await importToEnd(cp, key, fixture("generic.csv"), { format: "csv", mapping });
    expect(job.counts).toEqual({ created: 2, skipped: 0, renamed: 0, failed: 1 });
    expect(reportsOf(job)).toEqual(["4 failed invalid_url"]);
    expect(await linkBySlug(cp, key, "home-page")).toMatchObject({ ogTitle: "Homepage", tags: ["site", "main"], externalId: "csv:home-page" });
    const semi = await importToEnd(cp, key, fixture("semicolon.csv"), { format: "csv", mapping: '{"url":"url","slug":"slug"}' });
    expect(semi.counts.created).toBe(1);
    expect((await linkBySlug(cp, key, "semi-colon")).target).toBe("https://example.com/a");
  });
});

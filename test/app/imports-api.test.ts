/**
 * The import job API over app.handle: every bad file refused with its code and nothing written, the 50 MB limit
 * before the body is read whole, jobs visible only to their account, the list, and a write that fails halfway
 * leaving a failed job that says what it wrote and that the same file sent again finishes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BASE_URL, jsonOf, problemOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import type { ErrorCode } from "../../shared/errors.ts";
import { fixture, importToEnd, postImport } from "./imports-helpers.ts";

let cp: InProcessControlPlane;
beforeAll(async () => (cp = await startControlPlane()));
afterAll(() => cp.close());

const linkCount = async (key: string) => (await jsonOf(await cp.request("GET", "/api/v1/links?limit=500", { key }))).links.length;

describe("bad files are refused with a stable code and nothing is written", () => {
  const cases: [string, string | Uint8Array, Record<string, string>, ErrorCode, RegExp][] = [
    ["Latin-1 bytes", fixture("latin1.csv"), { format: "bitly" }, "invalid_encoding", /not UTF-8 \(line 2/],
    ["UTF-16 with its BOM", fixture("utf16.csv"), { format: "bitly" }, "invalid_encoding", /UTF-16/],
    ["no header row", fixture("no-header.csv"), { format: "bitly" }, "missing_header", /long_url|longurl/],
    ["an empty file", fixture("empty.csv"), { format: "shlink" }, "missing_header", /empty/],
    ["an unknown format", fixture("bitly.csv"), { format: "rebrandly" }, "invalid_parameter", /format must be/],
    ["csv without a mapping", fixture("generic.csv"), { format: "csv" }, "invalid_parameter", /mapping is required/],
    ["a mapping that is not JSON", fixture("generic.csv"), { format: "csv", mapping: "{url:" }, "invalid_parameter", /JSON object/],
    ["a mapping naming an unknown field", fixture("generic.csv"), { format: "csv", mapping: '{"url":"Long URL","owner":"x"}' }, "invalid_parameter", /owner/],
    ["an unknown onConflict", fixture("bitly.csv"), { format: "bitly", onConflict: "overwrite" }, "invalid_parameter", /skip or rename/],
  ];
  for (const [name, body, query, code, detail] of cases) {
    test(`${name}: 400 ${code}`, async () => {
      const { key } = await cp.createKey("bad-files@example.com");
      const problem = await problemOf(await postImport(cp, key, body, query), 400, code);
      expect(problem.detail).toMatch(detail);
      expect(await linkCount(key)).toBe(0);
    });
  }

  test("a CSV broken past its header (an unclosed quote) fails the job in pass 1: malformed_file, nothing written", async () => {
    const { key } = await cp.createKey("malformed@example.com");
    const csv = "long_url,link\nhttps://example.com/ok,https://bit.ly/fine-one\n" + 'https://example.com/b,"unclosed\n';
    const job = await importToEnd(cp, key, csv, { format: "bitly" });
    expect(job).toMatchObject({ status: "failed", counts: { created: 0 }, error: { code: "malformed_file" } });
    expect(job.error.message).toContain("Nothing was written");
    expect(await linkCount(key)).toBe(0);
  });

  test("a body over 50 MB: 413 problem+json, and reading stops at the limit instead of taking it all", async () => {
    const { key } = await cp.createKey("big@example.com");
    const chunk = new Uint8Array(1024 * 1024).fill(0x61);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent >= 80) return c.close();
        sent++;
        c.enqueue(chunk);
      },
    });
    const req = new Request(`${BASE_URL}/api/v1/imports?format=bitly`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body });
    await problemOf(await cp.handle(req), 413, "payload_too_large");
    expect(sent).toBeLessThan(80);
    const declared = new Request(`${BASE_URL}/api/v1/imports?format=bitly`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-length": String(60 * 1024 * 1024) }, body: "x" });
    await problemOf(await cp.handle(declared), 413, "payload_too_large");
  });
});

describe("the job API", () => {
  test("202 with the job; another account gets 404 for it and lists only its own jobs; 401 without a key", async () => {
    const a = await cp.createKey("owner@example.com");
    const b = await cp.createKey("stranger@example.com");
    const res = await postImport(cp, a.key, "long_url\nhttps://example.com/x\n", { format: "bitly" });
    expect(res.status).toBe(202);
    const job = await jsonOf(res);
    expect(job).toMatchObject({ status: "queued", format: "bitly", onConflict: "skip", counts: { created: 0, skipped: 0, renamed: 0, failed: 0 }, rows: [], error: null });
    await problemOf(await cp.request("GET", `/api/v1/imports/${job.id}`, { key: b.key }), 404, "not_found");
    await problemOf(await cp.request("GET", "/api/v1/imports/imp_nope", { key: a.key }), 404, "not_found");
    await problemOf(await cp.request("GET", "/api/v1/imports"), 401, "unauthorized");
    expect((await jsonOf(await cp.request("GET", "/api/v1/imports", { key: b.key }))).imports).toEqual([]);
    const listed = (await jsonOf(await cp.request("GET", "/api/v1/imports", { key: a.key }))).imports;
    expect(listed.map((j: any) => j.id)).toEqual([job.id]);
    await problemOf(await cp.request("DELETE", `/api/v1/imports/${job.id}`, { key: a.key }), 405, "method_not_allowed");
  });

  test("a multipart form with a file part and option fields is taken as well", async () => {
    const { key } = await cp.createKey("multipart@example.com");
    const form = new FormData();
    form.set("format", "shlink");
    form.set("onConflict", "rename");
    form.set("file", new File(["shortCode,longUrl\nform-one,https://example.com/form\n"], "shlink export.csv", { type: "text/csv" }));
    const res = await cp.handle(new Request(`${BASE_URL}/api/v1/imports`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form }));
    expect(res.status).toBe(202);
    expect(await jsonOf(res)).toMatchObject({ format: "shlink", onConflict: "rename", fileName: "shlink export.csv" });
  });

  test("a store failure in pass 2 fails the job with what was written; the same file again finishes it", async () => {
    const { key } = await cp.createKey("halfway@example.com");
    const rows = Array.from({ length: 700 }, (_, i) => `https://example.com/${i},https://bit.ly/half-${i}`);
    const csv = `long_url,link\n${rows.join("\n")}\n`;
    const store = cp.deps.store;
    const insertLinks = store.insertLinks;
    let calls = 0;
    store.insertLinks = async (links) => {
      if (++calls === 2) throw new Error("disk full");
      return insertLinks.call(store, links);
    };
    let failed: any;
    try {
      failed = await importToEnd(cp, key, csv, { format: "bitly" });
    } finally {
      store.insertLinks = insertLinks;
    }
    expect(failed).toMatchObject({ status: "failed", counts: { created: 500 }, error: { code: "internal" } });
    expect(failed.error.message).toContain("500 links were written before it stopped");
    const again = await importToEnd(cp, key, csv, { format: "bitly" });
    expect(again).toMatchObject({ status: "done", counts: { created: 200, skipped: 500, failed: 0 } });
  });
});

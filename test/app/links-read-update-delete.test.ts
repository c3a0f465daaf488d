/** GET, PATCH and DELETE /api/v1/links/{slug} through the Elysia app in process (§3, §3.2, §3.3). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { jsonOf, linkObject, problemOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

let cp: InProcessControlPlane;
let keyA: string;
let keyB: string;

const create = (json: unknown) => cp.request("POST", "/api/v1/links", { key: keyA, json });
const get = (slug: string, key = keyA) => cp.request("GET", `/api/v1/links/${slug}`, { key });
const patch = (slug: string, json: unknown, key = keyA) => cp.request("PATCH", `/api/v1/links/${slug}`, { key, json });
const del = (slug: string, key = keyA) => cp.request("DELETE", `/api/v1/links/${slug}`, { key });

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  keyA = (await cp.createKey("alice@example.com")).key;
  keyB = (await cp.createKey("bob@example.com")).key;
});
afterAll(() => cp?.close());

describe("GET", () => {
  test("answers 200 with the same link object the create answered", async () => {
    const created = await jsonOf(await create({ url: "https://example.com/read", slug: "read-me", tags: ["a"] }));
    const res = await get("read-me");
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual(created);
  });

  test("an unknown slug answers 404 not_found naming the slug", async () => {
    expect((await problemOf(await get("no-such-link"), 404, "not_found")).detail).toBe('No link "no-such-link"');
  });
});

describe("another account's link", () => {
  test("GET, PATCH, DELETE and stats answer exactly as for an unknown slug, and the link stays unchanged", async () => {
    const original = await jsonOf(await create({ url: "https://private.example.com/", slug: "alices-link", folder: "mine" }));
    const answers = [
      [await get("alices-link", keyB), await get("nobodys-link", keyB)],
      [await patch("alices-link", { folder: "stolen" }, keyB), await patch("nobodys-link", { folder: "stolen" }, keyB)],
      [await del("alices-link", keyB), await del("nobodys-link", keyB)],
      [await cp.request("GET", "/api/v1/links/alices-link/stats", { key: keyB }), await cp.request("GET", "/api/v1/links/nobodys-link/stats", { key: keyB })],
    ];
    for (const [foreign, unknown] of answers) {
      const [f, u] = [await problemOf(foreign, 404, "not_found"), await problemOf(unknown, 404, "not_found")];
      expect(JSON.stringify(f).replace("alices-link", "SLUG")).toBe(JSON.stringify(u).replace("nobodys-link", "SLUG"));
      expect(JSON.stringify(f)).not.toContain("private.example.com");
    }
    expect(await jsonOf(await get("alices-link"))).toEqual(original);
  });
});

describe("PATCH", () => {
  test("changes only the fields present, null and \"\" clear, and updatedAt moves to the clock's time", async () => {
    await create({ url: "https://example.com/before", slug: "patch-me", folder: "f", utmSource: "nl", utmMedium: "email", tags: ["t"] });
    cp.clock.advance(60_000);
    const res = await patch("patch-me", { targetUrl: "https://example.com/after", folder: null, utmSource: "", maxHits: 10 });
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual(linkObject("patch-me", "https://example.com/after", {
      utmMedium: "email", tags: ["t"], maxHits: 10, updatedAt: new Date(cp.clock.now()).toISOString(),
    }));
  });

  test("two PATCHes within one millisecond still raise updatedAt each time", async () => {
    await create({ url: "https://example.com/", slug: "same-ms" });
    const first = await jsonOf(await patch("same-ms", { folder: "one" }));
    const second = await jsonOf(await patch("same-ms", { folder: "two" }));
    expect(Date.parse(second.updatedAt) - Date.parse(first.updatedAt)).toBe(1);
  });

  test("\"\" clears every clearable field: limit, dates, password, rules, A/B destinations, webhook and preview", async () => {
    const rich = {
      url: "https://example.com/rich", slug: "clear-all", maxHits: 5, folder: "f", tags: "a,b", utmCampaign: "c",
      rules: [{ kind: "country", match: "de", url: "https://example.de/" }], abUrls: [{ url: "https://a.example.com/", weight: 1 }],
      webhookUrl: "https://93.184.216.34/hook", serveOg: true, ogTitle: "t", ogDescription: "d", ogImageUrl: "https://img.example.com/i.png",
      expiresAt: "2099-01-01T00:00:00Z", startsAt: "2020-01-01T00:00:00Z", password: "pw-to-clear",
    };
    const created = await jsonOf(await create(rich));
    const fields = ["maxHits", "folder", "tags", "utmCampaign", "rules", "abUrls", "webhookUrl", "ogTitle", "ogDescription", "ogImageUrl", "expiresAt", "startsAt", "password"];
    const res = await patch("clear-all", Object.fromEntries(fields.map((f) => [f, ""])));
    expect(res.status).toBe(200);
    // The webhook secret stays: setting a webhookUrl again keeps the signatures receivers already verify.
    // Created and patched within one clock millisecond: updatedAt is raised by one.
    expect(await jsonOf(res)).toEqual(linkObject("clear-all", "https://example.com/rich", {
      serveOg: true, webhookSecret: created.webhookSecret, updatedAt: new Date(cp.clock.now() + 1).toISOString(),
    }, cp.clock.now()));
    expect((await cp.deps.store.getLink(cp.deps.config.defaultDomain, "clear-all"))!.passwordHash).toBeNull();
  });

  test("null clears too, and an absent field is left alone", async () => {
    await create({ url: "https://example.com/n", slug: "null-clears", folder: "f", tags: ["x"], maxHits: 3, ogTitle: "t" });
    const body = await jsonOf(await patch("null-clears", { folder: null, tags: null, maxHits: null }));
    expect([body.folder, body.tags, body.maxHits, body.ogTitle]).toEqual([null, [], null, "t"]);
  });

  test("the first webhookUrl generates a whsec_ secret; changing the webhookUrl keeps it", async () => {
    await create({ url: "https://example.com/w", slug: "hook-later" });
    const first = await jsonOf(await patch("hook-later", { webhookUrl: "https://93.184.216.34/one" }));
    expect(first.webhookSecret).toMatch(/^whsec_/);
    const second = await jsonOf(await patch("hook-later", { webhookUrl: "https://93.184.216.34/two" }));
    expect([second.webhookUrl, second.webhookSecret]).toEqual(["https://93.184.216.34/two", first.webhookSecret]);
  });

  test("a startsAt at or after the link's stored expiresAt answers 400 at /startsAt and changes nothing", async () => {
    const created = await jsonOf(await create({ url: "https://example.com/s", slug: "scheduled", expiresAt: "2031-01-01T00:00:00Z" }));
    const problem = await problemOf(await patch("scheduled", { startsAt: "2031-01-01T00:00:00Z" }), 400, "invalid_input");
    expect(problem.errors).toEqual([{ path: "/startsAt", message: "must be before expiresAt" }]);
    await problemOf(await patch("scheduled", { startsAt: "2032-06-01T00:00:00Z" }), 400, "invalid_input");
    expect(await jsonOf(await get("scheduled"))).toEqual(created);
    // Clearing expiresAt in the same PATCH makes the later start valid.
    expect((await jsonOf(await patch("scheduled", { startsAt: "2032-06-01T00:00:00Z", expiresAt: null }))).startsAt).toBe("2032-06-01T00:00:00.000Z");
  });

  test("url instead of targetUrl, or another unknown field, answers 400 invalid_input naming it", async () => {
    await create({ url: "https://example.com/u", slug: "strict-patch" });
    // url is the create's name for the destination: the answer says which field an update takes.
    const url = await problemOf(await patch("strict-patch", { url: "https://e.com" }), 400, "invalid_input");
    expect([url.errors, url.detail]).toEqual([
      [{ path: "/url", message: "unknown field: to change the destination use targetUrl" }], "url unknown field: to change the destination use targetUrl",
    ]);
    expect((await problemOf(await patch("strict-patch", { slug: "renamed" }), 400, "invalid_input")).errors)
      .toEqual([{ path: "/slug", message: "unknown field" }]);
  });

  test("bad values answer 400 invalid_input with the field's message", async () => {
    await create({ url: "https://example.com/v", slug: "bad-values" });
    expect((await problemOf(await patch("bad-values", { status: "deleted" }), 400, "invalid_input")).errors)
      .toEqual([{ path: "/status", message: "must be active, paused or archived" }]);
    const flag = await problemOf(await patch("bad-values", { serveOg: "maybe" }), 400, "invalid_input");
    expect(flag.errors![0].path).toBe("/serveOg");
    expect(flag.errors![0].message).toStartWith("must be one of true, false, ");
    expect((await problemOf(await patch("bad-values", { targetUrl: "javascript:alert(1)" }), 400, "invalid_input")).errors)
      .toEqual([{ path: "/targetUrl", message: "must use http or https" }]);
  });

  test("serveOg accepts true/false, \"true\"/\"false\", 1/0 and \"on\"/\"off\"", async () => {
    await create({ url: "https://example.com/og", slug: "og-flags" });
    const seen = [];
    for (const serveOg of [true, "false", 1, "off", "on", 0, "true", false]) seen.push((await jsonOf(await patch("og-flags", { serveOg }))).serveOg);
    expect(seen).toEqual([true, false, true, false, true, false, true, false]);
  });

  test("malformed JSON answers 400 invalid_json, an unknown slug 404 not_found", async () => {
    await problemOf(await cp.request("PATCH", "/api/v1/links/patch-me", { key: keyA, body: "{", headers: { "content-type": "application/json" } }), 400, "invalid_json");
    await problemOf(await patch("no-such", { folder: "x" }), 404, "not_found");
  });
});

describe("DELETE", () => {
  test("answers 204 with no body; the link is then 404 and its slug free again", async () => {
    await create({ url: "https://example.com/del", slug: "delete-me" });
    const res = await del("delete-me");
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    await problemOf(await get("delete-me"), 404, "not_found");
    await problemOf(await del("delete-me"), 404, "not_found");
    expect((await create({ url: "https://example.com/again", slug: "delete-me" })).status).toBe(201);
  });
});

describe("methods", () => {
  test("a known path asked with another method answers 405 method_not_allowed with Allow", async () => {
    const cases: [string, string, string][] = [
      ["PUT", "/api/v1/links/read-me", "GET, PATCH, DELETE"],
      ["POST", "/api/v1/links/read-me", "GET, PATCH, DELETE"],
      ["DELETE", "/api/v1/links", "GET, POST"],
      ["GET", "/api/v1/bulk", "POST"],
      ["POST", "/api/v1/links/read-me/stats", "GET"],
    ];
    for (const [method, path, allow] of cases) {
      const res = await cp.request(method, path, { key: keyA });
      await problemOf(res, 405, "method_not_allowed");
      expect(res.headers.get("allow")).toBe(allow);
    }
  });
});

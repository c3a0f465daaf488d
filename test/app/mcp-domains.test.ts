/**
 * A slug on three domains (the base one and two custom ones) through every MCP tool naming a link by slug, in
 * process (issue #24): each takes `domain` and acts on that domain's link only, leaving the same slug elsewhere as it
 * was; an unknown, pending or another workspace's domain is unknown_domain. The link object names its domain, and
 * that name given back as `domain` (MCP, REST, bulk) finds the same link. REST's bulk change takes `domain` for its
 * slugs too (update_link with a list of slugs is that call).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DIMENSION_NAMES, type ClickDims } from "../../shared/clicks/dimensions.ts";
import { EXPORT_COLUMNS } from "../../control/links/export.ts";
import { putDomain } from "../helpers/domains.ts";
import { jsonOf, problemOf, startControlPlane, type InProcessControlPlane, type TestKey } from "../helpers/in-process.ts";
import { parseCsv } from "./stats-helpers.ts";

let cp: InProcessControlPlane;
let owner: TestKey;
let other: TestKey;
const BASE = "clink.test";
const GO = "go.twins.example";
const SHOP = "shop.twins.example";
const PENDING = "pending.twins.example";
const THEIRS = "go.theirs.example";
const DOMAINS = [BASE, GO, SHOP];

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  owner = await cp.createKey("twins@example.com");
  other = await cp.createKey("theirs@example.com");
  await putDomain(cp, owner.caller.workspaceId, GO);
  await putDomain(cp, owner.caller.workspaceId, SHOP);
  await putDomain(cp, owner.caller.workspaceId, PENDING, { state: "pending", verifiedAt: null });
  await putDomain(cp, other.caller.workspaceId, THEIRS);
});
afterAll(() => cp.close());

async function call(name: string, args: Record<string, unknown>) {
  const body = await jsonOf(await cp.request("POST", "/mcp", {
    key: owner.key, headers: { accept: "application/json, text/event-stream" },
    json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } },
  }));
  return body.result as { isError?: boolean; structuredContent: any; content: { text: string }[] };
}
const ok = async (name: string, args: Record<string, unknown>) => {
  const r = await call(name, args);
  expect(r.isError ?? false, r.content[0]?.text).toBe(false);
  return r.structuredContent;
};
const refusal = async (name: string, args: Record<string, unknown>) => {
  const r = await call(name, args);
  expect(r.isError).toBe(true);
  return JSON.parse(r.content[0]!.text) as { code: string; errors?: unknown };
};

/** The same slug made on the three domains, each with its own destination; answers the slug. */
async function twins(prefix: string): Promise<string> {
  const slug = `${prefix}-${crypto.randomUUID().slice(0, 6)}`;
  for (const domain of DOMAINS) await ok("create_link", { url: `https://example.com/${domain}`, slug, domain });
  return slug;
}
/** The slug's link on each domain, read over REST. */
const each = (slug: string) =>
  Promise.all(DOMAINS.map(async (d) => jsonOf(await cp.request("GET", `/api/v1/links/${slug}?domain=${d}`, { key: owner.key }))));

describe("the link names its domain", () => {
  test("REST, MCP and the export: the base domain's host or the custom domain's hostname, as ?domain= takes it back", async () => {
    const slug = await twins("named");
    const links = await each(slug);
    expect(links.map((l) => [l.domain, l.shortUrl])).toEqual([
      [BASE, `http://${BASE}/${slug}`], [GO, `https://${GO}/${slug}`], [SHOP, `https://${SHOP}/${slug}`],
    ]);
    for (const l of links) expect((await ok("get_link", { slug, domain: l.domain })).target).toBe(l.target);
    const listed = (await ok("list_links", { q: slug })).links.map((l: { domain: string }) => l.domain);
    expect(listed.sort()).toEqual([...DOMAINS].sort());
    const rows = parseCsv(await (await cp.request("GET", `/api/v1/links/export?q=${slug}`, { key: owner.key })).text());
    const [domain, target] = [EXPORT_COLUMNS.indexOf("domain"), EXPORT_COLUMNS.indexOf("target")];
    expect(rows[0]![domain]).toBe("domain");
    expect(rows.slice(1).map((r) => `${r[domain]} ${r[target]}`).sort()).toEqual(DOMAINS.map((d) => `${d} https://example.com/${d}`).sort());
  });
});

describe("every tool naming a link by slug takes domain", () => {
  test("update_link, set_targeting_rules, set_ab_test and set_link_preview change that domain's link only", async () => {
    const slug = await twins("change");
    // Each call: its arguments, what it changes, the value a new link has there and the value it sets.
    const calls: [string, Record<string, unknown>, (l: any) => unknown, unknown, unknown][] = [
      ["update_link", { tags: ["shop"] }, (l) => l.tags, [], ["shop"]],
      ["set_targeting_rules", { rules: [{ kind: "country", match: "de", url: "https://example.com/de" }] }, (l) => l.rules.length, 0, 1],
      ["set_ab_test", { abUrls: [{ url: "https://example.com/a", weight: 1 }] }, (l) => l.abUrls.length, 0, 1],
      ["set_link_preview", { serveOg: true, ogTitle: "Shop" }, (l) => l.ogTitle, null, "Shop"],
    ];
    for (const [name, args, read, fresh, changed] of calls) {
      const answer = await ok(name, { slug, domain: SHOP, ...args });
      expect([name, answer.domain, read(answer)]).toEqual([name, SHOP, changed]);
      expect([name, ...(await each(slug)).map(read)]).toEqual([name, fresh, fresh, changed]);
    }
  });

  test("update_link with a list of slugs changes them on that domain", async () => {
    const [a, b] = [await twins("lista"), await twins("listb")];
    const answer = await ok("update_link", { slug: [a, b], domain: GO, folder: "go-only" });
    expect([answer.updated, answer.failed]).toEqual([2, 0]);
    for (const slug of [a, b]) expect((await each(slug)).map((l) => l.folder)).toEqual([null, "go-only", null]);
  });

  test("get_link_stats answers for that domain's link", async () => {
    const slug = await twins("stats");
    const [, , shop] = await each(slug);
    const id = (await cp.deps.store.getLink(SHOP, slug))!.id;
    const dims = Object.fromEntries(DIMENSION_NAMES.map((n) => [n, null])) as ClickDims;
    const now = cp.clock.now();
    await cp.deps.store.recordClicks([1, 2, 3].map((i) => ({ batch: `twin-${i}`, linkId: id, ts: now - i * 60_000, dims, bot: false, firstVisit: true, referrerUrl: null })));
    expect(shop.slug).toBe(slug);
    expect((await ok("get_link_stats", { slug, domain: SHOP })).totalClicks).toBe(3);
    expect((await ok("get_link_stats", { slug, domain: GO })).totalClicks).toBe(0);
    expect((await ok("get_link_stats", { slug })).totalClicks).toBe(0);
    expect((await ok("get_link_stats", { slug, domain: SHOP, from: new Date(now - 3_600_000).toISOString(), tz: "UTC" })).totals.clicks).toBe(3);
    const alone = await refusal("get_link_stats", { domain: SHOP });
    expect([alone.code, alone.errors]).toEqual(["invalid_input", [{ path: "/domain", message: "names the domain of a slug: give slug too" }]]);
  });

  test("delete_link deletes that domain's link; the same slug stays on the others", async () => {
    const slug = await twins("gone");
    expect(await ok("delete_link", { slug, domain: GO })).toEqual({ deleted: true, slug });
    expect((await cp.request("GET", `/api/v1/links/${slug}?domain=${GO}`, { key: owner.key })).status).toBe(404);
    for (const d of [BASE, SHOP]) expect((await ok("get_link", { slug, domain: d })).target).toBe(`https://example.com/${d}`);
  });

  test("an unknown, pending or another workspace's domain is unknown_domain on every one, and nothing changes", async () => {
    const slug = await twins("refused");
    const before = await each(slug);
    const tools: [string, Record<string, unknown>][] = [
      ["get_link", {}], ["update_link", { tags: ["x"] }], ["update_link", { slug: [slug], tags: ["x"] }], ["delete_link", {}],
      ["get_link_stats", {}], ["set_targeting_rules", { rules: null }], ["set_ab_test", { abUrls: null }], ["set_link_preview", { ogTitle: "x" }],
    ];
    for (const domain of ["unknown.example.com", PENDING, THEIRS, "not a host"]) {
      for (const [name, args] of tools) {
        const p = await refusal(name, { slug, domain, ...args });
        expect([name, domain, p.code]).toEqual([name, domain, "unknown_domain"]);
      }
    }
    expect(await each(slug)).toEqual(before);
  });
});

describe("REST bulk changes by slugs take domain", () => {
  test("PATCH /links/bulk and bulk-delete act on the slugs on that domain", async () => {
    const slug = await twins("bulk");
    const change = await jsonOf(await cp.request("PATCH", "/api/v1/links/bulk", { key: owner.key, json: { slugs: [slug], domain: SHOP, addTags: ["b"] } }));
    expect([change.updated, change.failed]).toEqual([1, 0]);
    expect((await each(slug)).map((l) => l.tags)).toEqual([[], [], ["b"]]);
    const gone = await jsonOf(await cp.request("POST", "/api/v1/links/bulk-delete", { key: owner.key, json: { slugs: [slug], domain: GO } }));
    expect([gone.deleted, gone.failed]).toEqual([1, 0]);
    expect((await cp.request("GET", `/api/v1/links/${slug}?domain=${GO}`, { key: owner.key })).status).toBe(404);
    expect((await cp.request("GET", `/api/v1/links/${slug}?domain=${SHOP}`, { key: owner.key })).status).toBe(200);
  });

  test("an unknown domain refuses the whole call; domain with a filter is invalid_input", async () => {
    const slug = await twins("bulkno");
    const p = await problemOf(await cp.request("PATCH", "/api/v1/links/bulk", { key: owner.key, json: { slugs: [slug], domain: THEIRS, addTags: ["b"] } }), 400, "unknown_domain");
    expect(p.errors).toEqual([{ path: "/domain", message: "must be a verified domain of your workspace, or the base domain" }]);
    await problemOf(await cp.request("POST", "/api/v1/links/bulk-delete", { key: owner.key, json: { slugs: [slug], domain: PENDING } }), 400, "unknown_domain");
    const f = await problemOf(await cp.request("POST", "/api/v1/links/bulk-delete", { key: owner.key, json: { filter: { q: slug }, domain: GO } }), 400, "invalid_input");
    expect(f.errors).toEqual([{ path: "/domain", message: "goes with slugs only (a filter takes its own domain)" }]);
    expect((await each(slug)).map((l) => l.tags)).toEqual([[], [], []]);
  });
});

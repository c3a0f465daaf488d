/**
 * A workspace's default domain (issue #24, docs/domains.md) through the API in process: an admin sets it with
 * PATCH /api/v1/workspace to a verified domain of the workspace; links made without a domain then go on it, by REST,
 * bulk and MCP alike; a member is refused, and so is a domain that is unknown, pending or another workspace's. Clearing
 * it, deleting the domain or the domain falling back to pending puts new links on the base domain again.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { DomainRecord } from "../../shared/domain.ts";
import { putDomain } from "../helpers/domains.ts";
import { BASE_URL, jsonOf, problemOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import { importToEnd, reportsOf } from "./imports-helpers.ts";
import { team, type Team } from "./workspaces-helpers.ts";

let cp: InProcessControlPlane;
let t: Team;
let ownerKey: string;
let memberKey: string;
let go: DomainRecord;
const GO = "go.default.example";
const SHOP = "shop.default.example";
const PENDING = "pending.default.example";
const THEIRS = "theirs.default.example";
const BASE_HOST = new URL(BASE_URL).host;

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  t = await team(cp, "default-owner@example.com", "Default Team");
  ownerKey = await t.keyOf(t.owner);
  memberKey = await t.keyOf(await t.join("default-member@example.com", "member"));
  go = await putDomain(cp, t.workspaceId, GO);
  await putDomain(cp, t.workspaceId, SHOP);
  await putDomain(cp, t.workspaceId, PENDING, { state: "pending", verifiedAt: null });
  const other = await cp.createKey("default-other@example.com");
  await putDomain(cp, other.caller.workspaceId, THEIRS);
});
afterAll(() => cp?.close());

const patch = (json: unknown, key = ownerKey) => cp.request("PATCH", "/api/v1/workspace", { key, json });
const setDefault = async (defaultDomain: string | null) => {
  const res = await patch({ defaultDomain });
  expect(res.status, JSON.stringify(await res.clone().json())).toBe(200);
  return jsonOf(res);
};
const fresh = (prefix: string) => `${prefix}${crypto.randomUUID().slice(0, 6)}`;

/** The shortUrl of a link made by REST without a domain. */
async function restShortUrl(): Promise<string> {
  const slug = fresh("r");
  const res = await cp.request("POST", "/api/v1/links", { key: ownerKey, json: { url: "https://example.com/d", slug } });
  expect(res.status).toBe(201);
  const link = await jsonOf(res);
  expect(link.shortUrl).toEndWith(`/${slug}`);
  return link.shortUrl.slice(0, -slug.length - 1);
}

async function mcpCreate(args: Record<string, unknown>) {
  const body = await jsonOf(await cp.request("POST", "/mcp", {
    key: ownerKey, headers: { accept: "application/json, text/event-stream" },
    json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "create_link", arguments: args } },
  }));
  expect(body.result.isError ?? false, body.result.content?.[0]?.text).toBe(false);
  return body.result.structuredContent;
}

describe("setting the default domain", () => {
  test("null until set; an admin sets it by hostname in any spelling, GET shows it, and null or the base host clear it", async () => {
    expect((await jsonOf(await cp.request("GET", "/api/v1/workspace", { key: memberKey }))).defaultDomain).toBeNull();
    expect(await setDefault("GO.Default.Example.")).toMatchObject({ defaultDomain: GO, name: "Default Team" });
    expect((await jsonOf(await cp.request("GET", "/api/v1/workspace", { key: memberKey }))).defaultDomain).toBe(GO);
    expect((await setDefault(BASE_HOST)).defaultDomain).toBeNull();
    expect((await setDefault(SHOP)).defaultDomain).toBe(SHOP);
    expect((await setDefault(null)).defaultDomain).toBeNull();
    // Renaming alone leaves it as it is.
    await setDefault(GO);
    expect(await jsonOf(await patch({ name: "Default Team" }))).toMatchObject({ name: "Default Team", defaultDomain: GO });
    await setDefault(null);
  });

  test("a member is refused (forbidden_role) and nothing changes", async () => {
    await problemOf(await patch({ defaultDomain: GO }, memberKey), 403, "forbidden_role");
    expect((await jsonOf(await cp.request("GET", "/api/v1/workspace", { key: ownerKey }))).defaultDomain).toBeNull();
  });

  test("an unknown, pending or another workspace's domain, or no hostname at all, is unknown_domain; a wrong type invalid_input", async () => {
    for (const given of ["nowhere.default.example", PENDING, THEIRS, "not a host", "x".repeat(300)]) {
      const p = await problemOf(await patch({ defaultDomain: given }), 400, "unknown_domain");
      expect([given, p.errors]).toEqual([given, [{ path: "/defaultDomain", message: "must be a verified domain of this workspace, or null for the base domain" }]]);
    }
    for (const body of [{ defaultDomain: 7 }, { defaultDomain: "x".repeat(301) }, {}]) await problemOf(await patch(body), 400, "invalid_input");
    // A good name with a bad domain: nothing is written.
    await problemOf(await patch({ name: "Renamed", defaultDomain: PENDING }), 400, "unknown_domain");
    expect(await jsonOf(await cp.request("GET", "/api/v1/workspace", { key: ownerKey }))).toMatchObject({ name: "Default Team", defaultDomain: null });
  });
});

describe("links made without a domain", () => {
  test("go on the default domain by REST, bulk and MCP; a domain given still wins; the base host names the base domain", async () => {
    expect(await restShortUrl()).toBe(BASE_URL);
    await setDefault(GO);
    expect(await restShortUrl()).toBe(`https://${GO}`);

    const bulk = await jsonOf(await cp.request("POST", "/api/v1/bulk", {
      key: ownerKey, json: { links: [{ url: "https://example.com/b1" }, { url: "https://example.com/b2", slug: fresh("b") }, { url: "https://example.com/b3", domain: SHOP }] },
    }));
    expect(bulk.results.map((r: { shortUrl: string }) => new URL(r.shortUrl).host)).toEqual([GO, GO, SHOP]);

    expect(new URL((await mcpCreate({ url: "https://example.com/m" })).shortUrl).host).toBe(GO);
    expect(new URL((await mcpCreate({ url: "https://example.com/m", domain: BASE_HOST })).shortUrl).host).toBe(BASE_HOST);

    const slug = fresh("g");
    const onGo = await jsonOf(await cp.request("POST", "/api/v1/links", { key: ownerKey, json: { url: "https://example.com/g", slug } }));
    expect(onGo).toMatchObject({ domain: GO, shortUrl: `https://${GO}/${slug}` });
    expect((await cp.deps.store.getLink(GO, slug))?.accountId).toBe(t.workspaceId);
    expect(await cp.deps.store.getLink(cp.deps.config.defaultDomain, slug)).toBeNull();
  });

  test("go on the base domain again once it is cleared", async () => {
    await setDefault(GO);
    await setDefault(null);
    expect(await restShortUrl()).toBe(BASE_URL);
  });

  test("go on the base domain when the default domain falls back to pending, and on it again once it is verified again", async () => {
    await setDefault(SHOP);
    const shop = (await cp.deps.store.getDomainByHostname(SHOP))!;
    expect(await cp.deps.store.updateDomain({ ...shop, state: "pending", verifiedAt: null, updatedAt: shop.updatedAt + 1 }, shop.updatedAt)).toBe(true);
    expect(await restShortUrl()).toBe(BASE_URL);
    expect((await jsonOf(await cp.request("GET", "/api/v1/workspace", { key: ownerKey }))).defaultDomain).toBeNull();
    expect(await cp.deps.store.updateDomain({ ...shop, updatedAt: shop.updatedAt + 2 }, shop.updatedAt + 1)).toBe(true);
    expect(await restShortUrl()).toBe(`https://${SHOP}`);
  });

  test("go on the base domain once the default domain is deleted, even when another workspace adds that hostname later", async () => {
    await setDefault(GO);
    const res = await cp.request("DELETE", `/api/v1/domains/${go.id}?links=delete`, { key: ownerKey });
    expect(res.status).toBe(204);
    expect(await restShortUrl()).toBe(BASE_URL);
    expect((await jsonOf(await cp.request("GET", "/api/v1/workspace", { key: ownerKey }))).defaultDomain).toBeNull();
    const bulk = await jsonOf(await cp.request("POST", "/api/v1/bulk", { key: ownerKey, json: [{ url: "https://example.com/after" }] }));
    expect(new URL(bulk.results[0].shortUrl).host).toBe(BASE_HOST);
    // The hostname, now another workspace's verified domain, is not this workspace's default.
    await putDomain(cp, (await cp.createKey("default-later@example.com")).caller.workspaceId, GO);
    expect(await restShortUrl()).toBe(BASE_URL);
  });
});

test("an import puts its links on the default domain, its slugs checked for conflicts there", async () => {
  await setDefault(SHOP);
  const [taken, free] = [fresh("it"), fresh("if")];
  for (const [slug, domain] of [[taken, SHOP], [free, BASE_HOST]]) {
    expect((await cp.request("POST", "/api/v1/links", { key: ownerKey, json: { url: "https://example.com/pre", slug, domain } })).status).toBe(201);
  }
  const csv = `long_url,link\nhttps://example.com/i1,https://bit.ly/${taken}\nhttps://example.com/i2,https://bit.ly/${free}\n`;
  const job = await importToEnd(cp, ownerKey, csv, { format: "bitly", onConflict: "rename" });
  expect(reportsOf(job)).toEqual(["2 renamed slug_taken"]); // row 3, free on the default domain (taken on the base one), is created as it is
  expect((await cp.deps.store.getLink(SHOP, `${taken}-2`))?.target).toBe("https://example.com/i1");
  expect((await cp.deps.store.getLink(SHOP, free))?.target).toBe("https://example.com/i2");
  await setDefault(null);
});

test("the OpenAPI document shows defaultDomain on the workspace and on PATCH's body", async () => {
  const doc = await jsonOf(await cp.request("GET", "/api/v1/openapi.json"));
  const text = JSON.stringify(doc.paths["/api/v1/workspace"]) + JSON.stringify(doc.components ?? {});
  expect(text).toContain("WorkspaceUpdateInput");
  expect(JSON.stringify(doc.paths["/api/v1/workspace"].patch)).toContain("defaultDomain");
  expect(JSON.stringify(doc.paths["/api/v1/workspace"].get)).toContain("defaultDomain");
});

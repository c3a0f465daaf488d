/**
 * Links on custom domains through the API in process (issue #24): the short address every answer and webhook gives
 * is on the link's own domain, a link is named by slug and `?domain=` when the same slug is on two domains (REST
 * and MCP), the list filters by domain, and a verified domain is never a destination (the redirector would loop).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { qrAddress, qrSvg } from "../../control/links/qr.ts";
import { signedInVisitor } from "../helpers/dashboard-visitor.ts";
import { putDomain } from "../helpers/domains.ts";
import { BASE_URL, jsonOf, passwordOf, problemOf, startControlPlane, type InProcessControlPlane, type TestKey } from "../helpers/in-process.ts";

let cp: InProcessControlPlane;
let owner: TestKey;
let other: TestKey;
const GO = "go.acme.example";
const SHOP = "shop.acme.example";
const THEIRS = "go.other.example";
const PENDING = "pending.acme.example";
/** A verified IDN domain, stored as punycode (bücher.example). */
const IDN = "xn--bcher-kva.example";

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000", WEBHOOK_ALLOW_PRIVATE: "true" } });
  owner = await cp.createKey("owner@example.com");
  other = await cp.createKey("other@example.com");
  await putDomain(cp, owner.caller.workspaceId, GO);
  await putDomain(cp, owner.caller.workspaceId, SHOP);
  await putDomain(cp, owner.caller.workspaceId, PENDING, { state: "pending", verifiedAt: null });
  await putDomain(cp, other.caller.workspaceId, THEIRS);
  await putDomain(cp, other.caller.workspaceId, IDN);
});
afterAll(() => cp.close());

const create = async (json: Record<string, unknown>, key = owner.key) => {
  const res = await cp.request("POST", "/api/v1/links", { key, json: { url: "https://example.com/dest", ...json } });
  expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
  return jsonOf(res);
};
const fresh = (prefix: string) => `${prefix}${crypto.randomUUID().slice(0, 6)}`;

describe("event webhooks", () => {
  test("link.created, link.updated and link.deleted show the short address on the link's own domain", async () => {
    const endpoint = await jsonOf(await cp.request("POST", "/api/v1/webhooks", {
      key: owner.key, json: { url: "http://127.0.0.1:9/hook", events: ["link.created", "link.updated", "link.deleted"] },
    }));
    const slug = fresh("hook");
    await create({ slug, domain: GO });
    await create({ slug: `${slug}b` });
    expect((await cp.request("PATCH", `/api/v1/links/${slug}`, { key: owner.key, json: { tags: ["t"] } })).status).toBe(200);
    expect((await cp.request("DELETE", `/api/v1/links/${slug}`, { key: owner.key })).status).toBe(204);
    const log = await jsonOf(await cp.request("GET", `/api/v1/webhooks/${endpoint.id}/deliveries?limit=200`, { key: owner.key }));
    const sent = (log.deliveries as { eventType: string; payload: { data: { shortUrl: string } } }[]).map((d) => `${d.eventType} ${d.payload.data.shortUrl}`);
    expect(sent.sort()).toEqual([
      `link.created http://clink.test/${slug}b`, `link.created https://${GO}/${slug}`, `link.deleted https://${GO}/${slug}`, `link.updated https://${GO}/${slug}`,
    ]);
  });
});

describe("a verified custom domain as a destination", () => {
  const loops = (host: string) => `must not point to ${host}, a custom domain this service serves (the redirect would loop)`;
  const refusal = async (res: Response) => (await problemOf(res, 400, "invalid_input")).errors;

  test("is refused in every spelling, the caller's domains and another account's alike", async () => {
    const spellings: [string, string][] = [
      [`https://${GO}/x`, GO], [`https://GO.ACME.Example/x`, GO], [`https://${GO}./x`, GO], [`https://${GO}:8443/x`, GO], [`http://${GO}/x`, GO],
      [`https://user@${GO}/x`, GO], [`https://%67o.acme.example/x`, GO], [`https://${THEIRS}/x`, THEIRS],
      ["https://bücher.example/x", IDN], ["https://BÜCHER.example./x", IDN], [`https://${IDN}/x`, IDN],
    ];
    for (const [url, host] of spellings) {
      const res = await cp.request("POST", "/api/v1/links", { key: owner.key, json: { url } });
      expect([url, await refusal(res)]).toEqual([url, [{ path: "/url", message: loops(host) }]]);
    }
  });

  test("every address a visitor is sent to is checked at its own path, in one answer", async () => {
    const res = await cp.request("POST", "/api/v1/links", {
      key: owner.key,
      json: {
        url: "https://example.com/fine", rules: [{ kind: "device", match: "ios", url: `https://${SHOP}/app` }],
        abUrls: [{ url: "https://example.com/a", weight: 1 }, { url: `https://${GO}/b`, weight: 1 }], expiredUrl: `https://${THEIRS}/gone`,
      },
    });
    expect((await refusal(res))!.map((e) => e.path)).toEqual(["/rules/0/url", "/abUrls/1/url", "/expiredUrl"]);
  });

  test("a pending domain, a name under a domain and an address literal are other hosts", async () => {
    for (const url of [`https://${PENDING}/x`, `https://deeper.${GO}/x`, "https://acme.example/x", "https://93.184.216.34/x"]) await create({ url });
  });

  test("a change, a bulk row and a bulk change are refused the same way; other rows go on", async () => {
    const slug = fresh("dst");
    await create({ slug });
    expect(await refusal(await cp.request("PATCH", `/api/v1/links/${slug}`, { key: owner.key, json: { targetUrl: `https://${GO}/y` } })))
      .toEqual([{ path: "/targetUrl", message: loops(GO) }]);
    const bulk = await jsonOf(await cp.request("POST", "/api/v1/bulk", { key: owner.key, json: [{ url: `https://${SHOP}/1` }, { url: "https://example.com/2" }, { url: `https://${SHOP}/3` }] }));
    expect([bulk.created, bulk.failed, bulk.results.map((r: { ok: boolean }) => r.ok)]).toEqual([1, 2, [false, true, false]]);
    expect(bulk.results[0].error).toMatchObject({ code: "invalid_input", errors: [{ path: "/url", message: loops(SHOP) }] });
    const change = await cp.request("PATCH", "/api/v1/links/bulk", { key: owner.key, json: { slugs: [slug], changes: { expiredUrl: `https://${GO}/z` } } });
    expect(await refusal(change)).toEqual([{ path: "/changes/expiredUrl", message: loops(GO) }]);
    expect((await jsonOf(await cp.request("GET", `/api/v1/links/${slug}`, { key: owner.key }))).target).toBe("https://example.com/dest");
  });

  test("a domain's root and not-found redirects are refused the same way, and so is the domain itself", async () => {
    const host = `${fresh("red")}.acme.example`;
    const add = (json: Record<string, unknown>) => cp.request("POST", "/api/v1/domains", { key: owner.key, json: { hostname: host, ...json } });
    expect(await refusal(await add({ rootRedirect: `https://${GO}/`, notFoundRedirect: `https://${host.toUpperCase()}./missing` })))
      .toEqual([{ path: "/rootRedirect", message: loops(GO) }, { path: "/notFoundRedirect", message: loops(host) }]);
    const d = await jsonOf(await add({ rootRedirect: "https://example.com/home" }));
    expect(d.rootRedirect).toBe("https://example.com/home");
    expect(await refusal(await cp.request("PATCH", `/api/v1/domains/${d.id}`, { key: owner.key, json: { notFoundRedirect: `https://${THEIRS}/x` } })))
      .toEqual([{ path: "/notFoundRedirect", message: loops(THEIRS) }]);
  });

  test("a domain verified a moment ago is refused at once (the store is read, not a copy)", async () => {
    const host = `${fresh("new")}.acme.example`;
    await create({ url: `https://${host}/x` });
    await putDomain(cp, other.caller.workspaceId, host);
    expect(await refusal(await cp.request("POST", "/api/v1/links", { key: owner.key, json: { url: `https://${host}/x` } }))).toEqual([{ path: "/url", message: loops(host) }]);
  });
});

describe("a slug on several domains, named with ?domain=", () => {
  const get = (path: string, key = owner.key) => cp.request("GET", path, { key });
  let slug: string;
  beforeAll(async () => {
    slug = fresh("twin");
    await create({ slug, url: "https://example.com/base" });
    await create({ slug, url: "https://example.com/go", domain: GO });
    await create({ slug, url: "https://example.com/shop", domain: SHOP });
  });

  test("GET answers the link on the domain named, in any spelling of it; without one, the base domain's", async () => {
    const target = async (query: string) => (await jsonOf(await get(`/api/v1/links/${slug}${query}`))).target;
    expect(await target("")).toBe("https://example.com/base");
    expect(await target(`?domain=${GO}`)).toBe("https://example.com/go");
    expect(await target("?domain=GO.ACME.Example.")).toBe("https://example.com/go");
    expect(await target(`?domain=${SHOP}`)).toBe("https://example.com/shop");
    expect(await target("?domain=clink.test")).toBe("https://example.com/base");
    expect(await target("?domain=")).toBe("https://example.com/base");
    expect((await jsonOf(await get(`/api/v1/links/${slug}?domain=${SHOP}`))).shortUrl).toBe(`https://${SHOP}/${slug}`);
  });

  test("PATCH, stats, clicks.csv, the QR code and DELETE act on that domain's link only", async () => {
    const patched = await jsonOf(await cp.request("PATCH", `/api/v1/links/${slug}?domain=${SHOP}`, { key: owner.key, json: { tags: ["shop"] } }));
    expect([patched.target, patched.tags]).toEqual(["https://example.com/shop", ["shop"]]);
    expect((await jsonOf(await get(`/api/v1/links/${slug}?domain=${GO}`))).tags).toEqual([]);
    expect((await jsonOf(await get(`/api/v1/links/${slug}/stats?domain=${GO}`))).totalClicks).toBe(0);
    expect((await jsonOf(await get(`/api/v1/links/${slug}/stats?domain=${GO}&groupBy=country`))).breakdowns).toBeDefined();
    const csv = await get(`/api/v1/links/${slug}/clicks.csv?domain=${GO}&tz=UTC`);
    expect([csv.status, (await csv.text()).split("\n").length]).toEqual([200, 2]); // the header row alone
    // The code encodes the short address on that domain.
    const qr = await get(`/api/v1/links/${slug}/qr?domain=${GO}&format=svg`);
    expect(await qr.text()).toBe(await qrSvg(qrAddress(`https://${GO}/${slug}`)));
    const ext = await create({ externalId: fresh("ext"), domain: SHOP });
    expect((await jsonOf(await get(`/api/v1/links/ext_${ext.externalId}?domain=${SHOP}`))).slug).toBe(ext.slug);
    await problemOf(await get(`/api/v1/links/ext_${ext.externalId}?domain=${GO}`), 404, "not_found");
    expect((await cp.request("DELETE", `/api/v1/links/${slug}?domain=${GO}`, { key: owner.key })).status).toBe(204);
    await problemOf(await get(`/api/v1/links/${slug}?domain=${GO}`), 404, "not_found");
    expect((await jsonOf(await get(`/api/v1/links/${slug}`))).target).toBe("https://example.com/base");
    expect((await jsonOf(await get(`/api/v1/links/${slug}?domain=${SHOP}`))).target).toBe("https://example.com/shop");
  });

  test("a domain that is unknown, pending, another workspace's or not a name is unknown_domain, on every route", async () => {
    const bad = ["unknown.example.com", PENDING, THEIRS, "not a host", "https://go.acme.example/"];
    const routes = (d: string) => [
      `/api/v1/links/${slug}?domain=${encodeURIComponent(d)}`, `/api/v1/links/${slug}/stats?domain=${encodeURIComponent(d)}`,
      `/api/v1/links/${slug}/qr?domain=${encodeURIComponent(d)}`, `/api/v1/links/${slug}/clicks.csv?domain=${encodeURIComponent(d)}`,
      `/api/v1/links?domain=${encodeURIComponent(d)}`,
    ];
    for (const d of bad) {
      for (const path of routes(d)) {
        const p = await problemOf(await get(path), 400, "unknown_domain");
        expect([path, p.errors]).toEqual([path, [{ path: "/domain", message: "must be a verified domain of your workspace, or the base domain" }]]);
      }
    }
    await problemOf(await cp.request("PATCH", `/api/v1/links/${slug}?domain=${THEIRS}`, { key: owner.key, json: { tags: ["x"] } }), 400, "unknown_domain");
    await problemOf(await cp.request("DELETE", `/api/v1/links/${slug}?domain=${PENDING}`, { key: owner.key }), 400, "unknown_domain");
    await problemOf(await get(`/api/v1/links/${slug}/qr?domain=${GO}&domain=${SHOP}`), 400, "unknown_domain");
    // The other workspace names its own domain; the owner's links stay out of its reach.
    await problemOf(await get(`/api/v1/links/${slug}?domain=${THEIRS}`, other.key), 404, "not_found");
  });

  test("the list filters by domain; a bulk change by that filter changes those links, not the same slugs elsewhere", async () => {
    const twin = fresh("pair");
    await create({ slug: twin, url: "https://example.com/b2" });
    const onShop = await create({ slug: twin, url: "https://example.com/s2", domain: SHOP });
    const listed = await jsonOf(await get(`/api/v1/links?domain=${SHOP}&limit=500`));
    expect(listed.links.every((l: { shortUrl: string }) => l.shortUrl.startsWith(`https://${SHOP}/`))).toBe(true);
    expect(listed.links.map((l: { shortUrl: string }) => l.shortUrl)).toContain(onShop.shortUrl);
    expect((await jsonOf(await get("/api/v1/links?domain=clink.test&limit=500"))).links.every((l: { shortUrl: string }) => l.shortUrl.startsWith("http://clink.test/"))).toBe(true);
    const change = await jsonOf(await cp.request("PATCH", "/api/v1/links/bulk", { key: owner.key, json: { filter: { domain: SHOP, q: twin }, addTags: ["bulk"] } }));
    expect([change.updated, change.failed]).toEqual([1, 0]);
    expect((await jsonOf(await get(`/api/v1/links/${twin}?domain=${SHOP}`))).tags).toEqual(["bulk"]);
    expect((await jsonOf(await get(`/api/v1/links/${twin}`))).tags).toEqual([]);
    const csv = await (await get(`/api/v1/links/export?domain=${SHOP}&q=${twin}`)).text();
    expect(csv).toContain("https://example.com/s2");
    expect(csv).not.toContain("https://example.com/b2");
  });

  test("MCP: list_links and get_link take domain, with the same refusal", async () => {
    const call = async (name: string, args: Record<string, unknown>) => (await jsonOf(await cp.request("POST", "/mcp", {
      key: owner.key, headers: { accept: "application/json, text/event-stream" },
      json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } },
    }))).result;
    expect((await call("get_link", { slug, domain: SHOP })).structuredContent.target).toBe("https://example.com/shop");
    expect((await call("get_link", { slug })).structuredContent.target).toBe("https://example.com/base");
    const listed = (await call("list_links", { domain: SHOP, q: slug })).structuredContent.links;
    expect(listed.map((l: { shortUrl: string }) => l.shortUrl)).toEqual([`https://${SHOP}/${slug}`]);
    for (const refused of [await call("get_link", { slug, domain: THEIRS }), await call("list_links", { domain: "unknown.example.com" })]) {
      expect([refused.isError, JSON.parse(refused.content[0].text).code]).toEqual([true, "unknown_domain"]);
    }
  });

  test("the dashboard's list offers the domains and filters by one", async () => {
    const visitor = await signedInVisitor(cp, BASE_URL, "owner@example.com", passwordOf("owner@example.com"));
    const all = await visitor.get("/dashboard/links");
    expect(all.html).toContain(`<select id="domain" name="domain"`);
    expect(all.html).toContain(`<option value="${SHOP}">${SHOP}</option>`);
    expect(all.html).not.toContain(`<option value="${PENDING}">`);
    const shop = await visitor.get(`/dashboard/links?domain=${SHOP}&q=${slug}`);
    expect(shop.html).toContain(`data-copy="https://${SHOP}/${slug}"`);
    expect(shop.html).not.toContain(`data-copy="http://clink.test/${slug}"`);
    expect(shop.html).toContain(`<option value="${SHOP}" selected>`);
    const refused = await visitor.get(`/dashboard/links?domain=${THEIRS}`);
    expect([refused.status, refused.html.includes("must be a verified domain of your workspace")]).toEqual([200, true]);
  });
});

/**
 * Links on custom domains through the API in process (issue #24): the short address every answer and webhook gives
 * is on the link's own domain, a link is named by slug and `?domain=` when the same slug is on two domains (REST
 * and MCP), the list filters by domain, and a verified domain is never a destination (the redirector would loop).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { putDomain } from "../helpers/domains.ts";
import { jsonOf, problemOf, startControlPlane, type InProcessControlPlane, type TestKey } from "../helpers/in-process.ts";

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

  test("a domain verified a moment ago is refused at once (the store is read, not a copy)", async () => {
    const host = `${fresh("new")}.acme.example`;
    await create({ url: `https://${host}/x` });
    await putDomain(cp, other.caller.workspaceId, host);
    expect(await refusal(await cp.request("POST", "/api/v1/links", { key: owner.key, json: { url: `https://${host}/x` } }))).toEqual([{ path: "/url", message: loops(host) }]);
  });
});

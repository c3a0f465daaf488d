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

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000", WEBHOOK_ALLOW_PRIVATE: "true" } });
  owner = await cp.createKey("owner@example.com");
  other = await cp.createKey("other@example.com");
  await putDomain(cp, owner.caller.workspaceId, GO);
  await putDomain(cp, owner.caller.workspaceId, SHOP);
  await putDomain(cp, owner.caller.workspaceId, PENDING, { state: "pending", verifiedAt: null });
  await putDomain(cp, other.caller.workspaceId, THEIRS);
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

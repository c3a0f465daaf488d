/**
 * Custom domains in scale mode (issue #24): a control plane and a redirector on their own Postgres pools and Redis
 * connections, as two processes have them (opened with openStorage from one scale configuration). A domain verified
 * through the control plane's API reaches the redirector over Redis pub/sub, which then serves the domain's links by
 * Host from memory; a deleted domain stops serving the same way. Real Postgres (a random schema) and Redis (a random
 * prefix); the DNS check is answered by a DNS server on loopback.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { buildControlPlane } from "../../control/app.ts";
import type { Deps } from "../../control/deps.ts";
import { createApiKey } from "../../control/keys/service.ts";
import { createRedirector, type Redirector } from "../../redirector/handler.ts";
import { openStorage, type Storage } from "../../shared/adapters/open.ts";
import { loadConfig } from "../../shared/config.ts";
import { newId } from "../../shared/ids.ts";
import { startDnsServer, type TestDnsServer } from "../helpers/dns-server.ts";
import { deleteKeys, testPrefix } from "../helpers/redis-keys.ts";
import { PG_URL, REDIS_URL, waitFor } from "../helpers/scale.ts";

const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
const prefixes: string[] = [];
const dataDir = mkdtempSync(join(tmpdir(), "clink-domains-scale-"));
const config = loadConfig({
  BASE_URL: "http://clink.test", DATA_DIR: dataDir, LOG_LEVEL: "silent", DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema,
  REDIS_URL, REDIS_PREFIX: testPrefix(prefixes), RATE_LIMIT_PER_MINUTE: "100000",
});

let control: Storage;
let edge: Storage;
let dns: TestDnsServer;
let deps: Deps;
let redirector: Redirector;
let key: string;

beforeAll(async () => {
  control = await openStorage(config);
  await control.store.migrate();
  edge = await openStorage(config, { poolSize: 2 });
  dns = await startDnsServer();
  deps = { config, store: control.store, hot: control.hot, now: Date.now, domainChecks: { resolveTxt: dns.resolveTxt } };
  const accountId = newId();
  await control.store.createAccount({ id: accountId, email: "scale-domains@example.com", passwordHash: "x", createdAt: Date.now() });
  key = (await createApiKey(deps, accountId, "k")).key;
  redirector = createRedirector({ config, hot: edge.hot, store: edge.store, now: Date.now, countryLookup: null, webhooks: { send() {}, drain: async () => {}, pending: () => 0 } });
  await redirector.domains.ready;
  await edge.hot.ping(); // resolves once the redirector's subscriptions are in place
}, 30_000);

afterAll(async () => {
  redirector?.domains.close();
  dns?.close();
  for (const s of [edge, control]) {
    await s?.hot.close().catch(() => {});
    await s?.store.close().catch(() => {});
  }
  const sql = postgres(PG_URL, { max: 1, onnotice: () => {} });
  await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => sql.end({ timeout: 5 }));
  await deleteKeys(prefixes);
  rmSync(dataDir, { recursive: true, force: true });
});

async function api(method: string, path: string, json?: unknown) {
  const app = buildControlPlane(deps).app;
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (json !== undefined) headers["content-type"] = "application/json";
  const res = await app.handle(new Request(`http://clink.test${path}`, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) }));
  return { status: res.status, body: res.status === 204 ? null : await res.json() };
}

const visit = (url: string) => Promise.resolve(redirector.fetch(new Request(url, { redirect: "manual" }), { requestIP: () => ({ address: "127.0.0.1", family: "IPv4", port: 1 }) } as never));

test("a domain verified through the control plane is served by the redirector by Host, and stops when deleted", async () => {
  const added = await api("POST", "/api/v1/domains", { hostname: "go.scale.example" });
  expect(added.status).toBe(201);
  dns.txt.set(added.body.challenge.name, [[added.body.challenge.value]]);
  expect((await api("POST", `/api/v1/domains/${added.body.id}/verify`)).body.state).toBe("verified");
  await waitFor("the redirector hearing of go.scale.example over Redis", () => redirector.domains.resolve("go.scale.example") !== null || null, 5_000);

  expect((await api("POST", "/api/v1/links", { url: "https://example.com/on-domain", slug: "same", domain: "go.scale.example" })).status).toBe(201);
  expect((await api("POST", "/api/v1/links", { url: "https://example.com/on-base", slug: "same" })).status).toBe(201);
  for (const [url, to] of [["http://go.scale.example/same", "https://example.com/on-domain"], ["http://GO.scale.example.:8080/same", "https://example.com/on-domain"], ["http://clink.test/same", "https://example.com/on-base"]]) {
    const res = await visit(url);
    expect([url, res.status, res.headers.get("location")]).toEqual([url, 302, to]);
  }
  expect((await visit("http://other.scale.example/same")).status).toBe(404);

  expect((await api("DELETE", `/api/v1/domains/${added.body.id}?links=delete`)).status).toBe(204);
  await waitFor("the redirector hearing of the deletion", () => redirector.domains.resolve("go.scale.example") === null || null, 5_000);
  expect((await visit("http://go.scale.example/same")).status).toBe(404);
  expect((await visit("http://clink.test/same")).headers.get("location")).toBe("https://example.com/on-base");
}, 30_000);

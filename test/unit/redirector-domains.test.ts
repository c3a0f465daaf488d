/**
 * The redirector resolves by Host + slug (issue #24): domains added and verified through the REST API (the check
 * answered by a DNS server on loopback), the redirector told of each change over the HotState bus, requests in
 * process as Bun.serve hands them over. The same slug on two domains, Host spellings (case, trailing dot, port,
 * punycode), another account's domain, unknown and pending hosts, root and not-found redirects, the preview card's
 * og:url, a deleted domain,
 * and a cached link on a custom domain still answered without awaiting anything.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startDnsServer, type TestDnsServer } from "../helpers/dns-server.ts";
import { jsonOf } from "../helpers/in-process.ts";
import { expectPage, expectRedirect, socketFrom, startRedirector, UA, type RedirectorHarness } from "./redirector-harness.ts";

let h: RedirectorHarness;
let dns: TestDnsServer;
let otherKey: string;

beforeAll(async () => {
  h = await startRedirector();
  dns = await startDnsServer();
  h.cp.deps.domainChecks = { resolveTxt: dns.resolveTxt };
  otherKey = (await h.cp.createKey("someone-else@example.com")).key;
  await h.redirector.domains.ready;
});
afterAll(async () => {
  dns?.close();
  h?.redirector.domains.close();
  await h?.close();
});

/** The redirector's answer to a GET of `url` (any host), as Bun.serve would pass it. */
function get(url: string): Response | Promise<Response> {
  return h.redirector.fetch(new Request(url, { headers: { "user-agent": UA.desktop }, redirect: "manual" }), socketFrom("127.0.0.1"));
}

/** Waits (at most 2 s) until the redirector's table says `host` is served (or not): the bus message is what tells it. */
async function servedSoon(host: string, served = true): Promise<void> {
  const until = Date.now() + 2_000;
  while ((h.redirector.domains.resolve(host) !== null) !== served) {
    if (Date.now() > until) throw new Error(`the redirector did not learn that ${host} is ${served ? "" : "no longer "}served`);
    await Bun.sleep(5);
  }
}

async function api(method: string, path: string, json?: unknown, key = h.key) {
  const res = await h.cp.request(method, path, { key, json });
  return { status: res.status, body: await jsonOf(res) };
}

/** A domain added and verified by `key`'s account; the redirector has heard of it when this returns. */
async function verifiedDomain(hostname: string, key = h.key, extra: Record<string, unknown> = {}): Promise<{ id: string; hostname: string }> {
  const added = await api("POST", "/api/v1/domains", { hostname, ...extra }, key);
  expect(added.status).toBe(201);
  dns.txt.set(`_clink-challenge.${added.body.hostname}`, [[added.body.challenge.value]]);
  expect((await api("POST", `/api/v1/domains/${added.body.id}/verify`, undefined, key)).body.state).toBe("verified");
  await servedSoon(added.body.hostname);
  return added.body;
}

async function linkOn(domain: string | undefined, slug: string, url: string, key = h.key): Promise<void> {
  const res = await api("POST", "/api/v1/links", { url, slug, ...(domain ? { domain } : {}) }, key);
  expect([res.status, res.body.slug]).toEqual([201, slug]);
}

describe("Host + slug", () => {
  test("the same slug on the base domain and on a custom domain goes to each one's destination", async () => {
    await verifiedDomain("go.brand-one.example");
    await linkOn(undefined, "spring", "https://example.com/base-spring");
    await linkOn("go.brand-one.example", "spring", "https://brand-one.example/spring");
    expectRedirect(await get("http://clink.test/spring"), "https://example.com/base-spring");
    expectRedirect(await get("http://go.brand-one.example/spring"), "https://brand-one.example/spring");
    // Cached now: answered without a promise, for each domain.
    for (const [url, to] of [["http://go.brand-one.example/spring", "https://brand-one.example/spring"], ["http://clink.test/spring", "https://example.com/base-spring"]]) {
      const res = get(url);
      expect(res).toBeInstanceOf(Response);
      expectRedirect(res as Response, to);
    }
  });

  test("Host spellings: upper case, trailing dot, any port, and both forms of an IDN reach the same domain", async () => {
    await linkOn("go.brand-one.example", "summer", "https://brand-one.example/summer");
    for (const host of ["GO.Brand-One.EXAMPLE", "go.brand-one.example.", "go.brand-one.example:8080", "go.brand-one.example.:443"]) {
      expectRedirect(await get(`http://${host}/summer`), "https://brand-one.example/summer");
    }
    const idn = await verifiedDomain("kürz.example");
    expect(idn.hostname).toBe("xn--krz-hoa.example");
    await linkOn("kürz.example", "umlaut", "https://example.com/umlaut");
    expectRedirect(await get("http://kürz.example/umlaut"), "https://example.com/umlaut");
    expectRedirect(await get("http://XN--KRZ-HOA.example/umlaut"), "https://example.com/umlaut");
  });

  test("a Host never reaches another domain's links: another account's domain, the base's slugs, unknown and pending hosts", async () => {
    const theirs = await verifiedDomain("links.brand-two.example", otherKey);
    await linkOn(theirs.hostname, "theirs", "https://brand-two.example/theirs", otherKey);
    await linkOn(undefined, "baseonly", "https://example.com/baseonly");
    await linkOn("go.brand-one.example", "mine", "https://brand-one.example/mine");
    expectRedirect(await get("http://links.brand-two.example/theirs"), "https://brand-two.example/theirs");
    // Their Host with my slugs (on my domain, on the base): none is served there.
    expectPage(await get("http://links.brand-two.example/mine"), 404);
    expectPage(await get("http://links.brand-two.example/baseonly"), 404);
    // My domain with their slug; the base with a custom domain's slug.
    expectPage(await get("http://go.brand-one.example/theirs"), 404);
    expectPage(await get("http://clink.test/mine"), 404);
    // A name nobody verified: nothing, not the base domain's links.
    expectPage(await get("http://victim.example/baseonly"), 404);
    expectPage(await get("http://clink.test.evil.example/baseonly"), 404);
    const pending = await api("POST", "/api/v1/domains", { hostname: "pending.brand-one.example" });
    expect(pending.body.state).toBe("pending");
    expectPage(await get("http://pending.brand-one.example/baseonly"), 404);
    // Address literals and localhost are the base (health checks, a proxy passing no Host).
    for (const host of ["127.0.0.1:3000", "[::1]:3000", "localhost:3000", "CLINK.TEST.", "clink.test:80"]) {
      expectRedirect(await get(`http://${host}/baseonly`), "https://example.com/baseonly");
    }
  });

  test("a custom domain's root and unknown slugs go to its redirects when set, else 404; the base's do not", async () => {
    const d = await verifiedDomain("root.brand-one.example");
    expectPage(await get("http://root.brand-one.example/"), 404);
    expectPage(await get("http://root.brand-one.example/nothing-here"), 404);
    const patched = await api("PATCH", `/api/v1/domains/${d.id}`, { rootRedirect: "https://brand-one.example/", notFoundRedirect: "https://brand-one.example/404" });
    expect(patched.status).toBe(200);
    const until = Date.now() + 2_000;
    while (h.redirector.domains.resolve(d.hostname)?.rootRedirect !== "https://brand-one.example/" && Date.now() < until) await Bun.sleep(5);
    expectRedirect(await get("http://root.brand-one.example/"), "https://brand-one.example/");
    expectRedirect(await get("http://root.brand-one.example/?utm=x"), "https://brand-one.example/");
    expectRedirect(await get("http://root.brand-one.example/nothing-here"), "https://brand-one.example/404");
    expectRedirect(await get("http://root.brand-one.example/nothing-here"), "https://brand-one.example/404"); // cached unknown
    expectPage(await get("http://root.brand-one.example/a/b"), 404); // not a slug, not the root
    await linkOn(d.hostname, "known", "https://brand-one.example/known");
    expectRedirect(await get("http://root.brand-one.example/known"), "https://brand-one.example/known");
    expectPage(await get("http://clink.test/nothing-here"), 404);
  });

  test("a social crawler's preview card names the link's own short URL on its domain", async () => {
    await linkOn("go.brand-one.example", "card", "https://brand-one.example/card");
    await h.cp.request("PATCH", "/api/v1/links/card", { key: h.key, json: { serveOg: true, ogTitle: "Card" } });
    const crawl = (url: string) => h.redirector.fetch(new Request(url, { headers: { "user-agent": UA.facebook } }), socketFrom("127.0.0.1"));
    const page = await (await crawl("http://go.brand-one.example/card")).text();
    expect(page).toContain('content="https://go.brand-one.example/card"');
    await linkOn(undefined, "basecard", "https://example.com/basecard");
    await h.cp.request("PATCH", "/api/v1/links/basecard", { key: h.key, json: { serveOg: true, ogTitle: "Base" } });
    expect(await (await crawl("http://clink.test/basecard")).text()).toContain('content="http://clink.test/basecard"');
  });

  test("a deleted domain stops serving at once, its links with it", async () => {
    const d = await verifiedDomain("gone.brand-one.example");
    await linkOn(d.hostname, "bye", "https://brand-one.example/bye");
    expectRedirect(await get("http://gone.brand-one.example/bye"), "https://brand-one.example/bye");
    expect((await h.cp.request("DELETE", `/api/v1/domains/${d.id}?links=delete`, { key: h.key })).status).toBe(204);
    await servedSoon(d.hostname, false);
    expectPage(await get("http://gone.brand-one.example/bye"), 404);
  });

  test("a domain whose check fails again stops serving", async () => {
    const d = await verifiedDomain("lapsed.brand-one.example");
    dns.txt.delete(`_clink-challenge.${d.hostname}`);
    expect((await api("POST", `/api/v1/domains/${d.id}/verify`)).body.state).toBe("pending");
    await servedSoon(d.hostname, false);
  });
});

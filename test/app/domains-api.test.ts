/**
 * Custom domains over the REST API in process (issue #24): adding (hostnames normalised, refused in every wrong
 * form, unique across accounts), reading and changing only one's own, the ownership check for real (a DNS server on
 * loopback UDP answering TXT questions; an HTTP server on loopback serving the file, reached through the SSRF guard),
 * deleting with links (refused, deleted or moved in the same call), and the on-demand TLS `ask` endpoint.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startDnsServer, type TestDnsServer } from "../helpers/dns-server.ts";
import { jsonOf, problemOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import { keyWith } from "./scoped-routes.ts";
import { MAX_DOMAINS } from "../../control/domains/service.ts";

let cp: InProcessControlPlane;
let dns: TestDnsServer;
let files: ReturnType<typeof Bun.serve>;
/** What the HTTP file server answers, by path. */
const served = new Map<string, { status: number; body: string; delayMs?: number }>();
let key: string;
let otherKey: string;

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000", OWN_HOSTS: "own.example.net:8443" } });
  dns = await startDnsServer();
  files = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: async (req) => {
    const f = served.get(new URL(req.url).pathname);
    if (f?.delayMs) await Bun.sleep(f.delayMs);
    return new Response(f?.body ?? "missing", { status: f?.status ?? 404 });
  } });
  cp.deps.domainChecks = { resolveTxt: dns.resolveTxt, httpPort: files.port };
  // Every name resolves to loopback, where the file server is; only WEBHOOK_ALLOW_PRIVATE lets the check go there.
  cp.deps.resolveHost = async () => ["127.0.0.1"];
  key = (await cp.createKey("domains@example.com")).key;
  otherKey = (await cp.createKey("other@example.com")).key;
});
afterAll(async () => {
  dns?.close();
  files?.stop(true);
  await cp?.close();
});

const fresh = (prefix = "go") => `${prefix}${crypto.randomUUID().slice(0, 8)}.example.com`;
const add = async (json: unknown, k = key) => cp.request("POST", "/api/v1/domains", { key: k, json });
async function added(json: Record<string, unknown>, k = key) {
  const res = await add(json, k);
  expect(res.status).toBe(201);
  return jsonOf(res);
}
const verify = async (id: string, k = key) => cp.request("POST", `/api/v1/domains/${id}/verify`, { key: k });

describe("adding a domain", () => {
  test("the hostname is normalised: lower case, no trailing dot, IDN as punycode; the challenge says what to publish", async () => {
    const d = await added({ hostname: "  Go.Example-Shop.COM.  " });
    expect(d).toMatchObject({
      hostname: "go.example-shop.com", state: "pending", method: "dns", lastCheck: null, verifiedAt: null, rootRedirect: null, notFoundRedirect: null,
      challenge: { method: "dns", type: "TXT", name: "_clink-challenge.go.example-shop.com" },
    });
    expect(d.challenge.value).toMatch(/^clink-verify-[0-9A-Za-z]{32}$/);
    expect(d.id).toMatch(/^dom_/);
    const idn = await added({ hostname: "Bücher.example", method: "http", rootRedirect: "https://example.com/home" });
    expect(idn).toMatchObject({ hostname: "xn--bcher-kva.example", method: "http", rootRedirect: "https://example.com/home" });
    expect(idn.challenge).toEqual({ method: "http", url: `http://xn--bcher-kva.example/.well-known/clink-challenge/${idn.challenge.body}`, body: idn.challenge.body });
  });

  test("anything but a host name is refused at /hostname, naming what is wrong", async () => {
    const cases: [string, string][] = [
      ["go.example.com:8080", "no scheme, port or path"], ["https://go.example.com", "no scheme, port or path"],
      ["go.example.com/x", "no scheme, port or path"], ["user@go.example.com", "no scheme, port or path"],
      ["127.0.0.1", "not an IP address"], ["0x7f.1", "not an IP address"], ["[::1]", "no scheme, port or path"],
      ["localhost", "at least two labels"], ["-bad.example.com", "at least two labels"], ["a..example.com", "at least two labels"], ["xn--zz.example", "not a valid host name"],
      ["clink.test", "this service's own host"], ["OWN.example.net", "this service's own host"], ["", "must not be empty"],
    ];
    for (const [hostname, message] of cases) {
      const p = await problemOf(await add({ hostname }), 400, "invalid_input");
      expect([hostname, p.errors?.map((e) => e.path)]).toEqual([hostname, ["/hostname"]]);
      expect(p.errors![0].message).toContain(message);
    }
  });

  test("every invalid field is named in one answer; wrong bodies are refused", async () => {
    const p = await problemOf(await add({ hostname: "ok.example.com", method: "carrier-pigeon", rootRedirect: "ftp://x.example.com/", notFoundRedirect: "http://clink.test/loop", extra: 1 }), 400, "invalid_input");
    expect(p.errors!.map((e) => e.path).sort()).toEqual(["/extra", "/method", "/notFoundRedirect", "/rootRedirect"]);
    expect(p.errors!.find((e) => e.path === "/notFoundRedirect")!.message).toContain("this service's short addresses");
    await problemOf(await add({}), 400, "invalid_input");
    await problemOf(await add([1]), 400, "invalid_input");
    await problemOf(await cp.request("POST", "/api/v1/domains", { key, body: "{", headers: { "content-type": "application/json" } }), 400, "invalid_json");
    await problemOf(await cp.request("POST", "/api/v1/domains", { json: { hostname: fresh() } }), 401, "unauthorized");
  });

  test("a hostname someone has cannot be added again, by another account or the same one, in any spelling", async () => {
    const hostname = fresh();
    await added({ hostname });
    await problemOf(await add({ hostname: hostname.toUpperCase() }, otherKey), 409, "domain_taken");
    await problemOf(await add({ hostname: `${hostname}.` }), 409, "domain_taken");
  });

  test(`a workspace has at most ${MAX_DOMAINS} domains: one more is invalid_input at /, until one is deleted`, async () => {
    const full = await cp.createKey("domains-full@example.com");
    const mine = [];
    for (let i = 0; i < MAX_DOMAINS; i++) mine.push(await added({ hostname: fresh("full") }, full.key));
    const p = await problemOf(await add({ hostname: fresh("more") }, full.key), 400, "invalid_input");
    expect([p.detail, p.errors]).toEqual([
      `A workspace can have at most ${MAX_DOMAINS} domains; delete one first`, [{ path: "/", message: `a workspace can have at most ${MAX_DOMAINS} domains` }],
    ]);
    expect((await cp.request("DELETE", `/api/v1/domains/${mine[0].id}`, { key: full.key })).status).toBe(204);
    await added({ hostname: fresh("more") }, full.key);
  });
});

describe("reading and changing", () => {
  test("only the owner lists, reads, changes, verifies and deletes a domain; others get 404", async () => {
    const d = await added({ hostname: fresh() });
    const mine = await jsonOf(await cp.request("GET", "/api/v1/domains", { key }));
    expect(mine.domains.map((x: { id: string }) => x.id)).toContain(d.id);
    const theirs = await jsonOf(await cp.request("GET", "/api/v1/domains", { key: otherKey }));
    expect(theirs.domains.map((x: { id: string }) => x.id)).not.toContain(d.id);
    expect(await jsonOf(await cp.request("GET", `/api/v1/domains/${d.id}`, { key }))).toEqual(d);
    await problemOf(await cp.request("GET", `/api/v1/domains/${d.id}`, { key: otherKey }), 404, "not_found");
    await problemOf(await cp.request("PATCH", `/api/v1/domains/${d.id}`, { key: otherKey, json: { rootRedirect: "https://evil.example.com/" } }), 404, "not_found");
    await problemOf(await verify(d.id, otherKey), 404, "not_found");
    await problemOf(await cp.request("DELETE", `/api/v1/domains/${d.id}`, { key: otherKey }), 404, "not_found");
    await problemOf(await cp.request("GET", "/api/v1/domains/dom_nothing", { key }), 404, "not_found");
    expect(await jsonOf(await cp.request("GET", `/api/v1/domains/${d.id}`, { key }))).toEqual(d);
  });

  test("PATCH sets and clears the redirects; a new method makes the domain pending again; bad changes are refused", async () => {
    const d = await added({ hostname: fresh() });
    const patch = (json: unknown) => cp.request("PATCH", `/api/v1/domains/${d.id}`, { key, json });
    const set = await jsonOf(await patch({ rootRedirect: "https://example.com/", notFoundRedirect: "https://example.com/404" }));
    expect(set).toMatchObject({ rootRedirect: "https://example.com/", notFoundRedirect: "https://example.com/404", method: "dns" });
    expect(await jsonOf(await patch({ rootRedirect: null, notFoundRedirect: "" }))).toMatchObject({ rootRedirect: null, notFoundRedirect: null });
    expect(await jsonOf(await patch({ method: "http" }))).toMatchObject({ method: "http", state: "pending", challenge: { method: "http" } });
    for (const body of [{}, { hostname: "other.example.com" }, { method: "smoke" }, { rootRedirect: "javascript:alert(1)" }]) {
      await problemOf(await patch(body), 400, "invalid_input");
    }
    await problemOf(await cp.request("PUT", `/api/v1/domains/${d.id}`, { key, json: {} }), 405, "method_not_allowed");
    await problemOf(await cp.request("GET", `/api/v1/domains/${d.id}/verify`, { key }), 405, "method_not_allowed");
  });
});

describe("the ownership check", () => {
  test("DNS: no record, a record without the token, then the token: the result is told each time, verified at the end", async () => {
    const d = await added({ hostname: fresh("dns") });
    const name = `_clink-challenge.${d.hostname}`;
    const none = await jsonOf(await verify(d.id));
    expect(none).toMatchObject({ state: "pending", lastCheck: { ok: false, result: `no TXT record at ${name}` } });
    dns.txt.set(name, [["v=spf1 -all"]]);
    expect((await jsonOf(await verify(d.id))).lastCheck).toMatchObject({ ok: false, result: `1 TXT record at ${name}, none holding the token` });
    dns.txt.set(name, [["v=spf1 -all"], [d.challenge.value]]);
    const ok = await jsonOf(await verify(d.id));
    expect(ok).toMatchObject({ state: "verified", lastCheck: { ok: true, result: `TXT record found at ${name}` } });
    expect(ok.verifiedAt).toBe(ok.lastCheck.at);
    // The record removed: the next check takes the domain out of service.
    dns.txt.delete(name);
    expect(await jsonOf(await verify(d.id))).toMatchObject({ state: "pending", verifiedAt: null, lastCheck: { ok: false } });
  });

  test("HTTP: refused on a private address without WEBHOOK_ALLOW_PRIVATE; then a missing file, a wrong one, a redirect, the right one", async () => {
    const d = await added({ hostname: fresh("web"), method: "http" });
    const path = `/.well-known/clink-challenge/${d.challenge.body}`;
    const refused = await jsonOf(await verify(d.id));
    expect(refused).toMatchObject({ state: "pending", lastCheck: { ok: false } });
    expect(refused.lastCheck.result).toStartWith("refused: ");
    cp.deps.config.webhookAllowPrivate = true;
    try {
      const url = `http://${d.hostname}:${files.port}${path}`;
      expect((await jsonOf(await verify(d.id))).lastCheck.result).toBe(`${url} answered HTTP 404`);
      served.set(path, { status: 200, body: "something else" });
      expect((await jsonOf(await verify(d.id))).lastCheck.result).toBe(`${url} does not hold the token`);
      served.set(path, { status: 302, body: "" });
      expect((await jsonOf(await verify(d.id))).lastCheck.result).toBe(`${url} answered HTTP 302 (redirects are not followed)`);
      served.set(path, { status: 200, body: `${d.challenge.body}\n` });
      expect(await jsonOf(await verify(d.id))).toMatchObject({ state: "verified", lastCheck: { ok: true, result: `file found at ${url}` } });
    } finally {
      cp.deps.config.webhookAllowPrivate = false;
    }
  });
});

test("a change made while a check runs is kept: the check's result is written over the changed domain", async () => {
  const d = await added({ hostname: fresh("race"), method: "http" });
  served.set(`/.well-known/clink-challenge/${d.challenge.body}`, { status: 200, body: d.challenge.body, delayMs: 300 });
  cp.deps.config.webhookAllowPrivate = true;
  try {
    const checking = verify(d.id);
    await Bun.sleep(100);
    const patched = await cp.request("PATCH", `/api/v1/domains/${d.id}`, { key, json: { rootRedirect: "https://example.com/kept" } });
    expect(patched.status).toBe(200);
    expect(await jsonOf(await checking)).toMatchObject({ state: "verified", rootRedirect: "https://example.com/kept" });
    expect(await jsonOf(await cp.request("GET", `/api/v1/domains/${d.id}`, { key }))).toMatchObject({ state: "verified", rootRedirect: "https://example.com/kept" });
  } finally {
    cp.deps.config.webhookAllowPrivate = false;
  }
});

/** A domain of `k`'s account, verified through the DNS server. */
async function verifiedDomain(k = key): Promise<{ id: string; hostname: string }> {
  const d = await added({ hostname: fresh("v") }, k);
  dns.txt.set(`_clink-challenge.${d.hostname}`, [[d.challenge.value]]);
  expect((await jsonOf(await verify(d.id, k))).state).toBe("verified");
  return d;
}

describe("deleting", () => {
  test("a domain with links is refused unless its links are deleted or moved in the same call", async () => {
    const d = await verifiedDomain();
    const target = await verifiedDomain();
    const link = async (slug: string, domain?: string) => {
      const res = await cp.request("POST", "/api/v1/links", { key, json: { url: "https://example.com/x", slug, ...(domain ? { domain } : {}) } });
      expect(res.status).toBe(201);
    };
    const slug = `dl${crypto.randomUUID().slice(0, 6)}`;
    await link(slug, d.hostname);
    await link(`${slug}b`, d.hostname);
    const del = (query = "") => cp.request("DELETE", `/api/v1/domains/${d.id}${query}`, { key });
    expect((await problemOf(await del(), 409, "domain_has_links")).detail).toContain("2 links");
    expect((await problemOf(await del("?links=keep"), 400, "invalid_parameter")).errors).toEqual([{ path: "/links", message: "must be delete" }]);
    await problemOf(await del(`?links=delete&moveTo=${target.hostname}`), 400, "invalid_input");
    await problemOf(await del("?moveTo=nowhere.example.com"), 400, "invalid_input");
    await problemOf(await del(`?moveTo=${d.hostname}`), 400, "invalid_input");
    await link(slug, target.hostname);
    await problemOf(await del(`?moveTo=${target.hostname}`), 409, "domain_slug_conflict");
    await link(slug); // the base domain has it too
    await problemOf(await del("?moveTo=base"), 409, "domain_slug_conflict");
    expect((await jsonOf(await cp.request("GET", `/api/v1/domains/${d.id}`, { key }))).id).toBe(d.id);
    expect((await del("?links=delete")).status).toBe(204);
    await problemOf(await cp.request("GET", `/api/v1/domains/${d.id}`, { key }), 404, "not_found");
    expect(await cp.deps.store.countDomainLinks(d.hostname)).toBe(0);
  });

  test("moveTo=base moves the links to the base domain, keeping their slugs", async () => {
    const d = await verifiedDomain();
    const slug = `mv${crypto.randomUUID().slice(0, 6)}`;
    expect((await cp.request("POST", "/api/v1/links", { key, json: { url: "https://example.com/m", slug, domain: d.hostname } })).status).toBe(201);
    expect((await cp.request("DELETE", `/api/v1/domains/${d.id}?moveTo=base`, { key })).status).toBe(204);
    expect((await cp.deps.store.getLink(cp.deps.config.defaultDomain, slug))?.target).toBe("https://example.com/m");
  });
});

describe("the on-demand TLS ask endpoint", () => {
  test("200 for the base host, OWN_HOSTS and verified domains; 404 for pending, unknown, malformed or missing names", async () => {
    const v = await verifiedDomain();
    const pending = await added({ hostname: fresh("p") });
    const ask = async (q: string) => (await cp.request("GET", `/api/internal/tls-ask${q}`)).status;
    for (const host of ["clink.test", "own.example.net", v.hostname, v.hostname.toUpperCase(), `${v.hostname}.`]) {
      expect([host, await ask(`?domain=${encodeURIComponent(host)}`)]).toEqual([host, 200]);
    }
    for (const q of [`?domain=${pending.hostname}`, "?domain=unknown.example.com", "?domain=127.0.0.1", "?domain=", "", `?domain=${v.hostname}:443`]) {
      expect([q, await ask(q)]).toEqual([q, 404]);
    }
  });
});

describe("links on a chosen domain", () => {
  const create = (json: Record<string, unknown>, k = key) => cp.request("POST", "/api/v1/links", { key: k, json: { url: "https://example.com/dest", ...json } });

  test("a verified domain of the caller's takes links; its slugs are its own; the link shows its short URL there", async () => {
    const d = await verifiedDomain();
    const slug = `same${crypto.randomUUID().slice(0, 6)}`;
    const onDomain = await jsonOf(await create({ slug, domain: d.hostname.toUpperCase() }));
    expect(onDomain).toMatchObject({ slug, shortUrl: `https://${d.hostname}/${slug}` });
    const onBase = await jsonOf(await create({ slug }));
    expect(onBase).toMatchObject({ slug, shortUrl: `http://clink.test/${slug}` });
    await problemOf(await create({ slug, domain: d.hostname }), 409, "slug_taken");
    expect(await jsonOf(await create({ slug: `${slug}x`, domain: "clink.test" }))).toMatchObject({ shortUrl: `http://clink.test/${slug}x` });
    expect((await jsonOf(await create({ domain: "" }))).shortUrl).toStartWith("http://clink.test/");
    expect((await jsonOf(await create({ domain: "CLINK.TEST." }))).shortUrl).toStartWith("http://clink.test/");
    expect((await cp.deps.store.getLink(d.hostname, slug))?.target).toBe("https://example.com/dest");
    // The API names a link by slug: the base domain's first, then the caller's domains.
    const only = `only${crypto.randomUUID().slice(0, 6)}`;
    await create({ slug: only, domain: d.hostname });
    expect(await jsonOf(await cp.request("GET", `/api/v1/links/${only}`, { key }))).toMatchObject({ shortUrl: `https://${d.hostname}/${only}` });
    await problemOf(await cp.request("GET", `/api/v1/links/${only}`, { key: otherKey }), 404, "not_found");
  });

  test("a pending, unknown or another account's domain is refused at /domain, the same way for each", async () => {
    const pending = await added({ hostname: fresh("pend") });
    const theirs = await verifiedDomain(otherKey);
    for (const domain of [pending.hostname, "unknown.example.com", theirs.hostname, "not a host", 42]) {
      const p = await problemOf(await create({ domain }), 400, "invalid_input");
      expect([domain, p.errors?.map((e) => e.path)]).toEqual([domain, ["/domain"]]);
    }
    // A bulk row with such a domain fails alone.
    const bulk = await jsonOf(await cp.request("POST", "/api/v1/bulk", { key, json: [{ url: "https://example.com/1", domain: theirs.hostname }, { url: "https://example.com/2" }] }));
    expect([bulk.failed, bulk.created, bulk.results[0].error.code]).toEqual([1, 1, "invalid_input"]);
  });
});

describe("through MCP", () => {
  test("create_link takes the same domain, with the same refusal for a domain not verified by the caller", async () => {
    const d = await verifiedDomain();
    const call = (args: Record<string, unknown>) =>
      cp.request("POST", "/mcp", {
        key, headers: { accept: "application/json, text/event-stream" },
        json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "create_link", arguments: { url: "https://example.com/mcp", ...args } } },
      }).then(jsonOf);
    const made = await call({ slug: "via-mcp", domain: d.hostname });
    expect(made.result.structuredContent).toMatchObject({ slug: "via-mcp", shortUrl: `https://${d.hostname}/via-mcp` });
    const refused = await call({ domain: "unknown.example.com" });
    expect(refused.result.isError).toBe(true);
    expect(JSON.stringify(refused.result.content)).toContain("/domain");
  });
});

/**
 * Issue #21, destinations that cannot loop: every spelling a browser would resolve to the service's own short
 * address is refused (400 invalid_input at the field's path) over REST create, update and bulk, and MCP, for the
 * in-process control plane on a local base (http://localhost:PORT, as `npm start` runs it).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../../shared/config.ts";
import { jsonOf, problemOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

const PORT = 4317;
const OWN = `http://localhost:${PORT}`;
let cp: InProcessControlPlane;
let key: string;

const request = (method: string, path: string, json: unknown) => cp.request(method, path, { key, json });

beforeAll(async () => {
  cp = await startControlPlane({ env: { BASE_URL: OWN, PORT: String(PORT), RATE_LIMIT_PER_MINUTE: "100000" } });
  key = (await cp.createKey("alice@example.com")).key;
  expect((await request("POST", "/api/v1/links", { url: "https://example.com/", slug: "existing" })).status).toBe(201);
});
afterAll(() => cp?.close());

/** Spellings that send a browser back to this service (the first two resolve against the short address itself). */
const LOOPING = [
  "http:/SLUG", "http:SLUG", "https:\\\\x.example", `http://localhost.:${PORT}/existing`, `HTTP://LOCALHOST:${PORT}/existing`,
  `http://127.0.0.1:${PORT}/existing`, `http://[::1]:${PORT}/existing`, `http://127.1:${PORT}/existing`, `http://app.localhost:${PORT}/x`,
];

async function refusedAt(res: Response, path: string) {
  const body = await problemOf(res, 400, "invalid_input");
  expect(body.errors?.map((e) => e.path)).toEqual([path]);
  expect(body.errors?.[0].message).toMatch(/absolute http or https URL with a host|backslash|this service's short addresses/);
}

describe("REST", () => {
  for (const url of LOOPING) {
    test(`create with ${url} → 400 at /url, nothing created`, async () => {
      const slug = `loop-${LOOPING.indexOf(url)}`;
      await refusedAt(await request("POST", "/api/v1/links", { url: url.replace("SLUG", slug), slug }), "/url");
      expect((await cp.request("GET", `/api/v1/links/${slug}`, { key })).status).toBe(404);
    });
  }
  test("update: targetUrl, rule and A/B addresses, expiredUrl, each at its path", async () => {
    await refusedAt(await request("PATCH", "/api/v1/links/existing", { targetUrl: "http:/existing" }), "/targetUrl");
    await refusedAt(await request("PATCH", "/api/v1/links/existing", { rules: [{ kind: "device", match: "ios", url: `http://localhost.:${PORT}/existing` }] }), "/rules/0/url");
    await refusedAt(await request("PATCH", "/api/v1/links/existing", { abUrls: [{ url: "http:existing", weight: 1 }] }), "/abUrls/0/url");
    await refusedAt(await request("PATCH", "/api/v1/links/existing", { expiredUrl: `http://[::1]:${PORT}/existing` }), "/expiredUrl");
    expect((await jsonOf(await cp.request("GET", "/api/v1/links/existing", { key }))).target).toBe("https://example.com/");
  });
  test("bulk: the looping row fails alone", async () => {
    const res = await request("POST", "/api/v1/bulk", [{ url: "http:/bulk-a", slug: "bulk-a" }, { url: "https://example.com/b", slug: "bulk-b" }]);
    const body = await jsonOf(res);
    expect(body.results.map((r: { ok: boolean }) => r.ok)).toEqual([false, true]);
    expect(body.results[0].error.errors.map((e: { path: string }) => e.path)).toEqual(["/url"]);
  });
  test("other ports of this machine and other hosts are still accepted", async () => {
    for (const url of [`http://localhost:${PORT + 1}/x`, "http://127.0.0.1:9/x", "https://example.com/x?q=a\\b"]) {
      expect((await request("POST", "/api/v1/links", { url })).status).toBe(201);
    }
  });
});

test("MCP create_link refuses the same spellings with the same error", async () => {
  const res = await cp.request("POST", "/mcp", {
    key,
    headers: { accept: "application/json, text/event-stream" },
    json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "create_link", arguments: { url: "http:/mcp-loop", slug: "mcp-loop" } } },
  });
  const result = (await jsonOf(res)).result;
  expect(result.isError).toBe(true);
  const problem = JSON.parse(result.content[0].text);
  expect([problem.code, problem.errors.map((e: { path: string }) => e.path)]).toEqual(["invalid_input", ["/url"]]);
});

test("with WEBHOOK_ALLOW_PRIVATE=true, metadata addresses in NAT64 and 6to4 form stay refused", async () => {
  const open = await startControlPlane({ env: { WEBHOOK_ALLOW_PRIVATE: "true" } });
  try {
    const { key: k } = await open.createKey("alice@example.com");
    for (const webhookUrl of ["http://[64:ff9b::a9fe:a9fe]/latest", "http://[2002:a9fe:a9fe::1]/latest", "http://[::ffff:169.254.169.254]/"]) {
      const body = await problemOf(await open.request("POST", "/api/v1/links", { key: k, json: { url: "https://example.com/", webhookUrl } }), 400, "invalid_input");
      expect(body.errors).toEqual([{ path: "/webhookUrl", message: expect.stringContaining("is a metadata address") }]);
    }
    expect((await open.request("POST", "/api/v1/links", { key: k, json: { url: "https://example.com/", webhookUrl: "http://[64:ff9b::a00:1]/" } })).status).toBe(201);
  } finally {
    await open.close();
  }
});

test("OWN_HOSTS: the server's other names and addresses are its own too, in any spelling; a bad entry stops start-up", async () => {
  const other = await startControlPlane({ env: { BASE_URL: "https://sho.rt", OWN_HOSTS: "go.example.com, 203.0.113.7:8080, https://Links.Example.org" } });
  try {
    const k = (await other.createKey("owner@example.com")).key;
    const create = (url: string) => other.request("POST", "/api/v1/links", { key: k, json: { url } });
    for (const url of ["https://go.example.com/x", "http://GO.EXAMPLE.COM./x", "http://203.0.113.7:8080/x", "https://links.example.org:443/x", "https://sho.rt/x"]) {
      await refusedAt(await create(url), "/url");
    }
    for (const url of ["https://203.0.113.7/x", "https://go.example.net/x"]) expect((await create(url)).status).toBe(201);
  } finally {
    await other.close();
  }
  expect(() => loadConfig({ OWN_HOSTS: "ftp://x.example" })).toThrow("OWN_HOSTS");
  expect(() => loadConfig({ OWN_HOSTS: "http://x.example/path" })).toThrow("OWN_HOSTS");
});

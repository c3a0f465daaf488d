/**
 * Checks that lived only in the end-to-end files (test/e2e/api, mcp and dashboard), moved here when those tests were
 * removed because the other in-process files cover the rest of what they asserted. Each test names the behaviour
 * the e2e test checked and the in-process files did not; nothing here needs a real socket, process or redirector.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { formFieldsOf, Visitor } from "../helpers/dashboard-visitor.ts";
import { BASE_URL, jsonOf, passwordOf, problemOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

const MCP_ACCEPT = { accept: "application/json, text/event-stream" };
const TOOLS_LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };

let cp: InProcessControlPlane;
let key: string;

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  key = (await cp.createKey("alice@example.com")).key;
});
afterAll(() => cp?.close());

/** The MCP SDK's own Client over Streamable HTTP, its requests handed to `plane`'s app; `bearer` sent when given. */
function mcpClient(plane: InProcessControlPlane, bearer?: string) {
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE_URL}/mcp`), {
    requestInit: bearer === undefined ? {} : { headers: { Authorization: `Bearer ${bearer}` } },
    fetch: (url, init) => plane.handle(new Request(url, init)),
  });
  return { client: new Client({ name: "clink-e2e-ported", version: "1.0.0" }), transport };
}

describe("REST", () => {
  test("slugs with an encoded dot-dot or with emoji answer 400 invalid_input at /slug", async () => {
    for (const slug of ["..%2f..", "🔥🔥🔥"]) {
      const res = await cp.request("POST", "/api/v1/links", { key, json: { url: "https://example.com", slug } });
      expect((await problemOf(res, 400, "invalid_input")).errors!.map((e) => e.path)).toEqual(["/slug"]);
    }
  });

  test("the docs page loads /api/v1/openapi.json, whose create schema describes url", async () => {
    expect(await (await cp.request("GET", "/api/v1/docs")).text()).toContain("/api/v1/openapi.json");
    const doc = await jsonOf(await cp.request("GET", "/api/v1/openapi.json"));
    expect(doc.paths["/api/v1/links"].post.requestBody.content["application/json"].schema.properties.url).toMatchObject({ type: "string" });
  });

  test("by default a key may make 120 calls a minute, and the answers say so", async () => {
    const plain = await startControlPlane();
    try {
      const res = await plain.request("GET", "/api/v1/links", { key: (await plain.createKey("default@example.com")).key });
      expect(["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"].map((h) => res.headers.get(h))).toEqual(["120", "119", "60"]);
    } finally {
      await plain.close();
    }
  });
});

describe("MCP", () => {
  test("a key in a token= query parameter is ignored, and the SDK Client cannot connect without a key", async () => {
    await problemOf(await cp.request("POST", `/mcp?token=${key}`, { json: TOOLS_LIST, headers: MCP_ACCEPT }), 401, "unauthorized");
    const { client, transport } = mcpClient(cp);
    await expect(client.connect(transport)).rejects.toThrow();
  });

  test("a POST with no body answers 400 invalid_json", async () => {
    await problemOf(await cp.request("POST", "/mcp", { key, headers: { ...MCP_ACCEPT, "content-type": "application/json" } }), 400, "invalid_json");
  });

  test("after malformed tools/call params the session still serves well-formed calls", async () => {
    const { client, transport } = mcpClient(cp, key);
    await client.connect(transport);
    try {
      const malformed = { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: 5, arguments: {} } };
      const res = await cp.request("POST", "/mcp", { key, json: malformed, headers: { ...MCP_ACCEPT, "mcp-session-id": transport.sessionId! } });
      expect((await res.json()).error.code).toBe(-32602);
      const listed = (await client.callTool({ name: "list_links", arguments: { limit: 1 } })) as { isError?: boolean };
      expect(listed.isError).toBeUndefined();
    } finally {
      await client.close();
    }
  });

  test("tool calls through the SDK Client count against the key's budget: the client sees the 429, then REST does", async () => {
    const limited = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "5" } });
    try {
      const limitedKey = (await limited.createKey("mcp-limit-client@example.com")).key;
      const { client, transport } = mcpClient(limited, limitedKey);
      await client.connect(transport);
      let failure: unknown = null;
      let calls = 0;
      while (failure === null && calls < 10) {
        calls++;
        await client.callTool({ name: "list_links", arguments: {} }).catch((e) => (failure = e));
      }
      // initialize and notifications/initialized (and the client's GET probe) took part of the 5.
      expect(calls).toBeLessThanOrEqual(4);
      expect(String(failure)).toContain("429");
      await problemOf(await limited.request("GET", "/api/v1/links", { key: limitedKey }), 429, "rate_limited");
      await client.close();
    } finally {
      await limited.close();
    }
  });
});

describe("dashboard", () => {
  const XSS = "<img src=x onerror=alert(1)>";

  /** A visitor signed in as `email` (the account is created first when missing). */
  async function signedIn(email: string): Promise<Visitor> {
    await cp.account(email);
    const v = new Visitor(BASE_URL, cp.handle);
    expect((await v.submit("/dashboard/signin", "/dashboard/signin", { email, password: passwordOf(email) })).status).toBe(303);
    return v;
  }

  test("a next with ./ and ../ segments is not kept; the sign-in page may not be framed", async () => {
    const page = await new Visitor(BASE_URL, cp.handle).get(`/dashboard/signin?next=${encodeURIComponent("/dashboard/./../x")}`);
    expect(page.html).toContain('name="next" value="/dashboard/links"');
    expect(page.headers.get("content-security-policy")!.split("; ")).toContain("frame-ancestors 'none'");
  });

  test("over plain http the session cookie has the https flags but Secure", async () => {
    await cp.account("plain-flags@example.com");
    const v = new Visitor(BASE_URL, cp.handle);
    await v.submit("/dashboard/signin", "/dashboard/signin", { email: "plain-flags@example.com", password: passwordOf("plain-flags@example.com") });
    const cookie = v.setCookies.find((c) => c.startsWith("clink_session="))!;
    expect(cookie.split("; ").slice(1)).toEqual(["Path=/dashboard", "HttpOnly", "SameSite=Lax", "Max-Age=1209600"]);
  });

  test("a sign-in from a foreign Origin is refused with 403 even with the page's token, and opens no session", async () => {
    await cp.account("foreign-origin@example.com");
    const v = new Visitor(BASE_URL, cp.handle);
    const res = await v.submit("/dashboard/signin", "/dashboard/signin", {
      email: "foreign-origin@example.com", password: passwordOf("foreign-origin@example.com"),
    }, { origin: "https://evil.example" });
    expect([res.status, v.cookies.has("clink_session")]).toEqual([403, false]);
  });

  test("the delete page shows a hostile target as its percent-encoded text", async () => {
    const v = await signedIn("xss-delete@example.com");
    await v.submit("/dashboard/links/new", "/dashboard/links", { url: `https://example.com/?q=${XSS}`, slug: "xss-delete" });
    const page = await v.get("/dashboard/links/xss-delete/delete");
    expect([page.status, page.html.includes("<img"), page.html.includes("https://example.com/?q=%3Cimg%20src=x%20onerror=alert(1)%3E")]).toEqual([200, false, true]);
  });

  test("errors the input schema finds (a zero limit, a weight that is no number) are the API's, in plain words in the form", async () => {
    const v = await signedIn("schema-errors@example.com");
    const bad = await v.submit("/dashboard/links/new", "/dashboard/links", {
      url: "ftp://example.com", maxHits: "0", rule_kind: ["country", "device"], rule_match: ["USA", "fridge"],
      rule_url: ["https://us.example.com", "javascript:alert(1)"], ab_url: ["https://a.example.com"], ab_weight: ["heavy"],
    });
    const viaApi = await problemOf(await cp.request("POST", "/api/v1/links", { key, json: {
      url: "ftp://example.com", maxHits: 0, rules: [{ kind: "country", match: "USA", url: "https://us.example.com" }, { kind: "device", match: "fridge", url: "javascript:alert(1)" }],
      abUrls: [{ url: "https://a.example.com", weight: "heavy" }], serveOg: false, status: "active",
    } }), 400, "invalid_input");
    expect(viaApi.errors!.map((e) => e.path)).toEqual(["/maxHits", "/abUrls/0/weight", "/url", "/rules/0/match", "/rules/1/match", "/rules/1/url"]);
    expect(bad.status).toBe(400);
    // The form shows the API's own words (shared/messages.ts), the schema's limits as much as the field rules.
    for (const e of viaApi.errors!) expect(bad.html).toContain(e.message);
    expect(viaApi.errors!.slice(0, 2).map((e) => e.message)).toEqual(["must be at least 1", "must be a number"]);
    expect(bad.html.includes("Expected")).toBe(false);
    expect(bad.html).toContain('value="USA"');
  });

  test("a password set in the form is kept when the edit form's password is left blank; the edit form shows the rule rows", async () => {
    const v = await signedIn("form-password@example.com");
    const { key: own } = await cp.createKey("form-password@example.com");
    await v.submit("/dashboard/links/new", "/dashboard/links", {
      url: "https://example.com/landing", slug: "with-pw", password: "pw-secret", rule_kind: ["device"], rule_match: ["mobile"], rule_url: ["https://m.example.com"],
    });
    const read = async () => jsonOf(await cp.request("GET", "/api/v1/links/with-pw", { key: own }));
    expect((await read()).hasPassword).toBe(true);
    const edit = await v.get("/dashboard/links/with-pw/edit");
    expect(edit.html).toContain('value="https://m.example.com"');
    expect((await v.post("/dashboard/links/with-pw/edit", { ...formFieldsOf(edit.html), folder: "moved", password: "" })).status).toBe(303);
    expect(await read()).toMatchObject({ folder: "moved", hasPassword: true });
  });

  test("saving the edit form unchanged keeps expiredUrl and externalId", async () => {
    const v = await signedIn("unchanged-ids@example.com");
    const { key: own } = await cp.createKey("unchanged-ids@example.com");
    const input = { url: "https://example.com/same", slug: "kept-ids", expiresAt: "2031-01-01T00:00:45.500Z", expiredUrl: "https://example.com/after", externalId: "same-1" };
    expect((await cp.request("POST", "/api/v1/links", { key: own, json: input })).status).toBe(201);
    const read = async () => jsonOf(await cp.request("GET", "/api/v1/links/kept-ids", { key: own }));
    const before = await read();
    const edit = await v.get("/dashboard/links/kept-ids/edit");
    expect((await v.post("/dashboard/links/kept-ids/edit", formFieldsOf(edit.html))).status).toBe(303);
    expect({ ...(await read()), updatedAt: before.updatedAt }).toEqual(before);
  });
});

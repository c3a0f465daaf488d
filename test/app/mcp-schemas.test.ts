/**
 * The MCP tool schemas (docs/mcp.md "What the schemas promise"), in process: tools/list as clients receive it (its
 * size, a description on top of every input property, the REST rules in the schemas, enumerations only from
 * shared/enums.ts), every tool called by the 1.x and the 2.x SDK Client, which check each structuredContent
 * against the tool's output schema ($defs and $ref included), and the same validation words in REST and MCP.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/client/validators/ajv";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { AjvJsonSchemaValidator as AjvValidatorV1 } from "@modelcontextprotocol/sdk/validation/ajv";
import { LINK_TOOLS } from "../../control/mcp/tools.ts";
import { BOT_MODES, INTERVALS } from "../../control/stats/analytics-types.ts";
import { STATS_GROUPINGS } from "../../control/stats/mcp-input.ts";
import { DEVICE_MATCHES, LINK_STATES, LINK_STATUSES, RULE_KINDS } from "../../shared/enums.ts";
import { LINK_REF_PATTERN, MESSAGES, SLUG_PATTERN } from "../../shared/messages.ts";
import { BASE_URL, jsonOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

/**
 * tools/list was 74.3 KB before the schemas were compacted (2026-11-25), then 51.x KB; 53.0 KB since the link names
 * its domain and the seven tools naming a link by slug take `domain` (issue #24). See docs/mcp.md for what the bytes hold.
 */
const TOOLS_LIST_MAX_BYTES = 54_000;

type Schema = Record<string, any>;
type Tool = { name: string; title?: string; inputSchema: Schema; outputSchema?: Schema; annotations?: Schema };

let cp: InProcessControlPlane;
let key: string;
let tools: Tool[];
let listBytes: number;

const post = (json: unknown) =>
  cp.request("POST", "/mcp", { key, json, headers: { accept: "application/json, text/event-stream" } });

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  key = (await cp.createKey("mcp-schemas@example.com")).key;
  const text = await (await post({ jsonrpc: "2.0", id: 1, method: "tools/list" })).text();
  listBytes = new TextEncoder().encode(text).length;
  tools = JSON.parse(text).result.tools;
});
afterAll(async () => {
  await cp?.close();
});

const byName = (name: string) => tools.find((t) => t.name === name)!;

/** Every subschema below `node`, with the path it stands at. */
function* subschemas(node: unknown, path = ""): Generator<[string, Schema]> {
  if (Array.isArray(node)) for (const [i, n] of node.entries()) yield* subschemas(n, `${path}/${i}`);
  else if (node !== null && typeof node === "object") {
    yield [path, node as Schema];
    for (const [k, v] of Object.entries(node)) yield* subschemas(v, `${path}/${k}`);
  }
}

/** Every property schema below `node`, with its path: the properties of objects at any depth, items and branches included. */
function* propertiesOf(schema: Schema): Generator<[string, Schema]> {
  for (const [path, s] of subschemas(schema)) {
    if (s.properties && typeof s.properties === "object" && !path.endsWith("/properties")) {
      for (const [name, p] of Object.entries<Schema>(s.properties)) yield [`${path}.${name}`, p];
    }
  }
}

describe("tools/list", () => {
  test(`is under ${TOOLS_LIST_MAX_BYTES} bytes, with the ten tools, their titles, annotations and scopes as before`, () => {
    expect(listBytes).toBeLessThan(TOOLS_LIST_MAX_BYTES);
    expect(tools.map((t) => [t.name, t.title, t.annotations?.title])).toEqual(LINK_TOOLS.map((t) => [t.name, t.title, t.title]));
    expect(Object.fromEntries(LINK_TOOLS.map((t) => [t.name, t.scope]))).toEqual({
      create_link: "links:write", bulk_create_links: "links:write", list_links: "links:read", get_link: "links:read",
      update_link: "links:write", delete_link: "links:write", get_link_stats: "stats:read", set_targeting_rules: "links:write",
      set_ab_test: "links:write", set_link_preview: "links:write",
    });
  });

  test("every input property, at any depth, has its description on top; input schemas are self-contained, output $refs resolve", () => {
    const undescribed: string[] = [];
    let counted = 0;
    for (const t of tools) {
      for (const [path, p] of propertiesOf(t.inputSchema)) {
        counted++;
        if (typeof p.description !== "string" || p.description.length < 8) undescribed.push(`${t.name}${path}`);
      }
      expect(JSON.stringify(t.inputSchema)).not.toContain("$ref");
      for (const [, s] of subschemas(t.outputSchema)) {
        if (typeof s.$ref !== "string") continue;
        expect(s.$ref).toMatch(/^#\/\$defs\/\w+$/);
        expect(t.outputSchema!.$defs[s.$ref.slice("#/$defs/".length)]).toBeDefined();
      }
    }
    expect(counted).toBeGreaterThan(100);
    expect(undescribed).toEqual([]);
    // The analytics' breakdown, one per dimension, is written once.
    expect(Object.keys(byName("get_link_stats").outputSchema!.$defs).length).toBeGreaterThan(0);
  });

  test("the REST rules are in the schemas: slug pattern and length, tag limits, uri and date-time formats", () => {
    const create = byName("create_link").inputSchema.properties;
    expect(create.slug).toMatchObject({ type: "string", pattern: SLUG_PATTERN, minLength: 3, maxLength: 40 });
    for (const name of ["get_link", "delete_link", "set_ab_test"]) {
      expect(byName(name).inputSchema.properties.slug).toMatchObject({ pattern: LINK_REF_PATTERN, maxLength: 204 });
    }
    const slugRef = new RegExp(LINK_REF_PATTERN);
    expect(["spring-sale", "ext_crm-42", "ext_a|b"].map((s) => slugRef.test(s))).toEqual([true, true, true]);
    expect(["ab", "a b", "ext_a/b", "ext_a b", "x".repeat(41)].map((s) => slugRef.test(s))).toEqual([false, false, false, false, false]);
    expect(create.tags.anyOf).toContainEqual({ type: "array", maxItems: 20, items: { type: "string", maxLength: 40 } });
    expect(create.url).toMatchObject({ type: "string", format: "uri", maxLength: 2048 });
    expect(byName("update_link").inputSchema.properties.targetUrl).toMatchObject({ format: "uri" });
    for (const field of ["webhookUrl", "ogImageUrl", "expiredUrl"]) expect(create[field].anyOf[0]).toMatchObject({ format: "uri" });
    expect(create.rules.anyOf[0].items.properties.url).toMatchObject({ format: "uri" });
    for (const field of ["expiresAt", "startsAt"]) expect(create[field].anyOf).toContainEqual({ type: "string", format: "date-time", maxLength: 64 });
    const link = byName("get_link").outputSchema!.properties;
    expect([link.createdAt, link.expiresAt, link.shortUrl]).toEqual([
      { type: "string", format: "date-time" }, { type: ["string", "null"], format: "date-time" }, { type: "string", format: "uri" },
    ]);
  });

  test("every enumeration is one of shared/enums.ts (or the analytics' own lists), never a hand-written copy", () => {
    const declared: (readonly unknown[])[] = [LINK_STATUSES, LINK_STATES, RULE_KINDS, DEVICE_MATCHES, INTERVALS, BOT_MODES, STATS_GROUPINGS];
    const create = byName("create_link").inputSchema.properties;
    expect([create.status.enum, create.rules.anyOf[0].items.properties.kind.enum]).toEqual([[...LINK_STATUSES], [...RULE_KINDS]]);
    const list = byName("list_links").inputSchema.properties;
    expect([list.status.enum, list.state.enum]).toEqual([[...LINK_STATUSES], [...LINK_STATES]]);
    const shownRules = byName("get_link").outputSchema!.properties.rules.items.anyOf;
    expect(shownRules.map((r: Schema) => r.properties.match.enum ?? r.properties.match.pattern)).toEqual(["^[A-Z]{2}$", [...DEVICE_MATCHES]]);
    const seen = new Set<string>();
    for (const t of tools) {
      for (const [path, s] of [...subschemas(t.inputSchema), ...subschemas(t.outputSchema)]) {
        if (!Array.isArray(s.enum)) continue;
        const values = s.enum.filter((v: unknown) => v !== "" && v !== null);
        // An enumeration sharing a value with a declared one is a declared list, whole and in order.
        const sharing = declared.filter((d) => values.some((v: unknown) => d.includes(v))).map((d) => JSON.stringify(d));
        if (sharing.length === 0) continue;
        expect([t.name, path, sharing.includes(JSON.stringify(values))]).toEqual([t.name, path, true]);
        seen.add(JSON.stringify(values));
      }
    }
    expect(seen.size).toBe(declared.length);
  });
});

/** One client, either SDK: what the test needs of it. */
interface AnyClient {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  listTools(): Promise<unknown>;
  close(): Promise<void>;
}

async function clients(): Promise<[string, AnyClient][]> {
  const options = { requestInit: { headers: { Authorization: `Bearer ${key}` } }, fetch: (url: string | URL, init?: RequestInit) => cp.handle(new Request(url, init)) };
  const v1 = new ClientV1({ name: "schemas-v1", version: "1.0.0" });
  await v1.connect(new TransportV1(new URL(`${BASE_URL}/mcp`), options));
  const v2 = new Client({ name: "schemas-v2", version: "1.0.0" });
  await v2.connect(new StreamableHTTPClientTransport(new URL(`${BASE_URL}/mcp`), options));
  return [["1.x", v1 as AnyClient], ["2.x", v2 as AnyClient]];
}

describe("every tool, called by the SDK clients that check structuredContent against the output schema", () => {
  test("1.x and 2.x: each of the ten tools, with the link's dates, rules, variants and the analytics' breakdowns", async () => {
    for (const [version, client] of await clients()) {
      try {
        // A client checks structuredContent only against the output schemas it has listed.
        await client.listTools();
        const called = new Set<string>();
        const ok = async (name: string, args: Record<string, unknown>) => {
          called.add(name);
          const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: any; content: { text: string }[] };
          if (r.isError) throw new Error(`${version} ${name}: ${r.content[0].text}`);
          return r.structuredContent;
        };
        const slug = `schemas-${version.replace(".", "")}`;
        const link = await ok("create_link", {
          url: "https://example.com/a?b=[1]", slug, tags: "launch, q4", expiresAt: "2031-01-01", startsAt: "2030-01-01T10:00:00+02:00",
          maxHits: 500, folder: "Campaigns", rules: [{ kind: "country", match: "de", url: "https://example.de/" }, { kind: "device", match: "IOS", url: "https://apps.example.com/" }],
          abUrls: [{ url: "https://b.example.com/", weight: 1.5 }], serveOg: "on", ogTitle: "Hi", externalId: `crm-${version}`,
        });
        expect([link.rules, link.expiresAt, link.state]).toEqual([
          [{ kind: "country", match: "DE", url: "https://example.de/" }, { kind: "device", match: "ios", url: "https://apps.example.com/" }],
          "2031-01-01T00:00:00.000Z", "live",
        ]);
        expect((await ok("get_link", { slug: `ext_crm-${version}` })).slug).toBe(slug);
        expect((await ok("list_links", { tag: "launch", state: "live" })).links.map((l: any) => l.slug)).toContain(slug);
        expect((await ok("update_link", { slug, targetUrl: "https://example.org/", status: "paused" })).state).toBe("paused");
        expect((await ok("update_link", { slug: [slug, "schemas-no-such"], folder: null })).updated).toBe(1);
        expect((await ok("set_targeting_rules", { slug, rules: [{ kind: "device", match: "android", url: "https://play.example.com/" }] })).rules).toHaveLength(1);
        expect((await ok("set_ab_test", { slug, abUrls: null })).abUrls).toEqual([]);
        expect((await ok("set_link_preview", { slug, serveOg: false, ogImageUrl: "https://cdn.example.com/i.png" })).ogImageUrl).toBe("https://cdn.example.com/i.png");
        expect((await ok("get_link_stats", { slug })).last24h).toHaveLength(24);
        expect((await ok("get_link_stats", { slug, from: "2030-01-08", groupBy: "country" })).breakdowns).toHaveProperty("country");
        expect((await ok("get_link_stats", { groupBy: "tag", interval: "day" })).totals).toEqual({ clicks: 0, visitors: 0 });
        const bulk = await ok("bulk_create_links", { links: [{ url: "https://example.com/1" }, { url: "ftp://x" }] });
        expect([bulk.created, bulk.failed]).toEqual([1, 1]);
        expect(await ok("delete_link", { slug })).toEqual({ deleted: true, slug });
        expect(called.size).toBe(10);
      } finally {
        await client.close();
      }
    }
  });

  test("the clients' own validators compile every output schema and refuse what breaks it, through $ref too", async () => {
    const link = await jsonOf(await cp.request("POST", "/api/v1/links", {
      key, json: { url: "https://example.com/v", slug: "schemas-validate", rules: [{ kind: "device", match: "mobile", url: "https://m.example.com/" }] },
    }));
    const stats = await jsonOf(await cp.request("GET", "/api/v1/links/schemas-validate/stats?groupBy=device", { key }));
    const broken = [
      { ...link, state: "gone" }, { ...link, createdAt: "yesterday" }, { ...link, rules: [{ kind: "device", match: "fridge", url: "https://m.example.com/" }] },
      { ...link, rules: [{ kind: "country", match: "de", url: "https://e.de/" }] }, { ...link, hits: -1 }, { ...link, shortUrl: "not a uri" },
    ];
    const brokenStats = { ...stats, breakdowns: { device: { rows: [{ value: "mobile", clicks: "many", visitors: 0 }], other: { clicks: 0, visitors: 0 } } } };
    for (const validator of [new AjvValidatorV1(), new AjvJsonSchemaValidator()]) {
      const check = (name: string) => validator.getValidator(byName(name).outputSchema as never);
      for (const t of tools) expect(() => check(t.name)).not.toThrow();
      expect(check("get_link")(link).valid).toBe(true);
      expect(broken.map((b) => check("set_ab_test")(b).valid)).toEqual(broken.map(() => false));
      expect(check("list_links")({ links: [link], nextCursor: null }).valid).toBe(true);
      expect(check("list_links")({ links: [broken[0]], nextCursor: null }).valid).toBe(false);
      expect([check("get_link_stats")(stats).valid, check("get_link_stats")(brokenStats).valid]).toEqual([true, false]);
    }
  });
});

describe("validation words", () => {
  test("REST and MCP give the same problem, every invalid field in it, the slug next to the others", async () => {
    const body = { url: "javascript:alert(1)", slug: "no spaces", maxHits: 0, tags: Array(21).fill("t") };
    const rest = await jsonOf(await cp.request("POST", "/api/v1/links", { key, json: body }));
    const call = await post({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "create_link", arguments: body } });
    const mcp = JSON.parse((await call.json()).result.content[0].text);
    expect(mcp).toEqual(rest);
    expect(rest.errors).toEqual([
      { path: "/maxHits", message: "must be at least 1" },
      { path: "/tags", message: "must have at most 20 items" },
      { path: "/slug", message: MESSAGES.slug },
      { path: "/url", message: "must use http or https" },
    ]);
    expect(rest.detail).toBe(`maxHits must be at least 1; tags must have at most 20 items; slug ${MESSAGES.slug}; url must use http or https`);
    // A reserved slug alone keeps its own code; beside another invalid field it is one of the fields.
    const reserved = await jsonOf(await cp.request("POST", "/api/v1/links", { key, json: { url: "https://example.com", slug: "Dashboard" } }));
    expect([reserved.code, reserved.errors]).toEqual(["slug_reserved", [{ path: "/slug", message: MESSAGES.reserved }]]);
    const both = await jsonOf(await cp.request("POST", "/api/v1/links", { key, json: { url: "nope", slug: "dashboard" } }));
    expect([both.code, both.errors.map((e: { path: string }) => e.path)]).toEqual(["invalid_input", ["/slug", "/url"]]);
  });

  test("update_link and PATCH given url say to use targetUrl", async () => {
    await cp.request("POST", "/api/v1/links", { key, json: { url: "https://example.com/u", slug: "schemas-patch" } });
    const expected = [{ path: "/url", message: "unknown field: to change the destination use targetUrl" }];
    const rest = await jsonOf(await cp.request("PATCH", "/api/v1/links/schemas-patch", { key, json: { url: "https://example.org/" } }));
    const call = await post({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "update_link", arguments: { slug: "schemas-patch", url: "https://example.org/" } } });
    const mcp = JSON.parse((await call.json()).result.content[0].text);
    expect([rest.errors, mcp.errors]).toEqual([expected, expected]);
    // Where there is no targetUrl to point to, an unknown url is just that.
    const preview = await post({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "set_link_preview", arguments: { slug: "schemas-patch", url: "https://example.org/" } } });
    expect(JSON.parse((await preview.json()).result.content[0].text).errors).toEqual([{ path: "/url", message: "unknown field" }]);
  });
});

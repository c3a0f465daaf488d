/**
 * The MCP update_link tool's bulk form (issue #25): `slug` as a list makes the same changes to each link, as
 * PATCH /api/v1/links/bulk does, each link reported; still ten tools, and one slug still answers the link.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { BASE_URL, jsonOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

type ToolResult = { isError?: boolean; structuredContent?: any; content: { type: string; text?: string }[] };

let cp: InProcessControlPlane;
let keyA: string;
let keyB: string;
let client: Client;

const call = async (args: Record<string, unknown>) => (await client.callTool({ name: "update_link", arguments: args })) as ToolResult;
const rest = (slug: string, key = keyA) => cp.request("GET", `/api/v1/links/${slug}`, { key }).then(jsonOf);

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  keyA = (await cp.createKey("mcp-a@example.com")).key;
  keyB = (await cp.createKey("mcp-b@example.com")).key;
  for (const slug of ["mcp-1", "mcp-2", "mcp-3"]) expect((await cp.request("POST", "/api/v1/links", { key: keyA, json: { url: `https://example.com/${slug}`, slug } })).status).toBe(201);
  expect((await cp.request("POST", "/api/v1/links", { key: keyB, json: { url: "https://example.com/b", slug: "mcp-bob" } })).status).toBe(201);
  client = new Client({ name: "clink-in-process", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${BASE_URL}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${keyA}` } },
    fetch: (url, init) => cp.handle(new Request(url, init)),
  }));
});
afterAll(async () => {
  await client?.close();
  await cp?.close();
});

test("still ten tools; update_link's slug takes one slug or a list of up to 500", async () => {
  const { tools } = await client.listTools();
  expect(tools).toHaveLength(10);
  const update = tools.find((t) => t.name === "update_link")!;
  expect(update.inputSchema.required).toEqual(["slug"]);
  const slug = (update.inputSchema.properties as any).slug;
  expect(slug.anyOf.map((s: any) => s.type)).toEqual(["string", "array"]);
  expect(slug.anyOf[1].maxItems).toBe(500);
  expect(update.outputSchema?.type).toBe("object");
});

test("a list of slugs: the same changes to each, each link reported, another account's link not_found and untouched", async () => {
  const r = await call({ slug: ["mcp-1", "mcp-2", "mcp-bob"], status: "paused", tags: ["summer"] });
  expect(r.isError).toBeUndefined();
  expect(r.structuredContent.results.map((x: any) => [x.slug, x.status, x.error?.code])).toEqual([
    ["mcp-1", "updated", undefined], ["mcp-2", "updated", undefined], ["mcp-bob", "failed", "not_found"],
  ]);
  expect([r.structuredContent.updated, r.structuredContent.failed, r.structuredContent.nextCursor]).toEqual([2, 1, null]);
  expect(await rest("mcp-2")).toMatchObject({ status: "paused", tags: ["summer"] });
  expect(await rest("mcp-3")).toMatchObject({ status: "active", tags: [] });
  expect(await rest("mcp-bob", keyB)).toMatchObject({ status: "active", tags: [] });
});

test("one slug still answers the updated link; bad changes or too many slugs are invalid_input", async () => {
  const one = await call({ slug: "mcp-3", folder: "single" });
  expect(one.structuredContent).toMatchObject({ slug: "mcp-3", folder: "single" });
  for (const [args, path] of [
    [{ slug: ["mcp-1"], targetUrl: "notaurl" }, "/changes/targetUrl"],
    [{ slug: ["mcp-1"] }, "/changes"],
    [{ slug: Array.from({ length: 501 }, (_, i) => `s-${i}`), status: "paused" }, "/slug"],
    [{ slug: [], status: "paused" }, "/slug"],
  ] as const) {
    const r = await call(args);
    expect(r.isError).toBe(true);
    const problem = JSON.parse(r.content[0].text!);
    expect(problem.code).toBe("invalid_input");
    expect(problem.errors.map((e: any) => e.path)).toEqual([path]);
  }
  expect(await rest("mcp-1")).toMatchObject({ target: "https://example.com/mcp-1" });
});

/**
 * Scoped API keys on MCP (issue #23): tools/list shows every tool to any key; a tools/call outside the key's scopes
 * is an HTTP 403 insufficient_scope whose challenge names the scope (so a client can step up), for every tool and
 * every scope it lacks, and inside a JSON-RPC batch too; a key holding the tool's scope is served.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { LINK_TOOLS } from "../../control/mcp/tools.ts";
import { SCOPES, type Scope } from "../../shared/enums.ts";
import { jsonOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import { REPO_ROOT } from "../helpers/server.ts";
import { expectInsufficientScope, fixturesFor, keyWith, type Fixtures } from "./scoped-routes.ts";

/** The scope each tool needs, as docs/mcp.md lists it; a tool added without an entry fails the first test. */
const TOOL_SCOPES: Record<string, Scope> = {
  create_link: "links:write",
  bulk_create_links: "links:write",
  list_links: "links:read",
  get_link: "links:read",
  update_link: "links:write",
  delete_link: "links:write",
  get_link_stats: "stats:read",
  set_targeting_rules: "links:write",
  set_ab_test: "links:write",
  set_link_preview: "links:write",
};

/** Arguments each tool is served with (a fresh link where it needs one). */
const ARGS: Record<string, (fx: Fixtures) => Promise<Record<string, unknown>>> = {
  create_link: async () => ({ url: "https://example.com/mcp" }),
  bulk_create_links: async () => ({ links: [{ url: "https://example.com/mcp-bulk" }] }),
  list_links: async () => ({}),
  get_link: async (fx) => ({ slug: await fx.link() }),
  update_link: async (fx) => ({ slug: await fx.link(), folder: "mcp" }),
  delete_link: async (fx) => ({ slug: await fx.link() }),
  get_link_stats: async (fx) => ({ slug: await fx.link() }),
  set_targeting_rules: async (fx) => ({ slug: await fx.link(), rules: [] }),
  set_ab_test: async (fx) => ({ slug: await fx.link(), abUrls: [] }),
  set_link_preview: async (fx) => ({ slug: await fx.link(), serveOg: false }),
};

let cp: InProcessControlPlane;
let fx: Fixtures;
let fullKey: string;
const keys = {} as Record<Scope, string>;

const call = (id: number, name: string, args: Record<string, unknown>) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
const rpc = (key: string, body: unknown) =>
  cp.request("POST", "/mcp", { key, json: body, headers: { accept: "application/json, text/event-stream" } });

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  const made = await cp.createKey("mcp-scopes@example.com", "everything");
  fullKey = made.key;
  fx = fixturesFor(cp, fullKey);
  for (const s of SCOPES) keys[s] = await keyWith(cp, made.account.id, [s]);
});
afterAll(() => cp?.close());

test("each tool needs the scope the table gives it", () => {
  expect(Object.fromEntries(LINK_TOOLS.map((t) => [t.name, t.scope]))).toEqual(TOOL_SCOPES);
});

test("docs/mcp.md's scope table is this one", () => {
  const doc = readFileSync(join(REPO_ROOT, "docs/mcp.md"), "utf8");
  expect(Object.fromEntries([...doc.matchAll(/^\| `(\w+)` \| `([a-z]+:[a-z]+)` \|$/gm)].map((m) => [m[1], m[2]]))).toEqual(TOOL_SCOPES);
});

test("tools/list lists all ten tools to a key that may only read links", async () => {
  const res = await rpc(keys["links:read"], { jsonrpc: "2.0", id: 1, method: "tools/list" });
  expect(res.status).toBe(200);
  const names = (await jsonOf(res)).result.tools.map((t: { name: string }) => t.name);
  expect(names.sort()).toEqual(Object.keys(TOOL_SCOPES).sort());
  expect(names).toHaveLength(10);
});

describe("each tool needs its scope", () => {
  for (const [name, scope] of Object.entries(TOOL_SCOPES)) {
    test(`${name}: ${scope}`, async () => {
      const args = await ARGS[name](fx);
      for (const other of SCOPES.filter((s) => s !== scope)) await expectInsufficientScope(await rpc(keys[other], call(1, name, args)), scope, "mcp");
      const res = await rpc(keys[scope], call(2, name, args));
      expect(res.status).toBe(200);
      const { result } = await jsonOf(res);
      expect(result.isError ? result.content[0].text : "served").toBe("served");
    });
  }
});

test("a JSON-RPC batch with one call outside the key's scopes is refused as a whole, naming that scope", async () => {
  const slug = `batch-${crypto.randomUUID().slice(0, 8)}`;
  const res = await rpc(keys["links:read"], [call(1, "list_links", {}), call(2, "create_link", { url: "https://example.com/batch", slug })]);
  await expectInsufficientScope(res, "links:write", "mcp");
  expect((await cp.request("GET", `/api/v1/links/${slug}`, { key: fullKey })).status).toBe(404);
});

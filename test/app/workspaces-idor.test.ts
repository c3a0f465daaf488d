/**
 * One workspace's data is never visible in another's answers (issue #24): every id and slug of workspace A asked
 * through workspace B's key, over every REST route with a path parameter and every MCP tool taking a slug, answers
 * not found and leaves A's data as it was; B's lists hold nothing of A's; and one person in two workspaces, with a
 * key in each, sees each workspace's data through its key only.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApiKey } from "../../control/keys/service.ts";
import { LINK_TOOLS } from "../../control/mcp/tools.ts";
import { jsonOf, problemOf, rejectionOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import { fixturesFor, requestOf, SCOPED_ROUTES, type Fixtures } from "./scoped-routes.ts";
import { MCP_ARGS, mcpCall, team, type Team } from "./workspaces-helpers.ts";

let cp: InProcessControlPlane;
let a: Team;
let b: Team;
let keyA: string;
let keyB: string;
let fxA: Fixtures;
/** Every id and slug A's fixtures made (filled as the tests make them). */
const madeInA = new Set<string>();

beforeAll(async () => {
  cp = await startControlPlane({ env: { WEBHOOK_ALLOW_PRIVATE: "true", RATE_LIMIT_PER_MINUTE: "100000" } });
  a = await team(cp, "idor-a@example.com", "Workspace A secret name");
  b = await team(cp, "idor-b@example.com", "Workspace B");
  keyA = await a.keyOf(a.owner);
  keyB = await b.keyOf(b.owner);
  const fx = fixturesFor(cp, keyA);
  const noted = <T>(v: T) => {
    for (const x of typeof v === "object" && v !== null ? Object.values(v) : [v]) madeInA.add(String(x));
    return v;
  };
  fxA = {
    link: async () => noted(await fx.link()), domain: async () => noted(await fx.domain()), webhook: async () => noted(await fx.webhook()),
    delivery: async () => noted(await fx.delivery()), importJob: async () => noted(await fx.importJob()), member: async () => noted(await fx.member()),
    invitation: async () => noted(await fx.invitation()),
  };
});
afterAll(() => cp?.close());

const withParams = SCOPED_ROUTES.filter((r) => r.route.includes("/:"));

describe("A's ids and slugs asked with B's key: not found, and A's data unchanged", () => {
  for (const r of withParams) {
    test(r.route, async () => {
      const call = await r.call(fxA);
      const res = await requestOf(cp, r, call, keyB);
      const problem = await problemOf(res, 404, "not_found");
      expect(JSON.stringify(problem)).not.toContain("Workspace A");
      expect(JSON.stringify(problem)).not.toContain("example.com/fixture");
      // The same call with A's own key is still served: nothing was deleted, changed or used up.
      const own = await requestOf(cp, r, call, keyA);
      expect([own.status, own.status < 300 ? "" : await own.text()]).toEqual([r.ok, ""]);
    });
  }
});

test("B's lists and exports hold nothing of A's", async () => {
  for (let i = 0; i < 3; i++) await fxA.link();
  await fxA.domain();
  await fxA.webhook();
  await fxA.importJob();
  await fxA.member();
  await fxA.invitation();
  const lists = SCOPED_ROUTES.filter((r) => r.route.startsWith("GET ") && !r.route.includes("/:"));
  expect(lists.length).toBeGreaterThan(8);
  for (const r of lists) {
    const res = await requestOf(cp, r, await r.call(fxA), keyB);
    const text = await res.text();
    expect([r.route, res.status]).toEqual([r.route, r.ok]);
    for (const id of madeInA) expect([r.route, text.includes(id)]).toEqual([r.route, false]);
    expect(text).not.toContain("Workspace A secret name");
  }
});

test("bulk changes and deletes by A's slugs through B's key change nothing of A's", async () => {
  const slugs = [await fxA.link(), await fxA.link()];
  await cp.request("PATCH", "/api/v1/links/bulk", { key: keyB, json: { slugs, changes: { folder: "stolen" } } });
  await cp.request("POST", "/api/v1/links/bulk-delete", { key: keyB, json: { slugs } });
  for (const slug of slugs) expect((await jsonOf(await cp.request("GET", `/api/v1/links/${slug}`, { key: keyA }))).folder).toBeNull();
});

describe("MCP: A's slugs through B's key are not found", () => {
  for (const tool of LINK_TOOLS.filter((t) => MCP_ARGS[t.name]!("probe").slug === "probe")) {
    test(tool.name, async () => {
      const slug = await fxA.link();
      const res = await mcpCall(cp, keyB, tool.name, MCP_ARGS[tool.name]!(slug));
      const text = JSON.stringify(await jsonOf(res));
      expect([res.status, text.includes('"isError":true'), /not.found|no link/i.test(text)]).toEqual([200, true, true]);
      expect(text).not.toContain("example.com/fixture");
      const own = await jsonOf(await cp.request("GET", `/api/v1/links/${slug}`, { key: keyA }));
      expect([own.slug, own.folder, own.serveOg]).toEqual([slug, null, false]);
    });
  }
});

test("one person in two workspaces sees each workspace's data through its key only", async () => {
  const person = await cp.account("idor-both@example.com");
  expect((await rejectionOf(a.keyOf(person))).code).toBe("not_found"); // not a member of A yet: no key of A
  await a.join(person.email, "member");
  const inA = await a.keyOf(person);
  const inPersonal = (await createApiKey(cp.deps, person.id, "personal")).key;
  const make = async (key: string, slug: string) => expect((await cp.request("POST", "/api/v1/links", { key, json: { url: "https://example.com/both", slug } })).status).toBe(201);
  await make(inA, "both-in-a");
  await make(inPersonal, "both-in-personal");
  const slugsOf = async (key: string) => (await jsonOf(await cp.request("GET", "/api/v1/links?limit=500", { key }))).links.map((l: { slug: string }) => l.slug);
  expect(await slugsOf(inPersonal)).toEqual(["both-in-personal"]);
  expect(await slugsOf(inA)).toContain("both-in-a");
  expect(await slugsOf(inA)).not.toContain("both-in-personal");
  await problemOf(await cp.request("GET", "/api/v1/links/both-in-a", { key: inPersonal }), 404, "not_found");
  await problemOf(await cp.request("GET", "/api/v1/links/both-in-personal", { key: inA }), 404, "not_found");
  expect((await jsonOf(await cp.request("GET", "/api/v1/workspace", { key: inA }))).id).toBe(a.workspaceId);
  expect((await jsonOf(await cp.request("GET", "/api/v1/workspace", { key: inPersonal }))).id).toBe(person.id);
});

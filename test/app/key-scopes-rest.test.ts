/**
 * Scoped API keys on the REST API (issue #23): every route of the API is in one table with the scope it needs
 * (scoped-routes.ts), and the table is the app's own list of routes, so a new route without an entry fails here.
 * For each route, a key holding each other scope alone is refused with 403 insufficient_scope and a challenge
 * naming the scope, and a key holding its scope alone is served. docs/api.md's scope table says the same.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SCOPES, type Scope } from "../../shared/enums.ts";
import { startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import { REPO_ROOT } from "../helpers/server.ts";
import { appApiRoutes, expectInsufficientScope, fixturesFor, keyWith, OPEN_ROUTES, requestOf, SCOPED_ROUTES, type Fixtures } from "./scoped-routes.ts";

let cp: InProcessControlPlane;
let fx: Fixtures;
const keys = {} as Record<Scope, string>;

beforeAll(async () => {
  cp = await startControlPlane({ env: { WEBHOOK_ALLOW_PRIVATE: "true", RATE_LIMIT_PER_MINUTE: "100000" } });
  const { key, account } = await cp.createKey("scopes@example.com", "everything");
  fx = fixturesFor(cp, key);
  for (const s of SCOPES) keys[s] = await keyWith(cp, account.id, [s]);
});
afterAll(() => cp?.close());

test("the table holds every route of the API once; only the OpenAPI document and its page need no key", async () => {
  const routes = SCOPED_ROUTES.map((r) => r.route);
  expect(new Set(routes).size).toBe(routes.length);
  expect((await appApiRoutes()).sort()).toEqual([...routes, ...OPEN_ROUTES].sort());
});

describe("each route needs its scope", () => {
  for (const r of SCOPED_ROUTES) {
    test(`${r.route}: ${r.scope}`, async () => {
      const call = await r.call(fx);
      for (const other of SCOPES.filter((s) => s !== r.scope)) await expectInsufficientScope(await requestOf(cp, r, call, keys[other]), r.scope, "api");
      // The refusals changed nothing: the same call (a delete included) is then served to a key with the scope.
      const res = await requestOf(cp, r, call, keys[r.scope]);
      expect([res.status, res.status < 300 || res.status === r.ok ? "" : await res.text()]).toEqual([r.ok, ""]);
    });
  }
});

test("docs/api.md's scope table puts every route in the row of its scope, and nowhere else", () => {
  const doc = readFileSync(join(REPO_ROOT, "docs/api.md"), "utf8");
  const rows = new Map([...doc.matchAll(/^\| `([a-z]+:[a-z]+)` \| [^|]+ \| (.+) \|$/gm)].map((m) => [m[1], m[2]]));
  expect([...rows.keys()]).toEqual([...SCOPES]);
  for (const r of SCOPED_ROUTES) {
    const written = `\`${r.route.replace(/:(\w+)/g, "{$1}")}\``;
    expect(SCOPES.filter((s) => rows.get(s)!.split(", ").includes(written))).toEqual([r.scope]);
  }
  expect([...rows.values()].flatMap((v) => v.split(", "))).toHaveLength(SCOPED_ROUTES.length);
});

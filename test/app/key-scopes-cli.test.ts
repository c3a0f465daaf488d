/**
 * `npm run create-key` with scopes (issue #23), spawned as a process on a fresh data directory: --scope repeated or
 * as a comma list gives the key those scopes only, no --scope every scope, an unknown scope exits 2 naming the ones
 * there are without making a key. The keys are then used on a control plane in process over the same SQLite file.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { SCOPES } from "../../shared/enums.ts";
import { sha256Hex } from "../../shared/ids.ts";
import { startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import { runToExit } from "../helpers/run-to-exit.ts";
import { makeTempDir, REPO_ROOT } from "../helpers/server.ts";
import { expectInsufficientScope } from "./scoped-routes.ts";

const CLI = join(REPO_ROOT, "control/keys/create-key-cli.ts");
const dataDir = makeTempDir("create-key-scopes");
const createKey = (...args: string[]) => runToExit([CLI, "--email", "cli-scopes@example.com", "--create-data-dir", ...args], { env: { DATA_DIR: dataDir } });
const keyOf = (stdout: string) => stdout.trim().split("\n").pop()!;

const made: Record<string, string> = {};
let cp: InProcessControlPlane;

beforeAll(async () => {
  // One process after the other: the first creates the database the next ones use.
  for (const [name, args] of [["repeated", ["--scope", "links:read", "--scope", "stats:read"]], ["comma", ["--scope", "links:read, webhooks:manage"]], ["all", []]] as const) {
    const r = await createKey("--name", name, ...args);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    made[name] = keyOf(r.stdout);
  }
  cp = await startControlPlane({ store: new SqliteStore(join(dataDir, "clink.sqlite")) });
});
afterAll(async () => {
  await cp?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const scopesOf = async (key: string) => (await cp.deps.store.findApiKeyByHash(sha256Hex(key)))?.scopes;

describe("create-key --scope", () => {
  test("--scope repeated: the key may read links and stats, and nothing else", async () => {
    const key = made.repeated;
    expect(await scopesOf(key)).toEqual(["links:read", "stats:read"]);
    expect((await cp.request("GET", "/api/v1/links", { key })).status).toBe(200);
    expect((await cp.request("GET", "/api/v1/stats", { key })).status).toBe(200);
    await expectInsufficientScope(await cp.request("POST", "/api/v1/links", { key, json: { url: "https://example.com" } }), "links:write", "api");
  });

  test("--scope as a comma list", async () => {
    expect(await scopesOf(made.comma)).toEqual(["links:read", "webhooks:manage"]);
    await expectInsufficientScope(await cp.request("GET", "/api/v1/stats", { key: made.comma }), "stats:read", "api");
  });

  test("without --scope, every scope", async () => {
    expect(await scopesOf(made.all)).toEqual([...SCOPES]);
    expect((await cp.request("POST", "/api/v1/links", { key: made.all, json: { url: "https://example.com" } })).status).toBe(201);
  });

  test("an unknown scope exits 2 naming the scopes there are, and makes no key", async () => {
    const before = (await cp.deps.store.listApiKeys((await cp.account("cli-scopes@example.com")).id)).length;
    const r = await createKey("--scope", "links:read,admin");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`/scopes/1 "admin" is not a scope: use links:read, links:write, stats:read or webhooks:manage`);
    expect(r.stdout).not.toContain("ck_");
    expect((await cp.deps.store.listApiKeys((await cp.account("cli-scopes@example.com")).id)).length).toBe(before);
  });

  test("--help names --scope and every scope", async () => {
    const r = await runToExit([CLI, "--help"]);
    expect(r.stdout).toContain("--scope SCOPE");
    expect(r.stdout).toContain("links:read, links:write, stats:read or webhooks:manage");
  });
});

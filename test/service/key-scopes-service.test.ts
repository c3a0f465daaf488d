/**
 * createApiKey's scopes (issue #23), called directly: none named gives every scope; named ones are kept in the
 * vocabulary's order without repeats; an empty list, a list of something else, or an unknown name is refused at
 * /scopes or /scopes/{i}, naming the scopes there are, alongside a bad name's own error; the authenticated caller
 * holds exactly the key's scopes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApiKey } from "../../control/keys/service.ts";
import { SCOPES } from "../../shared/enums.ts";
import { rejectionOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

let cp: InProcessControlPlane;
let accountId: string;

beforeAll(async () => {
  cp = await startControlPlane();
  accountId = (await cp.account("key-scopes@example.com")).id;
});
afterAll(() => cp?.close());

const VALID = "links:read, links:write, stats:read or webhooks:manage";

describe("createApiKey's scopes", () => {
  test("none named: every scope; named: in the vocabulary's order, each once; the caller holds exactly those", async () => {
    expect((await createApiKey(cp.deps, accountId, "all")).view.scopes).toEqual([...SCOPES]);
    const { key, view } = await createApiKey(cp.deps, accountId, "some", ["stats:read", "links:read", "stats:read"]);
    expect(view.scopes).toEqual(["links:read", "stats:read"]);
    expect((await cp.auth.authenticate(`Bearer ${key}`)).scopes).toEqual(["links:read", "stats:read"]);
  });

  test("an empty list or anything but a list is refused at /scopes", async () => {
    for (const scopes of [[], "links:read", null, { 0: "links:read" }]) {
      expect(await rejectionOf(createApiKey(cp.deps, accountId, "k", scopes))).toMatchObject({
        code: "invalid_input", errors: [{ path: "/scopes", message: `must list one or more of ${VALID}` }],
      });
    }
  });

  test("unknown names are refused each at its index, with a bad name's error in the same answer; no key is made", async () => {
    const before = (await cp.deps.store.listApiKeys(accountId)).length;
    expect(await rejectionOf(createApiKey(cp.deps, accountId, "", ["links:read", "admin", 7]))).toMatchObject({
      code: "invalid_input",
      errors: [
        { path: "/name", message: "must be 1-80 characters" },
        { path: "/scopes/1", message: `"admin" is not a scope: use ${VALID}` },
        { path: "/scopes/2", message: `7 is not a scope: use ${VALID}` },
      ],
    });
    expect((await cp.deps.store.listApiKeys(accountId)).length).toBe(before);
  });
});

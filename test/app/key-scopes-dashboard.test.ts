/**
 * Scoped keys in the dashboard (issue #23): the key form has a box per scope, labelled with what it allows and all
 * ticked at first; the key made has the ticked scopes only (refused elsewhere with 403 insufficient_scope), the list
 * shows each key's scopes, and a form with no box ticked or a scope that does not exist is refused, keeping what was
 * typed and ticked.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SCOPE_DESCRIPTIONS, SCOPES } from "../../shared/enums.ts";
import { esc } from "../../control/dashboard/layout.ts";
import { formFieldsOf, Visitor, signedInVisitor } from "../helpers/dashboard-visitor.ts";
import { BASE_URL, passwordOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import { expectInsufficientScope } from "./scoped-routes.ts";

let cp: InProcessControlPlane;

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
});
afterAll(() => cp?.close());

const signedIn = (email: string): Promise<Visitor> => signedInVisitor(cp, BASE_URL, email, passwordOf(email));

const shownKey = (html: string) => /id="new-key"[^>]*value="(ck_[A-Za-z0-9]+)"/.exec(html)?.[1] ?? null;
const tickedBoxes = (html: string) => formFieldsOf(html).scope ?? [];
/** The key list's row of the key named `name`. */
const rowOf = (html: string, name: string) => html.split("<tr>").find((r) => r.includes(`<td data-label="Name">${name}</td>`)) ?? "";

describe("the keys page", () => {
  test("offers a box per scope, labelled with what it allows, every one ticked", async () => {
    const v = await signedIn("boxes@example.com");
    const page = await v.get("/dashboard/keys");
    expect(tickedBoxes(page.html)).toEqual([...SCOPES]);
    for (const s of SCOPES) expect(page.html).toContain(`<code>${s}</code>: ${esc(SCOPE_DESCRIPTIONS[s])}</span></label>`);
  });

  test("a key made with two boxes ticked may do those two things only, and the list says so", async () => {
    const v = await signedIn("reader@example.com");
    const fields = { ...formFieldsOf((await v.get("/dashboard/keys")).html), name: ["reporting"], scope: ["links:read", "stats:read"] };
    const posted = await v.post("/dashboard/keys", fields);
    expect([posted.status, posted.headers.get("location")]).toEqual([303, "/dashboard/keys"]);
    const page = await v.get("/dashboard/keys");
    const key = shownKey(page.html)!;
    expect(page.html).toContain("It may: <code>links:read</code> <code>stats:read</code>.</p>");
    expect(rowOf(page.html, "reporting")).toContain(`<td data-label="Scopes"><code>links:read</code> <code>stats:read</code></td>`);
    expect((await cp.request("GET", "/api/v1/links", { key })).status).toBe(200);
    expect((await cp.request("GET", "/api/v1/stats", { key })).status).toBe(200);
    await expectInsufficientScope(await cp.request("POST", "/api/v1/links", { key, json: { url: "https://example.com" } }), "links:write", "api");
    await expectInsufficientScope(await cp.request("GET", "/api/v1/webhooks", { key }), "webhooks:manage", "api");
  });

  test("every box unticked is refused: the summary says what to do, the name is kept, no key is made", async () => {
    const v = await signedIn("nothing@example.com");
    const { scope: _, ...fields } = formFieldsOf((await v.get("/dashboard/keys")).html);
    const refused = await v.post("/dashboard/keys", { ...fields, name: ["empty"] });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain(`<a href="#key-scope-links-read">What it may do: must list one or more of links:read, links:write, stats:read or webhooks:manage</a>`);
    expect(refused.html).toContain('aria-invalid="true" aria-describedby="key-scope-links-read-error"');
    expect(refused.html).toContain('value="empty"');
    expect(tickedBoxes(refused.html)).toEqual([]);
    expect(await cp.deps.store.listApiKeys((await cp.account("nothing@example.com")).id)).toEqual([]);
  });

  test("a scope no box offers (a forged form) is refused naming the scopes there are", async () => {
    const v = await signedIn("forged@example.com");
    const fields = formFieldsOf((await v.get("/dashboard/keys")).html);
    const refused = await v.post("/dashboard/keys", { ...fields, name: ["forged"], scope: ["links:read", "admin"] });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain(esc(`What it may do: "admin" is not a scope: use links:read, links:write, stats:read or webhooks:manage`));
    expect(tickedBoxes(refused.html)).toEqual(["links:read"]);
    expect(await cp.deps.store.listApiKeys((await cp.account("forged@example.com")).id)).toEqual([]);
  });
});

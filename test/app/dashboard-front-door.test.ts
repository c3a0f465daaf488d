/**
 * The dashboard without traps, in process: every form posts and redirects (a reload repeats nothing; a new API
 * key is shown once after the redirect and never travels in a URL), tag and folder filters ignore case and
 * suggest the account's own values, a failed form links its summary to each invalid field (aria-invalid,
 * aria-describedby), and people read plain words instead of schema messages. The browser half (focus, axe,
 * screenshots) is test/browser/front-door.browser.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { NEW_KEY_COOKIE, NEW_KEY_LIFETIME_MS } from "../../control/dashboard/new-key-handoff.ts";
import { csrfOf, Visitor, signedInVisitor } from "../helpers/dashboard-visitor.ts";
import { BASE_URL, jsonOf, passwordOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

let cp: InProcessControlPlane;

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000", WEBHOOK_ALLOW_PRIVATE: "true" } });
});
afterAll(() => cp?.close());

const signedIn = (email: string): Promise<Visitor> => signedInVisitor(cp, BASE_URL, email, passwordOf(email));

const shownKey = (html: string) => /id="new-key"[^>]*value="(ck_[A-Za-z0-9]+)"/.exec(html)?.[1] ?? null;
const keysOf = async (email: string) => cp.deps.store.listApiKeys((await cp.account(email)).id);

describe("POST-redirect-GET", () => {
  test("creating a key redirects; the key is shown on the page after it once, and reloading creates and shows nothing", async () => {
    const v = await signedIn("prg-key@example.com");
    const posted = await v.submit("/dashboard/keys", "/dashboard/keys", { name: "laptop" });
    expect([posted.status, posted.headers.get("location"), posted.html]).toEqual([303, "/dashboard/keys", ""]);
    const page = await v.get("/dashboard/keys");
    const key = shownKey(page.html);
    expect([page.status, key?.length]).toEqual([200, 41]);
    expect((await cp.request("GET", "/api/v1/links", { key: key! })).status).toBe(200);
    // Nothing but the page carried the key: not the redirect's Location or headers, not the sealed cookie.
    const headers: string[] = [];
    posted.headers.forEach((value, name) => headers.push(`${name}: ${value}`));
    expect(headers.join("\n")).not.toContain(key!.slice(3));
    const reload = await v.get("/dashboard/keys");
    expect([reload.status, shownKey(reload.html), reload.html.includes(key!)]).toEqual([200, null, false]);
    expect(await keysOf("prg-key@example.com")).toHaveLength(1);
  });

  test("a copy of the handed-off cookie shows the key to nobody: not replayed, not in another session, not altered, not late", async () => {
    const v = await signedIn("prg-replay@example.com");
    await v.submit("/dashboard/keys", "/dashboard/keys", { name: "one" });
    const sealed = v.cookies.get(NEW_KEY_COOKIE)!;
    expect(sealed).toMatch(/^[A-Za-z0-9_-]+$/);

    // Another session of the same account cannot open it (and opening fails before the one-time check).
    const other = await signedIn("prg-replay@example.com");
    other.cookies.set(NEW_KEY_COOKIE, sealed);
    const elsewhere = await other.get("/dashboard/keys");
    expect([elsewhere.status, shownKey(elsewhere.html), other.cookies.has(NEW_KEY_COOKIE)]).toEqual([200, null, false]);

    const altered = sealed.slice(0, 20) + (sealed[20] === "A" ? "B" : "A") + sealed.slice(21);
    v.cookies.set(NEW_KEY_COOKIE, altered);
    expect(shownKey((await v.get("/dashboard/keys")).html)).toBeNull();

    v.cookies.set(NEW_KEY_COOKIE, sealed);
    expect(shownKey((await v.get("/dashboard/keys")).html)).toMatch(/^ck_/);
    v.cookies.set(NEW_KEY_COOKIE, sealed); // replayed within its lifetime
    expect(shownKey((await v.get("/dashboard/keys")).html)).toBeNull();

    await v.submit("/dashboard/keys", "/dashboard/keys", { name: "two" });
    cp.clock.advance(NEW_KEY_LIFETIME_MS + 1);
    expect(shownKey((await v.get("/dashboard/keys")).html)).toBeNull();
  });

  test("a hand-off is shown by its own page only: an invitation link or a webhook secret not followed is no new key", async () => {
    const v = await signedIn("prg-kinds@example.com");
    const shown = (html: string) => ["new-key", "new-invite", "new-secret"].filter((id) => html.includes(`id="${id}"`));
    const invited = await v.submit("/dashboard/members", "/dashboard/members/invitations", { role: "member", expiresInDays: "7" });
    expect(invited.status).toBe(303); // not followed: the person opens the keys page instead
    const keys = await v.get("/dashboard/keys");
    expect([shown(keys.html), keys.html.includes("/dashboard/invitations/")]).toEqual([[], false]);
    expect(shown((await v.get("/dashboard/webhooks")).html)).toEqual([]);
    // The link is still there for its own page, once.
    expect(shown((await v.get("/dashboard/members")).html)).toEqual(["new-invite"]);
    expect(shown((await v.get("/dashboard/members")).html)).toEqual([]);

    const hooked = await v.submit("/dashboard/webhooks", "/dashboard/webhooks", { url: "http://127.0.0.1:9/hook", events: "link.created" });
    expect(hooked.status).toBe(303);
    for (const page of ["/dashboard/keys", "/dashboard/members"]) expect([page, shown((await v.get(page)).html)]).toEqual([page, []]);
    expect(shown((await v.get("/dashboard/webhooks")).html)).toEqual(["new-secret"]);

    await v.submit("/dashboard/keys", "/dashboard/keys", { name: "mine" });
    for (const page of ["/dashboard/members", "/dashboard/webhooks"]) expect([page, shown((await v.get(page)).html)]).toEqual([page, []]);
    expect(shownKey((await v.get("/dashboard/keys")).html)).toMatch(/^ck_/);
  });

  test("every form that changes something answers 303 to a page that answers 200, so a reload is a GET", async () => {
    const email = "prg-all@example.com";
    const anon = new Visitor(BASE_URL, (request) => cp.handle(request));
    const follow = async (res: { status: number; headers: Headers }, v: Visitor) => {
      expect(res.status).toBe(303);
      const location = res.headers.get("location")!;
      expect(location).toStartWith("/dashboard");
      return [location, (await v.get(location)).status];
    };
    await follow(await anon.submit("/dashboard/signup", "/dashboard/signup", { email, password: passwordOf(email) }), anon);
    const v = await signedIn(email);
    await follow(await v.submit("/dashboard/keys", "/dashboard/keys", { name: "k" }), v);
    const keys = await v.get("/dashboard/keys");
    const revoke = /action="(\/dashboard\/keys\/[^"]+\/revoke)"/.exec(keys.html)![1];
    const steps = [
      await follow(await v.post(revoke, { _csrf: csrfOf(keys.html) }), v),
      await follow(await v.submit("/dashboard/links/new", "/dashboard/links", { url: "https://example.com/", slug: "prg-link" }), v),
      await follow(await v.submit("/dashboard/links/prg-link/edit", "/dashboard/links/prg-link/edit", { url: "https://example.com/2" }), v),
      await follow(await v.submit("/dashboard/links/prg-link/delete", "/dashboard/links/prg-link/delete", {}), v),
      await follow(await v.submit("/dashboard/links", "/dashboard/signout", {}), v),
    ];
    expect(steps.map(([, status]) => status)).toEqual([200, 200, 200, 200, 200]);
  });
});

describe("tag and folder filters", () => {
  test("ignore case, and the list and both forms suggest the account's own tags and folders only", async () => {
    const v = await signedIn("filters@example.com");
    const { key } = await cp.createKey("filters@example.com");
    const rows = [
      { url: "https://example.com/1", slug: "f-one", tags: ["Launch", "q1"], folder: "Marketing" },
      { url: "https://example.com/2", slug: "f-two", tags: ["launch"], folder: "marketing" },
      { url: "https://example.com/3", slug: "f-three", tags: ["other"], folder: "Sales" },
    ];
    expect((await jsonOf(await cp.request("POST", "/api/v1/bulk", { key, json: rows }))).created).toBe(3);
    const { key: otherKey } = await cp.createKey("filters-other@example.com");
    await cp.request("POST", "/api/v1/links", { key: otherKey, json: { url: "https://example.com/x", tags: ["secret-tag"], folder: "Secret folder" } });

    // One bulk: one creation time, so the order among them is the ids'; the set is what the filter decides.
    const slugs = (html: string) => [...html.matchAll(/data-label="Short link"><a class="mono" href="[^"]+">([^<]+)</g)].map((m) => m[1]).sort();
    expect(slugs((await v.get("/dashboard/links?tag=LAUNCH")).html)).toEqual(["f-one", "f-two"]);
    expect(slugs((await v.get("/dashboard/links?folder=MARKETING&tag=q1")).html)).toEqual(["f-one"]);

    const options = (html: string, id: string) => [...(new RegExp(`<datalist id="${id}">(.*?)</datalist>`).exec(html)?.[1] ?? "").matchAll(/value="([^"]*)"/g)].map((m) => m[1]);
    for (const path of ["/dashboard/links", "/dashboard/links/new", "/dashboard/links/f-one/edit"]) {
      const html = (await v.get(path)).html;
      expect([path, options(html, "tag-suggestions"), options(html, "folder-suggestions")]).toEqual([path, ["Launch", "launch", "other", "q1"], ["Marketing", "marketing", "Sales"]]);
    }
    const list = (await v.get("/dashboard/links")).html;
    expect(list).toMatch(/<input id="tag" name="tag" [^>]*list="tag-suggestions"/);
    expect(list).toMatch(/<input id="folder" name="folder" [^>]*list="folder-suggestions"/);
    const form = (await v.get("/dashboard/links/new")).html;
    expect(form).toMatch(/<input id="f-tags" [^>]*list="tag-suggestions" data-multi/);
    expect(form).toMatch(/<input id="f-folder" [^>]*list="folder-suggestions"/);
  });
});

/** Every invalid control of the page: its id, and the text of the element its aria-describedby names. */
function invalidControls(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [tag] of html.matchAll(/<(?:input|select|textarea)\b[^>]*aria-invalid="true"[^>]*>/g)) {
    const id = /\sid="([^"]+)"/.exec(tag)![1];
    const describedBy = /aria-describedby="([^"]+)"/.exec(tag)![1];
    out[id] = new RegExp(`<p class="err" id="${describedBy}">([^<]*)</p>`).exec(html)?.[1] ?? "(missing)";
  }
  return out;
}

/** The summary's links: target id → text. */
function summaryLinks(html: string): Record<string, string> {
  const summary = /<div class="errors" role="alert" tabindex="-1" aria-labelledby="error-summary-title" data-error-summary>([\s\S]*?)<\/div>/.exec(html)?.[1] ?? "";
  return Object.fromEntries([...summary.matchAll(/<a href="#([^"]+)">([^<]*)<\/a>/g)].map((m) => [m[1], m[2]]));
}

describe("accessible, human-worded errors", () => {
  test("the link form: a summary linking to each invalid control, each marked and described, in plain words", async () => {
    const v = await signedIn("errors@example.com");
    const bad = await v.submit("/dashboard/links/new", "/dashboard/links", {
      url: "", maxHits: "0", folder: "f".repeat(81), rule_kind: ["country"], rule_match: ["US"], rule_url: ["https://us.example.com"], ab_url: ["https://a.example.com"], ab_weight: ["-1"],
    });
    expect(bad.status).toBe(400);
    expect(summaryLinks(bad.html)).toEqual({
      "f-url": "Destination URL: must not be empty",
      "f-maxHits": "Click limit: must be at least 1",
      "f-folder": "Folder: must be at most 80 characters",
      "ab_weight-0": "Variant 1 weight: must be greater than 0",
    });
    expect(invalidControls(bad.html)).toEqual({
      "f-url": "must not be empty",
      "f-maxHits": "must be at least 1",
      "f-folder": "must be at most 80 characters",
      "ab_weight-0": "Variant 1 weight: must be greater than 0",
    });
    for (const id of Object.keys(summaryLinks(bad.html))) expect(bad.html).toContain(` id="${id}"`);
    expect(bad.html).not.toContain("Expected");
    // The API gives the same words (shared/messages.ts).
    const { key } = await cp.createKey("errors@example.com");
    const viaApi = await jsonOf(await cp.request("POST", "/api/v1/links", { key, json: { url: "https://example.com", maxHits: 0 } }));
    expect(viaApi.errors).toEqual([{ path: "/maxHits", message: "must be at least 1" }]);
  });

  test("key name, sign-up and list filters: the same summary, marks and descriptions", async () => {
    const v = await signedIn("errors-2@example.com");
    const key = await v.submit("/dashboard/keys", "/dashboard/keys", { name: "n".repeat(81) });
    expect([key.status, summaryLinks(key.html), invalidControls(key.html)]).toEqual([400, { "key-name": "Name: must be 1-80 characters" }, { "key-name": "must be 1-80 characters" }]);

    const anon = new Visitor(BASE_URL, (request) => cp.handle(request));
    const signup = await anon.submit("/dashboard/signup", "/dashboard/signup", { email: "errors-2@example.com", password: "long enough password" });
    expect([signup.status, summaryLinks(signup.html), invalidControls(signup.html)]).toEqual([400, { email: "Email: is already registered" }, { email: "is already registered" }]);

    const list = await v.get(`/dashboard/links?status=bogus&tag=${"t".repeat(501)}`);
    expect(Object.keys(invalidControls(list.html)).sort()).toEqual(["status", "tag"]);
    expect(Object.keys(summaryLinks(list.html)).sort()).toEqual(["status", "tag"]);

    // A problem with no field to fix: said in words, linking nowhere.
    const cursor = await v.get("/dashboard/links?cursor=zz");
    expect(cursor.html).toContain("<li>The page link: is out of date or was changed: start again from the first page</li>");
    const signin = await anon.submit("/dashboard/signin", "/dashboard/signin", { email: "errors-2@example.com", password: "wrong" });
    expect([signin.status, signin.html.includes("<p>Wrong email or password.</p>"), invalidControls(signin.html)]).toEqual([401, true, {}]);
  });
});

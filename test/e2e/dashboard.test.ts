/**
 * The dashboard over real HTTP against the embedded server: sessions and their cookie flags, CSRF (token and
 * Origin), the sign-in rate limit, closed sign-up, escaping of hostile link fields, the form ⇄ API mapping
 * (same messages, rules and A/B rows), pagination, revocation and no access to another account's links.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { csrfOf, formFieldsOf, Visitor } from "../helpers/dashboard-visitor.ts";
import { waitFor } from "../helpers/scale.ts";
import { api, startServer, type TestServer } from "../helpers/server.ts";

const XSS = "<img src=x onerror=alert(1)>";
const XSS_ESCAPED = "&lt;img src=x onerror=alert(1)&gt;";

async function signUp(server: TestServer, email: string, password = "correct horse battery"): Promise<Visitor> {
  const v = new Visitor(server.url);
  const res = await v.submit("/dashboard/signup", "/dashboard/signup", { email, password });
  expect(res.status).toBe(303);
  expect(res.headers.get("location")).toBe("/dashboard/links?flash=welcome");
  return v;
}

async function newKey(v: Visitor, name: string): Promise<string> {
  const res = await v.submit("/dashboard/keys", "/dashboard/keys", { name });
  expect(res.status).toBe(201);
  const key = /id="new-key"[^>]*value="(ck_[A-Za-z0-9]+)"/.exec(res.html)?.[1];
  expect(key).toBeDefined();
  return key!;
}

describe("dashboard (embedded server)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  test("flash codes and static names are looked up in their own tables only (not \"constructor\")", async () => {
    const v = await signUp(server, "lookup@example.com");
    for (const code of ["constructor", "__proto__", "toString"]) {
      const page = await v.get(`/dashboard/links?flash=${code}`);
      expect(page.status).toBe(200);
      expect(page.html).not.toContain("native code");
      expect(page.html).not.toContain("[object Object]");
    }
    for (const name of ["constructor", "__proto__", "toString"]) expect((await v.get(`/dashboard/static/${name}`)).status).toBe(404);
  });

  test("signed-out visitors are sent to sign in, and back afterwards", async () => {
    const v = new Visitor(server.url);
    const res = await v.get("/dashboard/links?tag=x");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/dashboard/signin?next=${encodeURIComponent("/dashboard/links?tag=x")}`);
    const page = await v.get("/dashboard/signin?next=https://evil.example/");
    expect(page.html).toContain('name="next" value="/dashboard/links"');
    // Dot segments would leave the dashboard once resolved (onto a short link that forwards anywhere).
    for (const next of ["/dashboard/../some-slug", "/dashboard/%2e%2e/some-slug", "/dashboard/./../x"]) {
      expect((await v.get(`/dashboard/signin?next=${encodeURIComponent(next)}`)).html).toContain('name="next" value="/dashboard/links"');
    }
    expect((await v.get(`/dashboard/signin?next=${encodeURIComponent("/dashboard/keys?x=1")}`)).html).toContain('name="next" value="/dashboard/keys?x=1"');
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  });

  test("sign-up sets an HttpOnly, SameSite=Lax session cookie (Secure behind https) and sign-out revokes it", async () => {
    const v = new Visitor(server.url);
    const form = await v.get("/dashboard/signup");
    const res = await v.post("/dashboard/signup", { _csrf: csrfOf(form.html), email: "Flags@Example.com", password: "password-1234" }, { "x-forwarded-proto": "https" });
    expect(res.status).toBe(303);
    const cookie = v.setCookies.find((c) => c.startsWith("clink_session="))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Secure/);
    expect(cookie).toMatch(/Path=\/dashboard/);

    const plain = new Visitor(server.url);
    const signin = await plain.get("/dashboard/signin");
    await plain.post("/dashboard/signin", { _csrf: csrfOf(signin.html), email: "flags@example.com", password: "password-1234" });
    const plainCookie = plain.setCookies.find((c) => c.startsWith("clink_session="))!;
    expect(plainCookie).toMatch(/HttpOnly/);
    expect(plainCookie).not.toMatch(/Secure/);

    const token = v.cookies.get("clink_session")!;
    expect((await v.get("/dashboard/links")).status).toBe(200);
    const out = await v.submit("/dashboard/links", "/dashboard/signout", {});
    expect(out.status).toBe(303);
    const stolen = new Visitor(server.url);
    stolen.cookies.set("clink_session", token);
    expect((await stolen.get("/dashboard/links")).status).toBe(303);
    // The other browser's session is untouched.
    expect((await plain.get("/dashboard/links")).status).toBe(200);
  });

  test("form posts without the CSRF token, with a wrong one, or from a foreign Origin are refused with 403", async () => {
    const v = await signUp(server, "csrf@example.com");
    const page = await v.get("/dashboard/keys");
    const csrf = csrfOf(page.html);
    expect((await v.post("/dashboard/keys", { name: "no token" })).status).toBe(403);
    expect((await v.post("/dashboard/keys", { _csrf: "x".repeat(32), name: "wrong token" })).status).toBe(403);
    expect((await v.post("/dashboard/keys", { _csrf: csrf, name: "foreign" }, { origin: "https://evil.example" })).status).toBe(403);
    expect((await v.post("/dashboard/keys", { _csrf: csrf, name: "cross" }, { "sec-fetch-site": "cross-site" })).status).toBe(403);
    const keys = await v.get("/dashboard/keys");
    expect(keys.html).not.toContain("no token");
    expect(keys.html).not.toContain("foreign");
    const ok = await v.post("/dashboard/keys", { _csrf: csrf, name: "good" }, { origin: server.url });
    expect(ok.status).toBe(201);

    const anon = new Visitor(server.url);
    expect((await anon.post("/dashboard/signin", { email: "csrf@example.com", password: "correct horse battery" })).status).toBe(403);
    const login = await anon.get("/dashboard/signin");
    const foreign = await anon.post("/dashboard/signin", { _csrf: csrfOf(login.html), email: "csrf@example.com", password: "correct horse battery" }, { origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect(anon.cookies.has("clink_session")).toBe(false);
  });

  test("sign-in is limited to 10 attempts per email and address per 15 minutes, even with the right password", async () => {
    await signUp(server, "limited@example.com", "the-right-password");
    const v = new Visitor(server.url);
    const page = await v.get("/dashboard/signin");
    const csrf = csrfOf(page.html);
    for (let i = 0; i < 10; i++) {
      const res = await v.post("/dashboard/signin", { _csrf: csrf, email: "limited@example.com", password: `wrong-${i}` });
      expect(res.status).toBe(401);
      expect(res.html).toContain("Wrong email or password.");
    }
    const blocked = await v.post("/dashboard/signin", { _csrf: csrf, email: "Limited@example.com", password: "the-right-password" });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(v.cookies.has("clink_session")).toBe(false);
  });

  test("hostile strings in tags, folder, target query and OG fields render as text everywhere", async () => {
    const v = await signUp(server, "xss@example.com");
    const created = await v.submit("/dashboard/links/new", "/dashboard/links", {
      url: `https://example.com/?q=${XSS}`, slug: "xss-link", tags: `${XSS}, safe`, folder: XSS, status: "active",
      ogTitle: XSS, ogDescription: XSS, serveOg: "on", rule_kind: "country", rule_match: "", rule_url: "",
    });
    expect(created.status).toBe(303);
    for (const path of ["/dashboard/links", "/dashboard/links/xss-link/stats", "/dashboard/links/xss-link/edit", "/dashboard/links/xss-link/delete", `/dashboard/links?tag=${encodeURIComponent(XSS)}`]) {
      const page = await v.get(path);
      expect(page.status).toBe(200);
      expect(page.html).not.toContain(XSS);
      expect(page.html).not.toContain("<img");
      // The delete page shows only the destination, which is stored percent-encoded (spaces, < and >).
      if (path.endsWith("/delete")) expect(page.html).toContain("https://example.com/?q=%3Cimg%20src=x%20onerror=alert(1)%3E");
      else expect(page.html).toContain(XSS_ESCAPED);
    }
  });

  test("the link form gives the API's validation messages and maps rules and A/B rows both ways", async () => {
    const v = await signUp(server, "forms@example.com");
    const key = await newKey(v, "forms");
    const bad = await v.submit("/dashboard/links/new", "/dashboard/links", {
      url: "ftp://example.com", maxHits: "0", rule_kind: ["country", "device"], rule_match: ["USA", "fridge"],
      rule_url: ["https://us.example.com", "javascript:alert(1)"], ab_url: ["https://a.example.com"], ab_weight: ["heavy"],
    });
    expect(bad.status).toBe(400);
    const viaApi = await api(server, key).post("/api/v1/links", {
      url: "ftp://example.com", maxHits: 0, rules: [{ kind: "country", match: "USA", url: "https://us.example.com" }, { kind: "device", match: "fridge", url: "javascript:alert(1)" }],
      abUrls: [{ url: "https://a.example.com", weight: "heavy" }], serveOg: false, status: "active",
    });
    expect(viaApi.status).toBe(400);
    for (const e of viaApi.body.errors as { message: string }[]) expect(bad.html).toContain(e.message);
    expect(bad.html).toContain('value="USA"'); // what was typed is kept
    // Past the schema, the field rules (scheme, country code, device) speak the same words too.
    const bad2 = await v.submit("/dashboard/links/new", "/dashboard/links", {
      url: "ftp://example.com", maxHits: "5", rule_kind: ["country", "device"], rule_match: ["USA", "fridge"],
      rule_url: ["https://us.example.com", "javascript:alert(1)"],
    });
    const viaApi2 = await api(server, key).post("/api/v1/links", {
      url: "ftp://example.com", maxHits: 5, rules: [{ kind: "country", match: "USA", url: "https://us.example.com" }, { kind: "device", match: "fridge", url: "javascript:alert(1)" }],
    });
    expect(viaApi2.body.errors.length).toBe(4);
    for (const e of viaApi2.body.errors as { message: string }[]) expect(bad2.html).toContain(e.message);
    expect(bad2.html).toContain("Rule 2 url: must use http or https");

    const ok = await v.submit("/dashboard/links/new", "/dashboard/links", {
      url: "https://example.com/landing", slug: "rows", tags: "a, b", folder: "Spring", maxHits: "50", password: "pw-secret",
      expiresAt: "2099-01-02T03:04", utmSource: "news", rule_kind: ["country", "device", "country"], rule_match: ["us", "Mobile", ""],
      rule_url: ["https://us.example.com", "https://m.example.com", ""], ab_url: ["https://a.example.com", "https://b.example.com", ""],
      ab_weight: ["3", "1", ""], serveOg: "on", ogTitle: "Hello", webhookUrl: "",
    });
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/dashboard/links/rows/stats?flash=created");
    const link = (await api(server, key).get("/api/v1/links/rows")).body;
    expect(link).toMatchObject({
      target: "https://example.com/landing", tags: ["a", "b"], folder: "Spring", maxHits: 50, hasPassword: true,
      expiresAt: "2099-01-02T03:04:00.000Z", utmSource: "news", serveOg: true, ogTitle: "Hello", webhookUrl: null,
      rules: [{ kind: "country", match: "US", url: "https://us.example.com" }, { kind: "device", match: "mobile", url: "https://m.example.com" }],
      abUrls: [{ url: "https://a.example.com", weight: 3 }, { url: "https://b.example.com", weight: 1 }],
    });

    const edit = await v.get("/dashboard/links/rows/edit");
    expect(edit.html).toContain('value="2099-01-02T03:04"');
    expect(edit.html).toContain('value="https://m.example.com"');
    // Clearing the rows, the limit and the folder clears them; a blank password keeps the password.
    const saved = await v.post("/dashboard/links/rows/edit", {
      _csrf: csrfOf(edit.html), url: "https://example.com/new", status: "paused", tags: "a", folder: "", maxHits: "",
      expiresAt: "", rule_kind: ["country"], rule_match: [""], rule_url: [""], ab_url: [""], ab_weight: [""], password: "",
    });
    expect(saved.status).toBe(303);
    const after = (await api(server, key).get("/api/v1/links/rows")).body;
    expect(after).toMatchObject({ target: "https://example.com/new", status: "paused", tags: ["a"], folder: null, maxHits: null,
      expiresAt: null, rules: [], abUrls: [], hasPassword: true, serveOg: false });

    const taken = await v.submit("/dashboard/links/new", "/dashboard/links", { url: "https://example.com", slug: "rows" });
    expect(taken.status).toBe(409);
    expect(taken.html).toContain("is already taken");
  });

  test("saving the edit form unchanged changes nothing, also what the form cannot show exactly", async () => {
    const v = await signUp(server, "unchanged@example.com");
    const key = await newKey(v, "unchanged");
    const input = {
      url: "https://example.com/same?x=1", slug: "unchanged", expiresAt: "2031-01-01T00:00:45.500Z", startsAt: "2020-01-01T00:00:30Z",
      tags: ["a,b", "c"], folder: "F", maxHits: 9, ogTitle: "T", ogDescription: "line 1\nline 2", serveOg: true,
      rules: [{ kind: "country", match: "de", url: "https://example.de/" }], abUrls: [{ url: "https://a.example.com/", weight: 2.5 }],
      utmSource: "s", webhookUrl: "https://93.184.216.34/hook", expiredUrl: "https://example.com/after", externalId: "same-1",
    };
    expect((await api(server, key).post("/api/v1/links", input)).status).toBe(201);
    const before = (await api(server, key).get("/api/v1/links/unchanged")).body;
    const edit = await v.get("/dashboard/links/unchanged/edit");
    const saved = await v.post("/dashboard/links/unchanged/edit", formFieldsOf(edit.html));
    expect(saved.status).toBe(303);
    const after = (await api(server, key).get("/api/v1/links/unchanged")).body;
    expect({ ...after, updatedAt: before.updatedAt }).toEqual(before);
    // A field changed in the form is saved, and only that one.
    const fields = formFieldsOf((await v.get("/dashboard/links/unchanged/edit")).html);
    fields.folder = ["G"];
    expect((await v.post("/dashboard/links/unchanged/edit", fields)).status).toBe(303);
    expect((await api(server, key).get("/api/v1/links/unchanged")).body).toMatchObject({ ...before, folder: "G", updatedAt: expect.any(String) });
  });

  test("the list filters by tag, folder and search and pages with the API cursor", async () => {
    const v = await signUp(server, "pages@example.com");
    const key = await newKey(v, "pages");
    const rows = Array.from({ length: 30 }, (_, i) => ({ url: `https://example.com/${i}`, slug: `page-${i}`, tags: i % 2 ? "odd" : "even", folder: i < 5 ? "Few" : null }));
    expect((await api(server, key).post("/api/v1/bulk", rows)).body.created).toBe(30);
    const first = await v.get("/dashboard/links");
    expect(first.html.match(/data-label="Short link"/g)?.length).toBe(25);
    const next = /href="(\/dashboard\/links\?cursor=[^"]+)">Next page/.exec(first.html)?.[1];
    expect(next).toBeDefined();
    const second = await v.get(next!.replace(/&amp;/g, "&"));
    expect(second.html.match(/data-label="Short link"/g)?.length).toBe(5);
    expect(second.html).not.toContain("Next page");
    expect((await v.get("/dashboard/links?tag=odd")).html.match(/data-label="Short link"/g)?.length).toBe(15);
    expect((await v.get("/dashboard/links?folder=Few")).html.match(/data-label="Short link"/g)?.length).toBe(5);
    const search = await v.get("/dashboard/links?q=page-17");
    expect(search.html.match(/data-label="Short link"/g)?.length).toBe(1);
    expect((await v.get("/dashboard/links?status=bogus")).html).toContain("must be active, paused or archived");
  });

  test("revoking a key in the dashboard makes the API answer 401 at once; other accounts' links are 404", async () => {
    const v = await signUp(server, "revoke@example.com");
    const key = await newKey(v, "soon revoked");
    expect((await api(server, key).post("/api/v1/links", { url: "https://example.com", slug: "mine-only" })).status).toBe(201);
    const keys = await v.get("/dashboard/keys");
    expect(keys.html).not.toContain(key); // shown once, never again
    expect(keys.html).toContain(key.slice(0, 7));
    const action = /action="(\/dashboard\/keys\/[^"]+\/revoke)"/.exec(keys.html)![1];
    expect((await v.post(action, { _csrf: csrfOf(keys.html) })).status).toBe(303);
    expect((await api(server, key).get("/api/v1/links")).status).toBe(401);
    expect((await v.get("/dashboard/keys")).html).toContain("revoked");

    const other = await signUp(server, "other@example.com");
    for (const path of ["/dashboard/links/mine-only/stats", "/dashboard/links/mine-only/edit", "/dashboard/links/mine-only/qr.svg"]) {
      expect((await other.get(path)).status).toBe(404);
    }
    const del = await other.get("/dashboard/links");
    expect((await other.post("/dashboard/links/mine-only/delete", { _csrf: csrfOf(del.html) })).status).toBe(404);
    const qr = await v.get("/dashboard/links/mine-only/qr.svg");
    expect(qr.headers.get("content-type")).toContain("image/svg+xml");
    expect(qr.html.startsWith("<svg")).toBe(true);
  });
});

describe("dashboard sessions past their expiry", () => {
  test("are removed when the control plane starts (and hourly after), without anyone presenting them", async () => {
    const server = await startServer();
    try {
      const kept = await signUp(server, "kept@example.com");
      await signUp(server, "aged@example.com");
      const db = new Database(join(server.dataDir, "clink.sqlite"));
      try {
        // Aged in place while the server runs (WAL lets a second connection write); nobody presents it again.
        db.run("UPDATE sessions SET expires_at = ? WHERE account_id = (SELECT id FROM accounts WHERE email = ?)", [Date.now() - 1000, "aged@example.com"]);
        const owners = () => db.query<{ email: string }, []>("SELECT a.email FROM sessions s JOIN accounts a ON a.id = s.account_id ORDER BY a.email").all().map((r) => r.email);
        expect(owners()).toEqual(["aged@example.com", "kept@example.com"]);
        await server.restart();
        await waitFor("the expired session purged", () => owners().length === 1 || null);
        expect(owners()).toEqual(["kept@example.com"]);
      } finally {
        db.close();
      }
      expect((await kept.get("/dashboard/links")).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});

describe("dashboard with SIGNUP=closed", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ env: { SIGNUP: "closed" } });
  });
  afterAll(async () => {
    await server?.stop();
  });

  test("the sign-up page says sign-up is closed and a posted sign-up is refused", async () => {
    const v = new Visitor(server.url);
    const page = await v.get("/dashboard/signup");
    expect(page.html).toContain("Sign-up is closed");
    expect(page.html).not.toContain('action="/dashboard/signup"');
    const signin = await v.get("/dashboard/signin");
    const res = await v.post("/dashboard/signup", { _csrf: csrfOf(signin.html), email: "new@example.com", password: "password-1234" });
    expect(res.status).toBe(403);
    expect(v.cookies.has("clink_session")).toBe(false);
    const login = await v.post("/dashboard/signin", { _csrf: csrfOf(signin.html), email: "new@example.com", password: "password-1234" });
    expect(login.status).toBe(401);
  });
});

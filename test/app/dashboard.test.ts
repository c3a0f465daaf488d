/**
 * The dashboard (§6) through the Elysia app in process, for everything that needs no browser: redirects to sign in,
 * session cookies and their expiry on the test clock, CSRF, the sign-in limit, escaping of hostile link fields,
 * the link form ⇄ API mapping, pages of the list, API keys shown once and revoked, and other accounts' links.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sha256Hex } from "../../shared/ids.ts";
import { csrfOf, formFieldsOf, Visitor } from "../helpers/dashboard-visitor.ts";
import { BASE_URL, jsonOf, passwordOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

const XSS = "<img src=x onerror=alert(1)>";
const XSS_ESCAPED = "&lt;img src=x onerror=alert(1)&gt;";

/** A cookie-keeping visitor whose requests go to this control plane's app. */
const visitor = (c: InProcessControlPlane) => new Visitor(BASE_URL, (request) => c.handle(request));

const rowsOf = (html: string) => html.match(/data-label="Short link"/g)?.length ?? 0;

let cp: InProcessControlPlane;

/** A visitor signed in as `email` (the account is created first when missing). */
async function signedIn(email: string): Promise<Visitor> {
  await cp.account(email);
  const v = visitor(cp);
  const res = await v.submit("/dashboard/signin", "/dashboard/signin", { email, password: passwordOf(email) });
  expect([res.status, res.headers.get("location")]).toEqual([303, "/dashboard/links"]);
  return v;
}

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
});
afterAll(() => cp?.close());

describe("sessions", () => {
  test("signed-out visitors are sent to sign in with next, and only dashboard paths are kept as next", async () => {
    const v = visitor(cp);
    for (const path of ["/dashboard/links?tag=x", "/dashboard/keys"]) {
      const res = await v.get(path);
      expect([res.status, res.headers.get("location")]).toEqual([303, `/dashboard/signin?next=${encodeURIComponent(path)}`]);
    }
    expect((await v.get("/dashboard")).headers.get("location")).toBe("/dashboard/signin");
    for (const next of ["https://evil.example/", "/dashboard/../some-slug", "/dashboard/%2e%2e/some-slug", "//evil.example/dashboard", "/dashboardx"]) {
      expect((await v.get(`/dashboard/signin?next=${encodeURIComponent(next)}`)).html).toContain('name="next" value="/dashboard/links"');
    }
    expect((await v.get(`/dashboard/signin?next=${encodeURIComponent("/dashboard/keys?x=1")}`)).html).toContain('name="next" value="/dashboard/keys?x=1"');
  });

  test("sign-up creates the account and a session cookie: HttpOnly, SameSite=Lax, Path=/dashboard, two weeks, Secure behind https", async () => {
    const v = visitor(cp);
    const res = await v.submit("/dashboard/signup", "/dashboard/signup", { email: "Flags@Example.com", password: "password-1234" }, { "x-forwarded-proto": "https" });
    expect([res.status, res.headers.get("location")]).toEqual([303, "/dashboard/links?flash=welcome"]);
    const cookie = v.setCookies.find((c) => c.startsWith("clink_session="))!;
    expect(cookie.split("; ").slice(1)).toEqual(["Path=/dashboard", "HttpOnly", "SameSite=Lax", "Max-Age=1209600", "Secure"]);
    expect((await cp.deps.store.getAccountByEmail("flags@example.com"))!.email).toBe("flags@example.com");
    const links = await v.get(res.headers.get("location")!);
    expect(links.status).toBe(200);
    expect(links.html).toContain('<p class="flash" role="status">Welcome! Your account is ready.</p>');
    expect(links.html).toContain("flags@example.com");
  });

  test("sign-up refuses a taken email and a short password with 400 and the field messages", async () => {
    await cp.account("taken@example.com");
    const taken = await visitor(cp).submit("/dashboard/signup", "/dashboard/signup", { email: "TAKEN@example.com", password: "password-1234" });
    expect(taken.status).toBe(400);
    expect(taken.html).toContain("is already registered");
    const short = await visitor(cp).submit("/dashboard/signup", "/dashboard/signup", { email: "short@example.com", password: "1234567" });
    expect(short.status).toBe(400);
    expect(short.html).toContain("must be 8-200 characters");
  });

  test("a wrong password answers 401 with the form again and no session; over plain http the cookie is not Secure", async () => {
    await cp.account("plain@example.com");
    const v = visitor(cp);
    const wrong = await v.submit("/dashboard/signin", "/dashboard/signin", { email: "plain@example.com", password: "not-it" });
    expect([wrong.status, wrong.html.includes("Wrong email or password."), v.cookies.has("clink_session")]).toEqual([401, true, false]);
    await v.submit("/dashboard/signin", "/dashboard/signin", { email: "plain@example.com", password: passwordOf("plain@example.com") });
    expect(v.setCookies.find((c) => c.startsWith("clink_session="))).not.toContain("Secure");
  });

  test("sign-out ends the session for a copied cookie too, and leaves other sessions alone", async () => {
    const v = await signedIn("signout@example.com");
    const other = await signedIn("signout@example.com");
    const copy = visitor(cp);
    copy.cookies.set("clink_session", v.cookies.get("clink_session")!);
    const out = await v.submit("/dashboard/links", "/dashboard/signout", {});
    expect([out.status, out.headers.get("location")]).toEqual([303, "/dashboard/signin?flash=signed-out"]);
    expect((await copy.get("/dashboard/links")).status).toBe(303);
    expect((await other.get("/dashboard/links")).status).toBe(200);
  });

  test("a session ends two weeks after sign-in, and its row is removed when presented", async () => {
    const v = await signedIn("aging@example.com");
    cp.clock.advance(14 * 24 * 3_600_000 - 1);
    expect((await v.get("/dashboard/links")).status).toBe(200);
    const idHash = sha256Hex(v.cookies.get("clink_session")!);
    expect(await cp.deps.store.getSession(idHash)).not.toBeNull();
    cp.clock.advance(1);
    expect((await v.get("/dashboard/links")).status).toBe(303);
    expect(await cp.deps.store.getSession(idHash)).toBeNull();
  });
});

describe("forms", () => {
  test("posts without the CSRF token, with a wrong one, from a foreign Origin or cross-site answer 403 and change nothing", async () => {
    const v = await signedIn("csrf@example.com");
    const csrf = csrfOf((await v.get("/dashboard/keys")).html);
    expect((await v.post("/dashboard/keys", { name: "no token" })).status).toBe(403);
    expect((await v.post("/dashboard/keys", { _csrf: "x".repeat(32), name: "wrong token" })).status).toBe(403);
    expect((await v.post("/dashboard/keys", { _csrf: csrf, name: "foreign" }, { origin: "https://evil.example" })).status).toBe(403);
    expect((await v.post("/dashboard/keys", { _csrf: csrf, name: "cross" }, { "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect(await cp.deps.store.listApiKeys((await cp.account("csrf@example.com")).id)).toEqual([]);
    expect((await v.post("/dashboard/keys", { _csrf: csrf, name: "good" }, { origin: BASE_URL })).status).toBe(303);

    const anon = visitor(cp);
    expect((await anon.post("/dashboard/signin", { email: "csrf@example.com", password: passwordOf("csrf@example.com") })).status).toBe(403);
    expect(anon.cookies.has("clink_session")).toBe(false);
  });

  test("a form posted as anything but urlencoded is refused, not parsed", async () => {
    const v = await signedIn("multipart@example.com");
    const form = new FormData();
    form.set("_csrf", csrfOf((await v.get("/dashboard/keys")).html));
    form.set("name", "multipart");
    const res = await cp.handle(new Request(`${BASE_URL}/dashboard/keys`, { method: "POST", body: form, headers: { cookie: `clink_session=${v.cookies.get("clink_session")}` } }));
    expect(res.status).toBe(415);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
  });
});

describe("sign-in limit", () => {
  test("10 attempts per email and address per 15 minutes, even with the right password; then allowed again", async () => {
    const limited = await startControlPlane();
    try {
      await limited.account("limited@example.com");
      const v = visitor(limited);
      const csrf = csrfOf((await v.get("/dashboard/signin")).html);
      const attempt = (password: string) => v.post("/dashboard/signin", { _csrf: csrf, email: "Limited@example.com", password });
      for (let i = 0; i < 10; i++) expect((await attempt(`wrong-${i}`)).status).toBe(401);
      const blocked = await attempt(passwordOf("limited@example.com"));
      expect([blocked.status, blocked.headers.get("retry-after"), v.cookies.has("clink_session")]).toEqual([429, "900", false]);
      limited.clock.advance(15 * 60_000);
      expect((await attempt(passwordOf("limited@example.com"))).status).toBe(303);
    } finally {
      await limited.close();
    }
  });
});

describe("links", () => {
  test("hostile strings in tags, folder, target query and OG fields render as text on every page", async () => {
    const v = await signedIn("xss@example.com");
    const created = await v.submit("/dashboard/links/new", "/dashboard/links", {
      url: `https://example.com/?q=${XSS}`, slug: "xss-link", tags: `${XSS}, safe`, folder: XSS, status: "active", ogTitle: XSS, ogDescription: XSS, serveOg: "on",
    });
    expect([created.status, created.headers.get("location")]).toEqual([303, "/dashboard/links/xss-link/stats?flash=created"]);
    for (const path of ["/dashboard/links", "/dashboard/links/xss-link/stats", "/dashboard/links/xss-link/edit", `/dashboard/links?tag=${encodeURIComponent(XSS)}`]) {
      const page = await v.get(path);
      expect([page.status, page.html.includes("<img"), page.html.includes(XSS_ESCAPED)]).toEqual([200, false, true]);
      expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    }
  });

  test("the link form speaks the API's validation messages and maps rules and A/B rows both ways", async () => {
    const v = await signedIn("forms@example.com");
    const { key } = await cp.createKey("forms@example.com");
    const bad = await v.submit("/dashboard/links/new", "/dashboard/links", {
      url: "ftp://example.com", maxHits: "5", rule_kind: ["country", "device"], rule_match: ["USA", "fridge"], rule_url: ["https://us.example.com", "javascript:alert(1)"],
    });
    const viaApi = await jsonOf(await cp.request("POST", "/api/v1/links", { key, json: {
      url: "ftp://example.com", maxHits: 5, rules: [{ kind: "country", match: "USA", url: "https://us.example.com" }, { kind: "device", match: "fridge", url: "javascript:alert(1)" }],
    } }));
    expect([bad.status, viaApi.errors.length]).toEqual([400, 4]);
    for (const e of viaApi.errors as { message: string }[]) expect(bad.html).toContain(e.message);
    expect(bad.html).toContain("Rule 2 URL: must use http or https");
    expect(bad.html).toContain('value="USA"'); // what was typed is kept

    const ok = await v.submit("/dashboard/links/new", "/dashboard/links", {
      url: "https://example.com/landing", slug: "rows", tags: "a, b", folder: "Spring", maxHits: "50", expiresAt: "2099-01-02T03:04", utmSource: "news",
      rule_kind: ["country", "device", "country"], rule_match: ["us", "Mobile", ""], rule_url: ["https://us.example.com", "https://m.example.com", ""],
      ab_url: ["https://a.example.com", "https://b.example.com", ""], ab_weight: ["3", "1", ""], serveOg: "on", ogTitle: "Hello", webhookUrl: "",
    });
    expect(ok.status).toBe(303);
    expect(await jsonOf(await cp.request("GET", "/api/v1/links/rows", { key }))).toMatchObject({
      target: "https://example.com/landing", tags: ["a", "b"], folder: "Spring", maxHits: 50, expiresAt: "2099-01-02T03:04:00.000Z", utmSource: "news",
      serveOg: true, ogTitle: "Hello", webhookUrl: null,
      rules: [{ kind: "country", match: "US", url: "https://us.example.com" }, { kind: "device", match: "mobile", url: "https://m.example.com" }],
      abUrls: [{ url: "https://a.example.com", weight: 3 }, { url: "https://b.example.com", weight: 1 }],
    });
    const edit = await v.get("/dashboard/links/rows/edit");
    expect(edit.html).toContain('value="2099-01-02T03:04"');
    const saved = await v.post("/dashboard/links/rows/edit", {
      _csrf: csrfOf(edit.html), url: "https://example.com/new", status: "paused", tags: "a", folder: "", maxHits: "", expiresAt: "",
      rule_kind: ["country"], rule_match: [""], rule_url: [""], ab_url: [""], ab_weight: [""],
    });
    expect([saved.status, saved.headers.get("location")]).toEqual([303, "/dashboard/links/rows/stats?flash=updated"]);
    expect(await jsonOf(await cp.request("GET", "/api/v1/links/rows", { key }))).toMatchObject({
      target: "https://example.com/new", status: "paused", tags: ["a"], folder: null, maxHits: null, expiresAt: null, rules: [], abUrls: [], serveOg: false,
    });
    const taken = await v.submit("/dashboard/links/new", "/dashboard/links", { url: "https://example.com", slug: "rows" });
    expect([taken.status, taken.html.includes("is already taken")]).toEqual([409, true]);
  });

  test("saving the edit form unchanged changes nothing, also what the form cannot show exactly; a changed field alone is saved", async () => {
    const v = await signedIn("unchanged@example.com");
    const { key } = await cp.createKey("unchanged@example.com");
    const input = {
      url: "https://example.com/same?x=1", slug: "unchanged", expiresAt: "2031-01-01T00:00:45.500Z", startsAt: "2020-01-01T00:00:30Z",
      tags: ["a,b", "c"], folder: "F", maxHits: 9, ogTitle: "T", ogDescription: "line 1\nline 2", serveOg: true,
      rules: [{ kind: "country", match: "de", url: "https://example.de/" }], abUrls: [{ url: "https://a.example.com/", weight: 2.5 }],
      utmSource: "s", webhookUrl: "https://93.184.216.34/hook",
    };
    expect((await cp.request("POST", "/api/v1/links", { key, json: input })).status).toBe(201);
    const read = async () => jsonOf(await cp.request("GET", "/api/v1/links/unchanged", { key }));
    const before = await read();
    cp.clock.advance(1000);
    expect((await v.post("/dashboard/links/unchanged/edit", formFieldsOf((await v.get("/dashboard/links/unchanged/edit")).html))).status).toBe(303);
    expect({ ...(await read()), updatedAt: before.updatedAt }).toEqual(before);
    const fields = formFieldsOf((await v.get("/dashboard/links/unchanged/edit")).html);
    fields.folder = ["G"];
    expect((await v.post("/dashboard/links/unchanged/edit", fields)).status).toBe(303);
    expect({ ...(await read()), updatedAt: before.updatedAt }).toEqual({ ...before, folder: "G" });
  });

  test("the list shows 25 a page, pages with the API cursor, and filters by tag, folder, search and status", async () => {
    const v = await signedIn("pages@example.com");
    const { key } = await cp.createKey("pages@example.com");
    const rows = Array.from({ length: 30 }, (_, i) => ({ url: `https://example.com/${i}`, slug: `page-${i}`, tags: i % 2 ? "odd" : "even", folder: i < 5 ? "Few" : null }));
    expect((await jsonOf(await cp.request("POST", "/api/v1/bulk", { key, json: rows }))).created).toBe(30);
    const first = await v.get("/dashboard/links");
    const next = /href="(\/dashboard\/links\?cursor=[^"]+)">Next page/.exec(first.html)![1];
    const second = await v.get(next.replace(/&amp;/g, "&"));
    expect([rowsOf(first.html), rowsOf(second.html), second.html.includes("Next page")]).toEqual([25, 5, false]);
    expect(rowsOf((await v.get("/dashboard/links?tag=odd")).html)).toBe(15);
    expect(rowsOf((await v.get("/dashboard/links?folder=Few")).html)).toBe(5);
    expect(rowsOf((await v.get("/dashboard/links?q=page-17")).html)).toBe(1);
    const bogus = await v.get("/dashboard/links?status=bogus");
    expect([bogus.status, bogus.html.includes("must be active, paused or archived")]).toEqual([200, true]);
  });

  test("flash codes are looked up in their own table only (not \"constructor\")", async () => {
    const v = await signedIn("lookup@example.com");
    for (const code of ["constructor", "__proto__", "toString"]) {
      const page = await v.get(`/dashboard/links?flash=${code}`);
      expect([page.status, page.html.includes("native code"), page.html.includes('class="flash"')]).toEqual([200, false, false]);
    }
    for (const name of ["constructor", "__proto__", "toString"]) expect((await v.get(`/dashboard/static/${name}`)).status).toBe(404);
  });

  test("another account's link is a 404 page on every link page and action; the owner can delete it", async () => {
    const owner = await signedIn("owner@example.com");
    await owner.submit("/dashboard/links/new", "/dashboard/links", { url: "https://example.com/mine", slug: "mine-only" });
    const other = await signedIn("other@example.com");
    for (const path of ["/dashboard/links/mine-only/stats", "/dashboard/links/mine-only/edit", "/dashboard/links/mine-only/delete", "/dashboard/links/mine-only/qr.svg"]) {
      const page = await other.get(path);
      expect([page.status, page.html.includes("example.com/mine")]).toEqual([404, false]);
    }
    const csrf = csrfOf((await other.get("/dashboard/links")).html);
    expect((await other.post("/dashboard/links/mine-only/delete", { _csrf: csrf })).status).toBe(404);
    expect((await other.post("/dashboard/links/mine-only/edit", { _csrf: csrf, url: "https://attacker.example/" })).status).toBe(404);
    const qr = await owner.get("/dashboard/links/mine-only/qr.svg");
    expect([qr.headers.get("content-type")?.startsWith("image/svg+xml"), qr.html.startsWith("<svg")]).toEqual([true, true]);
    const deleted = await owner.submit("/dashboard/links/mine-only/delete", "/dashboard/links/mine-only/delete", {});
    expect([deleted.status, deleted.headers.get("location")]).toEqual([303, "/dashboard/links?flash=deleted"]);
    expect(await cp.deps.store.getLink(cp.deps.config.defaultDomain, "mine-only")).toBeNull();
  });

  test("an unknown dashboard path is a 404 page, not problem+json", async () => {
    const page = await (await signedIn("lost@example.com")).get("/dashboard/nowhere");
    expect([page.status, page.headers.get("content-type")]).toEqual([404, "text/html; charset=utf-8"]);
  });
});

describe("API keys", () => {
  test("a new key is shown once and works; the list shows its prefix only; revoking makes the API answer 401 at once", async () => {
    const v = await signedIn("keys@example.com");
    const posted = await v.submit("/dashboard/keys", "/dashboard/keys", { name: "laptop" });
    expect([posted.status, posted.headers.get("location")]).toEqual([303, "/dashboard/keys"]);
    const created = await v.get("/dashboard/keys");
    const key = /id="new-key"[^>]*value="(ck_[A-Za-z0-9]+)"/.exec(created.html)![1];
    expect(created.status).toBe(200);
    expect((await cp.request("GET", "/api/v1/links", { key })).status).toBe(200);
    const keys = await v.get("/dashboard/keys");
    expect([keys.html.includes(key), keys.html.includes(`${key.slice(0, 7)}…`)]).toEqual([false, true]);
    const action = /action="(\/dashboard\/keys\/[^"]+\/revoke)"/.exec(keys.html)![1];
    const revoked = await v.post(action, { _csrf: csrfOf(keys.html) });
    expect([revoked.status, revoked.headers.get("location")]).toEqual([303, "/dashboard/keys?flash=revoked"]);
    expect((await cp.request("GET", "/api/v1/links", { key })).status).toBe(401);
    expect((await v.get("/dashboard/keys")).html).toContain("status-revoked");
  });

  test("a key name that is empty or over 80 characters answers 400 with the message", async () => {
    const v = await signedIn("key-names@example.com");
    for (const name of ["   ", "n".repeat(81)]) {
      const res = await v.submit("/dashboard/keys", "/dashboard/keys", { name });
      expect([res.status, res.html.includes("must be 1-80 characters"), res.html.includes('id="new-key"')]).toEqual([400, true, false]);
    }
  });

  test("another account's key cannot be revoked: 404 page, the key keeps working", async () => {
    const { key, caller } = await cp.createKey("victim@example.com");
    const v = await signedIn("attacker@example.com");
    const csrf = csrfOf((await v.get("/dashboard/keys")).html);
    expect((await v.post(`/dashboard/keys/${caller.keyId}/revoke`, { _csrf: csrf })).status).toBe(404);
    expect((await cp.request("GET", "/api/v1/links", { key })).status).toBe(200);
  });
});

describe("with SIGNUP=closed", () => {
  test("the sign-up page says sign-up is closed, a posted sign-up answers 403 and creates no account", async () => {
    const closed = await startControlPlane({ env: { SIGNUP: "closed" } });
    try {
      const v = visitor(closed);
      const page = await v.get("/dashboard/signup");
      expect([page.status, page.html.includes("Sign-up is closed"), page.html.includes('action="/dashboard/signup"')]).toEqual([200, true, false]);
      const signin = await v.get("/dashboard/signin");
      expect(signin.html).not.toContain('href="/dashboard/signup"');
      const res = await v.post("/dashboard/signup", { _csrf: csrfOf(signin.html), email: "new@example.com", password: "password-1234" });
      expect([res.status, v.cookies.has("clink_session")]).toEqual([403, false]);
      expect(await closed.deps.store.getAccountByEmail("new@example.com")).toBeNull();
    } finally {
      await closed.close();
    }
  });
});

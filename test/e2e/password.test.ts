/**
 * Password links (design §4 step 4) over real HTTP: the 401 form, the POST flow and its unlock cookie, the per-client,
 * per-slug attempt limit (checked before the password), Argon2id storage, and that neither the password nor the
 * destination leaks: not to crawlers, not to HEAD, not in any response, not in the server's output.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { api, createKey, startServer, type ApiClient, type ApiResponse, type TestServer } from "../helpers/server.ts";

const PASSWORD = "correct horse battery staple";
const WRONG = "wrong-guess-4711";
const IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
const DESKTOP = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";
const CRAWLER = "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)";

let server: TestServer;
let owner: ApiClient;
/** Every status line, header and body any request in this file received, searched for the password at the end. */
let transcript = "";

beforeAll(async () => {
  // TRUSTED_PROXIES lets X-Forwarded-For stand for distinct visitors; debug logging is the strictest leak check.
  server = await startServer({ env: { TRUSTED_PROXIES: "127.0.0.1", RATE_LIMIT_PER_MINUTE: "100000", LOG_LEVEL: "debug" } });
  owner = api(server, await createKey(server, "pw-owner@example.com"));
});
afterAll(() => server?.stop());

function record(res: ApiResponse): ApiResponse {
  transcript += `\n${res.status}\n`;
  res.headers.forEach((value, name) => (transcript += `${name}: ${value}\n`));
  transcript += typeof res.body === "string" ? res.body : JSON.stringify(res.body);
  return res;
}

let slugSeq = 0;
async function createLink(body: Record<string, unknown>): Promise<string> {
  const res = record(await owner.post("/api/v1/links", { slug: `pw-${++slugSeq}-${Date.now().toString(36)}`, password: PASSWORD, ...body }));
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.slug;
}

let clientSeq = 0;
/** A fresh visitor address, so each test has its own attempt budget. */
const newClient = () => `198.51.100.${++clientSeq}`;

async function visit(slug: string, opts: { client: string; method?: string; ua?: string; cookie?: string; query?: string }) {
  const headers: Record<string, string> = { "user-agent": opts.ua ?? DESKTOP, "x-forwarded-for": opts.client };
  if (opts.cookie) headers.cookie = opts.cookie;
  return record(await api(server).raw(`/${slug}${opts.query ?? ""}`, { method: opts.method ?? "GET", headers }));
}

async function submit(slug: string, password: string, opts: { client: string; ua?: string }) {
  return record(
    await api(server).raw(`/${slug}`, {
      method: "POST",
      headers: { "user-agent": opts.ua ?? DESKTOP, "x-forwarded-for": opts.client },
      body: new URLSearchParams({ password }),
    }),
  );
}

/** The `name=value` part of a Set-Cookie header. */
const cookiePair = (setCookie: string) => setCookie.split(";")[0];

function expectForm(res: ApiResponse, slug: string) {
  expect(res.status).toBe(401);
  expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
  expect(res.headers.get("location")).toBeNull();
  expect(res.headers.get("cache-control")).toBe("no-store");
  expect(res.headers.get("content-security-policy")).toContain("form-action 'self'");
  expect(res.body).toContain(`<form method="post" action="/${slug}">`);
  expect(res.body).toContain(`<input type="password" name="password"`);
}

/** Nothing in the response names any of these destinations. */
function expectNoDestination(res: ApiResponse, destinations: string[]) {
  let everything = typeof res.body === "string" ? res.body : JSON.stringify(res.body ?? "");
  res.headers.forEach((value, name) => (everything += `\n${name}: ${value}`));
  for (const d of destinations) expect(everything).not.toContain(new URL(d).hostname);
}

/** A fixed-window attempt limit restarts on the minute; keep a test's attempts inside one window. */
async function awayFromMinuteBoundary() {
  const into = Date.now() % 60_000;
  if (into > 56_000) await Bun.sleep(60_000 - into + 50);
}

describe("the form and the POST flow", () => {
  test("GET → 401 HTML form that posts to the link itself; the destination is nowhere in it", async () => {
    const slug = await createLink({ url: "https://hidden.example.com/doc" });
    const res = await visit(slug, { client: newClient() });
    expectForm(res, slug);
    expectNoDestination(res, ["https://hidden.example.com/"]);
    expect(res.body).not.toContain("Wrong password");
  });

  test("wrong password → 401 form again; right password → 302 with UTM and a short-lived HttpOnly cookie", async () => {
    const slug = await createLink({ url: "https://hidden.example.com/doc?x=1", utmSource: "pw" });
    const client = newClient();
    const wrong = await submit(slug, WRONG, { client });
    expectForm(wrong, slug);
    expect(wrong.body).toContain("Wrong password");
    expect(wrong.headers.get("set-cookie")).toBeNull();
    expectNoDestination(wrong, ["https://hidden.example.com/"]);

    const right = await submit(slug, PASSWORD, { client });
    expect(right.status).toBe(302);
    expect(right.headers.get("location")).toBe("https://hidden.example.com/doc?x=1&utm_source=pw");
    expect(right.headers.get("cache-control")).toBe("private, max-age=0");
    const setCookie = right.headers.get("set-cookie")!;
    expect(setCookie).toMatch(/^clink_unlock=\d+\.[A-Za-z0-9_-]+; /);
    expect(setCookie).toContain("HttpOnly");
    expect(setCookie).toContain("SameSite=Lax");
    expect(setCookie).toContain(`Path=/${slug}`);
    const maxAge = Number(/Max-Age=(\d+)/.exec(setCookie)?.[1]);
    expect(maxAge).toBeGreaterThan(0);
    expect(maxAge).toBeLessThanOrEqual(24 * 3600);
    expect(setCookie).not.toContain("argon2");
  });

  test("the cookie then lets GET and HEAD through without the password", async () => {
    const slug = await createLink({ url: "https://hidden.example.com/again" });
    const client = newClient();
    const cookie = cookiePair((await submit(slug, PASSWORD, { client })).headers.get("set-cookie")!);
    const get = await visit(slug, { client, cookie });
    expect(get.status).toBe(302);
    expect(get.headers.get("location")).toBe("https://hidden.example.com/again");
    expect(get.headers.get("set-cookie")).toBeNull();
    const head = await visit(slug, { client, cookie, method: "HEAD" });
    expect(head.status).toBe(302);
    // Cookies are per browser, not per address: another address with the cookie is let through too.
    expect((await visit(slug, { client: newClient(), cookie })).status).toBe(302);
  });

  test("the unlock cookie is bound to its link and password and cannot be forged", async () => {
    const a = await createLink({ url: "https://hidden.example.com/a" });
    const b = await createLink({ url: "https://hidden.example.com/b" });
    const client = newClient();
    const cookie = cookiePair((await submit(a, PASSWORD, { client })).headers.get("set-cookie")!);
    const [name, token] = cookie.split("=");
    const [expires, mac] = token.split(".");
    expectForm(await visit(b, { client, cookie }), b);
    expectForm(await visit(a, { client, cookie: `${name}=${Number(expires) + 86400}.${mac}` }), a);
    expectForm(await visit(a, { client, cookie: `${name}=${expires}.${mac.slice(0, -2)}AA` }), a);
    expectForm(await visit(a, { client, cookie: `${name}=${expires}` }), a);
    expectForm(await visit(a, { client, cookie: `${name}=garbage` }), a);
    expectForm(await visit(a, { client, cookie: `x${name}=${token}` }), a); // only the cookie of that exact name
    expect((await visit(a, { client, cookie: `other=1; ${name}=${token}` })).status).toBe(302);
    expect((await visit(a, { client, cookie })).status).toBe(302);
    // A new password invalidates every cookie issued for the old one.
    expect(record(await owner.patch(`/api/v1/links/${a}`, { password: `${PASSWORD} v2` })).status).toBe(200);
    expectForm(await visit(a, { client, cookie }), a);
  });

  test("the password is accepted only in the POST form body", async () => {
    const slug = await createLink({ url: "https://hidden.example.com/body-only" });
    const client = newClient();
    expectForm(await visit(slug, { client, query: `?password=${encodeURIComponent(PASSWORD)}` }), slug);
    const json = record(
      await api(server).raw(`/${slug}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": client, "user-agent": DESKTOP },
        body: JSON.stringify({ password: PASSWORD }),
      }),
    );
    expectForm(json, slug);
    const inQuery = record(
      await api(server).raw(`/${slug}?password=${encodeURIComponent(PASSWORD)}`, {
        method: "POST",
        headers: { "x-forwarded-for": client, "user-agent": DESKTOP },
        body: new URLSearchParams({ other: "x" }),
      }),
    );
    expectForm(inQuery, slug);
    expect((await submit(slug, PASSWORD, { client })).status).toBe(302);
  });

  test("the form may be multipart; a body over 16 KiB is not read but answered 413 payload_too_large, chunked (no Content-Length) or not", async () => {
    const slug = await createLink({ url: "https://hidden.example.com/forms" });
    const multipart = new FormData();
    multipart.set("password", PASSWORD);
    const post = (client: string, body: BodyInit) =>
      api(server).raw(`/${slug}`, { method: "POST", headers: { "x-forwarded-for": client, "user-agent": DESKTOP }, body }).then(record);
    expect((await post(newClient(), multipart)).status).toBe(302);
    const big = `password=${encodeURIComponent(PASSWORD)}&pad=${"x".repeat(20_000)}`;
    const declared = await post(newClient(), new URLSearchParams(big)); // a form, with Content-Length
    expect([declared.status, declared.headers.get("content-type"), declared.body.code]).toEqual([413, "application/problem+json", "payload_too_large"]);
    const chunked = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 4; i++) c.enqueue(new TextEncoder().encode(i === 0 ? big.slice(0, 5_000) : big.slice(i * 5_000, (i + 1) * 5_000)));
        c.enqueue(new TextEncoder().encode(big.slice(20_000)));
        c.close();
      },
    });
    const res = await fetch(`${server.url}/${slug}`, {
      method: "POST", body: chunked, redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": newClient(), "user-agent": DESKTOP },
    });
    expect([res.status, res.headers.get("content-type"), (await res.json()).code]).toEqual([413, "application/problem+json", "payload_too_large"]);
  });

  test("removing the password makes the link a plain redirect", async () => {
    const slug = await createLink({ url: "https://hidden.example.com/open" });
    expect((await visit(slug, { client: newClient() })).status).toBe(401);
    expect(record(await owner.patch(`/api/v1/links/${slug}`, { password: null })).body.hasPassword).toBe(false);
    const res = await visit(slug, { client: newClient() });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("https://hidden.example.com/open");
  });
});

describe("attempt limit", () => {
  test("5 attempts per minute per client and slug; the 6th is 429 with Retry-After, even with the right password", async () => {
    await awayFromMinuteBoundary();
    const slug = await createLink({ url: "https://hidden.example.com/limited" });
    const other = await createLink({ url: "https://hidden.example.com/other" });
    const client = newClient();
    for (let i = 0; i < 5; i++) expect((await submit(slug, `${WRONG}-${i}`, { client })).status).toBe(401);
    const blocked = await submit(slug, PASSWORD, { client });
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get("location")).toBeNull();
    expect(blocked.headers.get("set-cookie")).toBeNull();
    const retryAfter = Number(blocked.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expectNoDestination(blocked, ["https://hidden.example.com/"]);
    // Viewing the form is not an attempt, and stays available.
    expectForm(await visit(slug, { client }), slug);
    // The budget is per client and per slug.
    expect((await submit(other, PASSWORD, { client })).status).toBe(302);
    expect((await submit(slug, PASSWORD, { client: newClient() })).status).toBe(302);
  });

  test("an IPv6 visitor is counted by its /64: rotating addresses inside it gets no fresh budget", async () => {
    await awayFromMinuteBoundary();
    const slug = await createLink({ url: "https://hidden.example.com/v6" });
    for (let i = 1; i <= 5; i++) expect((await submit(slug, `${WRONG}-${i}`, { client: `2001:db8:5:6::${i.toString(16)}` })).status).toBe(401);
    expect((await submit(slug, PASSWORD, { client: "2001:db8:5:6:ffff::99" })).status).toBe(429);
    expect((await submit(slug, PASSWORD, { client: "2001:db8:5:7::1" })).status).toBe(302); // the next /64 is another visitor
  });

  test("correct attempts count too: a sixth POST within the minute is refused", async () => {
    await awayFromMinuteBoundary();
    const slug = await createLink({ url: "https://hidden.example.com/count-all" });
    const client = newClient();
    for (let i = 0; i < 5; i++) expect((await submit(slug, PASSWORD, { client })).status).toBe(302);
    expect((await submit(slug, PASSWORD, { client })).status).toBe(429);
  });

  test("concurrent guesses cannot slip past the limit", async () => {
    await awayFromMinuteBoundary();
    const slug = await createLink({ url: "https://hidden.example.com/burst" });
    const client = newClient();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => submit(slug, `${WRONG}-${i}`, { client })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
  });
});

describe("crawlers, HEAD, counting and combinations", () => {
  test("crawlers and HEAD see the lock and no destination, and consume no hit; the unlocked click is the one counted", async () => {
    const destinations = ["https://hidden-target.example.com/x", "https://hidden-rule.example.com/", "https://hidden-ab.example.com/"];
    const slug = await createLink({
      url: destinations[0],
      maxHits: 1,
      serveOg: true,
      ogTitle: "Card",
      rules: [{ kind: "device", match: "desktop", url: destinations[1] }],
      abUrls: [{ url: destinations[2], weight: 1 }],
    });
    const client = newClient();
    for (let i = 0; i < 3; i++) {
      for (const res of [
        await visit(slug, { client, method: "HEAD" }),
        await visit(slug, { client, ua: CRAWLER }),
        await visit(slug, { client, ua: CRAWLER, method: "HEAD" }),
        await visit(slug, { client }),
      ]) {
        expect(res.status).toBe(401);
        expectNoDestination(res, destinations);
      }
    }
    expect((await submit(slug, WRONG, { client })).status).toBe(401);
    const unlocked = await submit(slug, PASSWORD, { client, ua: IPHONE });
    expect(unlocked.status).toBe(302);
    expect(unlocked.headers.get("location")).toBe(destinations[2]); // iPhone: no desktop rule, so the A/B pick
    // The limit is reached: 410 for everyone, before any password is asked for.
    expect((await submit(slug, PASSWORD, { client })).status).toBe(410);
    expect((await visit(slug, { client: newClient() })).status).toBe(410);
    expect((await visit(slug, { client: newClient(), ua: CRAWLER })).status).toBe(410);
    for (let i = 0; i < 200; i++) {
      if (record(await owner.get(`/api/v1/links/${slug}`)).body.hits >= 1) break;
      await Bun.sleep(25);
    }
    await Bun.sleep(250);
    const stats = record(await owner.get(`/api/v1/links/${slug}/stats`)).body;
    expect(stats.totalClicks).toBe(1);
    expect(stats.byDevice).toEqual({ mobile: 1 });
    expect(record(await owner.get(`/api/v1/links/${slug}`)).body.hits).toBe(1);
  });

  test("after unlocking, rules apply with UTM", async () => {
    const slug = await createLink({
      url: "https://hidden.example.com/t",
      utmCampaign: "locked",
      rules: [{ kind: "device", match: "ios", url: "https://apps.example.com/app" }],
    });
    const res = await submit(slug, PASSWORD, { client: newClient(), ua: IPHONE });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("https://apps.example.com/app?utm_campaign=locked");
  });

  test("expired, archived, paused and not-yet-started links answer their status to the form POST too, never a redirect", async () => {
    const cases: [Record<string, unknown>, number][] = [
      [{ expiresAt: new Date(Date.now() - 1000).toISOString() }, 410],
      [{ status: "archived" }, 410],
      [{ status: "paused" }, 404],
      [{ startsAt: new Date(Date.now() + 3_600_000).toISOString() }, 425],
    ];
    for (const [fields, status] of cases) {
      const slug = await createLink({ url: "https://hidden.example.com/state", ...fields });
      const client = newClient();
      const get = await visit(slug, { client });
      expect(get.status).toBe(status);
      expect(get.body).not.toContain("<form");
      const post = await submit(slug, PASSWORD, { client });
      expect(post.status).toBe(status);
      expect(post.headers.get("location")).toBeNull();
      expect(post.headers.get("set-cookie")).toBeNull();
    }
  });
});

describe("the password itself", () => {
  test("is stored as an Argon2id hash", async () => {
    const slug = await createLink({ url: "https://hidden.example.com/hash" });
    const db = new Database(join(server.dataDir, "clink.sqlite"), { readonly: true });
    try {
      const row = db.query<{ password_hash: string }, [string]>("SELECT password_hash FROM links WHERE slug = ?").get(slug);
      expect(row?.password_hash).toStartWith("$argon2id$");
      expect(row?.password_hash).not.toContain(PASSWORD);
      expect(await Bun.password.verify(PASSWORD, row!.password_hash)).toBe(true);
    } finally {
      db.close();
    }
  });

  test("never appears in any response (body or header) of this file, nor in the server's stdout/stderr", async () => {
    // Runs last: the transcript holds every response above, including links' API objects and the wrong guesses.
    expect(transcript.length).toBeGreaterThan(10_000);
    for (const secret of [PASSWORD, encodeURIComponent(PASSWORD), WRONG, "$argon2"]) {
      expect(transcript).not.toContain(secret);
      expect(server.stdout).not.toContain(secret);
      expect(server.stderr).not.toContain(secret);
    }
  });
});

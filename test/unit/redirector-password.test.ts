/**
 * Password links through the redirector's fetch handler, in process: the 401 form, the form POST (right, wrong,
 * rate-limited), the unlock cookie, and the maxHits step of an unlocked click.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectPage, expectRedirect, startRedirector, type RedirectorHarness } from "./redirector-harness.ts";

const PASSWORD = "open sesame";
let h: RedirectorHarness;
let ipSeq = 0;
/** A fresh client address, so each test has its own attempt budget. */
const newClient = () => `198.51.100.${++ipSeq}`;

beforeAll(async () => {
  h = await startRedirector();
});
afterAll(() => h?.close());

function submit(slug: string, password: string, ip: string) {
  return h.visit(slug, {
    method: "POST",
    ip,
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ password }).toString(),
  });
}

async function clickCount(slug: string): Promise<number> {
  const id = (await h.cp.deps.store.getLink(h.cp.deps.config.defaultDomain, slug))!.id;
  return (await h.clicks()).filter((c) => c.linkId === id).length;
}

describe("the form", () => {
  test("GET and HEAD get the 401 form, with no destination anywhere, and are not clicks", async () => {
    const slug = await h.createLink({ url: "https://hidden.example.com/secret", password: PASSWORD });
    for (const method of ["GET", "HEAD"]) {
      const res = await h.visit(slug, { method });
      expectPage(res, 401);
      const body = await res.text();
      expect(body).not.toContain("hidden.example.com");
      if (method === "GET") expect(body).toContain(`<form method="post" action="/${slug}">`);
    }
    expect(await clickCount(slug)).toBe(0);
  });
});

describe("the form POST", () => {
  test("the right password: 302 to the destination with the unlock cookie, one click; the cookie then spares the form", async () => {
    const slug = await h.createLink({ url: "https://hidden.example.com/ok", password: PASSWORD, utmSource: "pw" });
    const res = await submit(slug, PASSWORD, newClient());
    expectRedirect(res, "https://hidden.example.com/ok?utm_source=pw");
    const cookie = res.headers.get("set-cookie")!;
    expect(cookie).toStartWith("clink_unlock=");
    expect(cookie).toContain(`Path=/${slug}`);
    expect(cookie).toContain("HttpOnly");
    expect(await clickCount(slug)).toBe(1);

    const again = await h.visit(slug, { headers: { cookie: cookie.split(";")[0]! } });
    expectRedirect(again, "https://hidden.example.com/ok?utm_source=pw");
    expect(again.headers.get("set-cookie")).toBeNull();
    expect(await clickCount(slug)).toBe(2);
  });

  test("a wrong or missing password: the form again with a message, 401, no click", async () => {
    const slug = await h.createLink({ url: "https://hidden.example.com/wrong", password: PASSWORD });
    const client = newClient();
    for (const res of [await submit(slug, "not it", client), await submit(slug, "", client)]) {
      expectPage(res, 401);
      const body = await res.text();
      expect(body).toContain("Wrong password");
      expect(body).not.toContain("hidden.example.com");
      expect(res.headers.get("set-cookie")).toBeNull();
    }
    expect(await clickCount(slug)).toBe(0);
  });

  test("the sixth attempt of a client within a minute is 429, the right password too; another client is not affected", async () => {
    const slug = await h.createLink({ url: "https://hidden.example.com/limited", password: PASSWORD });
    const client = newClient();
    for (let i = 0; i < 5; i++) expect((await submit(slug, `guess-${i}`, client)).status).toBe(401);
    const refused = await submit(slug, PASSWORD, client);
    expectPage(refused, 429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await clickCount(slug)).toBe(0);
    expectRedirect(await submit(slug, PASSWORD, newClient()), "https://hidden.example.com/limited");
    // The window is the test clock's: a minute later the client may try again.
    h.cp.clock.advance(61_000);
    expectRedirect(await submit(slug, PASSWORD, client), "https://hidden.example.com/limited");
  });

  test("an expired password link answers 410 to the POST, without checking the password or spending an attempt", async () => {
    const at = h.cp.clock.now() + 60_000;
    const slug = await h.createLink({ url: "https://hidden.example.com/exp", password: PASSWORD, expiresAt: new Date(at).toISOString() });
    h.cp.clock.set(at);
    const client = newClient();
    for (let i = 0; i < 6; i++) {
      const res = await submit(slug, PASSWORD, client);
      expectPage(res, 410);
      expect(res.headers.get("set-cookie")).toBeNull();
    }
  });

  test("an unlocked click takes a hit: with maxHits 1 the second right password is 410 and not counted", async () => {
    const slug = await h.createLink({ url: "https://hidden.example.com/once", password: PASSWORD, maxHits: 1 });
    expectRedirect(await submit(slug, PASSWORD, newClient()), "https://hidden.example.com/once");
    const second = await submit(slug, PASSWORD, newClient());
    expectPage(second, 410);
    expect(second.headers.get("set-cookie")).toBeNull();
    expect(await clickCount(slug)).toBe(1);
    // The form itself now answers 410 too.
    expectPage(await h.visit(slug), 410);
  });
});

/**
 * expiredUrl: a gone link (archived, expired or at its click limit) that names one sends its visitors there with a
 * 302 instead of the 410 page. Such a redirect is not a click: not counted, no hit taken, no webhook. Paused links
 * stay 404 and links not yet started 425. Most tests put compiled links, made from links the API created, where
 * the redirector reads them, so they hold whatever the API does with the field; one sets it through the API.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { CompiledLink } from "../../shared/link.ts";
import { compiledOf, expectPage, expectRedirect, startRedirector, UA, type RedirectorHarness } from "./redirector-harness.ts";
import { ledgerFrom } from "../helpers/hit-ledger.ts";

const OUT = "https://example.com/campaign-over";
const HOOK = "https://93.184.216.34/hook";
let h: RedirectorHarness;
beforeAll(async () => {
  h = await startRedirector();
});
afterAll(() => h?.close());

/** Creates a link through the API, then gives its compiled form `change` (an expiredUrl by default). */
async function linkWith(fields: Record<string, unknown>, change: Partial<CompiledLink> = { expiredUrl: OUT }): Promise<CompiledLink> {
  const link = { ...(await compiledOf(h, await h.createLink({ webhookUrl: HOOK, ...fields }))), ...change };
  await h.putCompiled(link);
  return link;
}

/** Clicks, webhooks and the hit counter of a link: what a click would change. */
async function traces(link: CompiledLink) {
  const clicks = (await h.clicks()).filter((c) => c.linkId === link.id).length;
  const webhooks = h.webhooks.filter((w) => (w.payload as { slug: string }).slug === link.slug).length;
  return { clicks, webhooks, counter: await h.cp.deps.hot.peekHits(link.id) };
}

describe("a gone link with an expiredUrl redirects there, and it is not a click", () => {
  test("archived: GET and HEAD get the 302 with Cache-Control private, max-age=0", async () => {
    const link = await linkWith({ url: "https://example.com/old", status: "archived" });
    expectRedirect(await h.visit(link.slug), OUT);
    expectRedirect(await h.visit(link.slug, { method: "HEAD" }), OUT);
    expect(await traces(link)).toEqual({ clicks: 0, webhooks: 0, counter: null });
  });

  test("expired: the destination until the expiry, expiredUrl from then on", async () => {
    const at = h.cp.clock.now() + 60_000;
    const link = await linkWith({ url: "https://example.com/sale", expiresAt: new Date(at).toISOString() });
    expectRedirect(await h.visit(link.slug), "https://example.com/sale");
    h.cp.clock.set(at);
    expectRedirect(await h.visit(link.slug), OUT);
    expectRedirect(await h.visit(link.slug, { method: "HEAD" }), OUT);
    expect(await traces(link)).toEqual({ clicks: 1, webhooks: 1, counter: null });
  });

  test("click limit: maxHits clicks reach the destination, then expiredUrl; the counter stays at maxHits", async () => {
    const link = await linkWith({ url: "https://example.com/limited", maxHits: 2 });
    expectRedirect(await h.visit(link.slug), "https://example.com/limited");
    expectRedirect(await h.visit(link.slug), "https://example.com/limited");
    expectRedirect(await h.visit(link.slug), OUT);
    expectRedirect(await h.visit(link.slug), OUT);
    expectRedirect(await h.visit(link.slug, { method: "HEAD" }), OUT);
    expect(await traces(link)).toEqual({ clicks: 2, webhooks: 2, counter: 2 });
  });

  test("click limit reached elsewhere: the take that fails answers expiredUrl, and so does HEAD", async () => {
    const link = await linkWith({ url: "https://example.com/elsewhere", maxHits: 1, serveOg: true });
    await h.cp.deps.hot.takeHit(link.id, 1, ledgerFrom(0));
    expectRedirect(await h.visit(link.slug, { method: "HEAD" }), OUT);
    expectRedirect(await h.visit(link.slug, { headers: { "user-agent": UA.facebook } }), OUT);
    expectRedirect(await h.visit(link.slug), OUT);
    expect(await traces(link)).toEqual({ clicks: 0, webhooks: 0, counter: 1 });
  });

  test("a gone password link shows no form: GET and the form POST both get expiredUrl, with no unlock cookie", async () => {
    const link = await linkWith({ url: "https://hidden.example.com/", password: "pw-expired-url", status: "archived" });
    expectRedirect(await h.visit(link.slug), OUT);
    const post = await h.visit(link.slug, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "password=pw-expired-url",
    });
    expectRedirect(post, OUT);
    expect(post.headers.get("set-cookie")).toBeNull();
    expect(await traces(link)).toEqual({ clicks: 0, webhooks: 0, counter: null });
  });
});

test("an expiredUrl set through the API reaches the redirector", async () => {
  const slug = await h.createLink({ url: "https://example.com/api-set", status: "archived", expiredUrl: OUT });
  expectRedirect(await h.visit(slug), OUT);
});

describe("what expiredUrl does not change", () => {
  test("a paused link stays 404", async () => {
    const link = await linkWith({ url: "https://example.com/paused", status: "paused" });
    expectPage(await h.visit(link.slug), 404);
  });

  test("a link not yet started stays 425", async () => {
    const link = await linkWith({ url: "https://example.com/later", startsAt: new Date(h.cp.clock.now() + 60_000).toISOString() });
    expectPage(await h.visit(link.slug), 425);
  });

  test("a live link redirects to its destination as a counted click", async () => {
    const link = await linkWith({ url: "https://example.com/live", maxHits: 5 });
    expectRedirect(await h.visit(link.slug), "https://example.com/live");
    expect(await traces(link)).toEqual({ clicks: 1, webhooks: 1, counter: 1 });
  });

  test("a link compiled by a version without expiredUrl (the field absent) answers its 410", async () => {
    const link = await linkWith({ url: "https://example.com/older", status: "archived" }, {});
    delete (link as Partial<CompiledLink>).expiredUrl;
    await h.putCompiled(link);
    expectPage(await h.visit(link.slug), 410);
  });
});

/**
 * The dashboard with one slug on the base domain and on two custom domains (issue #24), in process: a person
 * follows the links list's links for the custom domain's row (stats, edit, delete, QR, the range links and the CSV
 * download of its stats page) and ticks its box for a bulk change, and each acts on that domain's link only, never
 * the base domain's link with the same slug (which the slug alone names).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DIMENSION_NAMES, type ClickDims } from "../../shared/clicks/dimensions.ts";
import { qrAddress, qrSvg } from "../../control/links/qr.ts";
import { csrfOf, formFieldsOf, signedInVisitor, type Visitor } from "../helpers/dashboard-visitor.ts";
import { pauseLinkWebhook } from "../../shared/webhooks/pause-link.ts";
import { putDomain } from "../helpers/domains.ts";
import { BASE_URL, jsonOf, passwordOf, startControlPlane, type InProcessControlPlane, type TestKey } from "../helpers/in-process.ts";

const EMAIL = "dash-twins@example.com";
const GO = "go.dash-twins.example";
const SHOP = "shop.dash-twins.example";
const DOMAINS = ["clink.test", GO, SHOP];
let cp: InProcessControlPlane;
let owner: TestKey;
let v: Visitor;

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000", WEBHOOK_ALLOW_PRIVATE: "true" } });
  owner = await cp.createKey(EMAIL);
  await putDomain(cp, owner.caller.workspaceId, GO);
  await putDomain(cp, owner.caller.workspaceId, SHOP);
  v = await signedInVisitor(cp, BASE_URL, EMAIL, passwordOf(EMAIL));
});
afterAll(() => cp.close());

/** The same slug on the three domains, each to its own destination (https://example.com/<domain>). */
async function twins(prefix: string, fields: Record<string, unknown> = {}): Promise<string> {
  const slug = `${prefix}-${crypto.randomUUID().slice(0, 6)}`;
  for (const domain of DOMAINS) {
    const res = await cp.request("POST", "/api/v1/links", { key: owner.key, json: { url: `https://example.com/${domain}`, slug, domain, ...fields } });
    expect(res.status).toBe(201);
  }
  return slug;
}
/** The slug's link on each domain, as the API reads it (null once deleted). */
const each = (slug: string) => Promise.all(DOMAINS.map(async (d) => {
  const res = await cp.request("GET", `/api/v1/links/${slug}?domain=${d}`, { key: owner.key });
  return res.status === 200 ? jsonOf(res) : null;
}));

const unescape = (s: string) => s.replaceAll("&amp;", "&");
/** The hrefs (and form actions) of the list's row for the link at this short address. */
async function rowOf(slug: string, shortUrl: string): Promise<{ html: string; hrefs: string[] }> {
  const list = await v.get(`/dashboard/links?q=${slug}`);
  const row = list.html.split("<tr>").find((r) => r.includes(`data-copy="${shortUrl}"`));
  expect(row).toBeDefined();
  return { html: list.html, hrefs: [...row!.matchAll(/href="([^"]+)"/g)].map((m) => unescape(m[1]!)) };
}
const hrefTo = (hrefs: string[], page: string) => hrefs.find((h) => h.split("?")[0]!.endsWith(`/${page}`))!;
const actionOf = (html: string, path: string) => unescape(new RegExp(`<form method="post" action="(${path}[^"]*)"`).exec(html)![1]!);

describe("a custom domain's link, from its row of the links list", () => {
  test("the row names its domain; stats, edit and delete links carry ?domain=, the base domain's row does not", async () => {
    const slug = await twins("rows");
    const go = await rowOf(slug, `https://${GO}/${slug}`);
    for (const page of ["stats", "edit", "delete"]) expect(hrefTo(go.hrefs, page)).toBe(`/dashboard/links/${slug}/${page}?domain=${GO}`);
    expect(go.html).toContain(`<input type="checkbox" name="slug" value="${GO}/${slug}"`);
    const base = await rowOf(slug, `http://clink.test/${slug}`);
    expect(hrefTo(base.hrefs, "stats")).toBe(`/dashboard/links/${slug}/stats`);
    expect(base.html).toContain(`<input type="checkbox" name="slug" value="${slug}"`);
  });

  test("stats: that link's address, clicks and QR; its range links and CSV download keep the domain", async () => {
    const slug = await twins("stats");
    const id = (await cp.deps.store.getLink(GO, slug))!.id;
    const dims = Object.fromEntries(DIMENSION_NAMES.map((n) => [n, null])) as ClickDims;
    const now = cp.clock.now();
    await cp.deps.store.recordClicks([1, 2].map((i) => ({ batch: `dash-twin-${i}`, linkId: id, ts: now - i * 60_000, dims, bot: false, firstVisit: true, referrerUrl: null })));
    const page = await v.get(hrefTo((await rowOf(slug, `https://${GO}/${slug}`)).hrefs, "stats"));
    expect(page.status).toBe(200);
    expect(page.html).toContain(`data-copy="https://${GO}/${slug}"`);
    expect(page.html).toMatch(/id="total-clicks">2</);
    const hrefs = [...page.html.matchAll(/href="([^"]+)"/g)].map((m) => unescape(m[1]!)).filter((h) => h.startsWith(`/dashboard/links/${slug}/`));
    expect(hrefs.length).toBeGreaterThan(5);
    for (const h of hrefs) expect([h, new URL(h, BASE_URL).searchParams.get("domain")]).toEqual([h, GO]);
    const week = await v.get(hrefs.find((h) => h.includes("range=7d"))!);
    expect(week.html).toContain(`data-copy="https://${GO}/${slug}"`);
    const csv = await v.get(hrefTo(hrefs, "clicks.csv"));
    expect([csv.status, csv.html.trim().split("\n").length]).toEqual([200, 3]); // the header and GO's two clicks
    const qr = await v.get(hrefTo(hrefs, "qr.svg"));
    expect(qr.html).toBe(await qrSvg(qrAddress(`https://${GO}/${slug}`)));
    // The custom-range form carries it as a hidden field.
    expect(page.html).toContain(`<input type="hidden" name="domain" value="${GO}">`);
    // The overview's top links name it with its domain and open its page.
    const overview = unescape((await v.get("/dashboard/analytics")).html);
    expect(overview).toContain(`href="/dashboard/links/${slug}/stats?domain=${GO}"`);
    expect(overview).toContain(`>${GO}/${slug}<`);
  });

  test("edit: the form posts to that link and comes back to its page; only it changes", async () => {
    const slug = await twins("edit");
    const form = await v.get(hrefTo((await rowOf(slug, `https://${GO}/${slug}`)).hrefs, "edit"));
    expect(form.html).toContain(`on ${GO}`);
    expect(form.html).toContain(`value="https://example.com/${GO}"`);
    const action = actionOf(form.html, `/dashboard/links/${slug}/edit`);
    expect(action).toBe(`/dashboard/links/${slug}/edit?domain=${GO}`);
    const saved = await v.post(action, { ...formFieldsOf(form.html), folder: "go-folder" });
    expect([saved.status, saved.headers.get("location")]).toEqual([303, `/dashboard/links/${slug}/stats?domain=${GO}&flash=updated`]);
    expect((await each(slug)).map((l) => l.folder)).toEqual([null, "go-folder", null]);
  });

  test("delete: the confirmation names that short address and deletes that link only", async () => {
    const slug = await twins("delete");
    const page = await v.get(hrefTo((await rowOf(slug, `https://${SHOP}/${slug}`)).hrefs, "delete"));
    expect(page.html).toContain(`https://${SHOP}/${slug}`);
    const gone = await v.post(actionOf(page.html, `/dashboard/links/${slug}/delete`), formFieldsOf(page.html));
    expect(gone.status).toBe(303);
    expect((await each(slug)).map((l) => l?.target ?? null)).toEqual(["https://example.com/clink.test", `https://example.com/${GO}`, null]);
  });

  test("resume webhook: the stats page's button resumes that link's paused webhook only", async () => {
    const hook = "http://127.0.0.1:9/hook";
    const slug = await twins("resume", { webhookUrl: hook });
    for (const d of DOMAINS) {
      const id = (await cp.deps.store.getLink(d, slug))!.id;
      expect(await pauseLinkWebhook(cp.deps.store, cp.deps.hot, { linkId: id, url: hook, reason: "kept failing", at: cp.clock.now() })).toBe(true);
    }
    const page = await v.get(`/dashboard/links/${slug}/stats?domain=${GO}`);
    const action = actionOf(page.html, `/dashboard/links/${slug}/webhook/resume`);
    expect(action).toBe(`/dashboard/links/${slug}/webhook/resume?domain=${GO}`);
    const resumed = await v.post(action, { _csrf: csrfOf(page.html) }); // the form's one field
    expect([resumed.status, resumed.headers.get("location")]).toEqual([303, `/dashboard/links/${slug}/stats?domain=${GO}&flash=webhook-resumed`]);
    expect((await each(slug)).map((l) => l.webhookPausedAt === null)).toEqual([false, true, false]);
  });

  test("a domain not the workspace's is refused on every page, and nothing changes", async () => {
    const slug = await twins("refused");
    for (const page of ["stats", "edit", "delete", "qr.svg", "clicks.csv"]) {
      expect([page, (await v.get(`/dashboard/links/${slug}/${page}?domain=elsewhere.example`)).status]).toEqual([page, 400]);
    }
  });
});

describe("bulk changes of ticked links", () => {
  const tick = async (slug: string, fields: Record<string, string | string[]>) => {
    const list = await v.get(`/dashboard/links?q=${slug}`);
    return v.post("/dashboard/links/bulk", { _csrf: formFieldsOf(list.html)._csrf!, back: `/dashboard/links?q=${slug}`, ...fields });
  };

  test("a ticked custom domain's box pauses that link, not the base domain's; a base box and a custom one together, each theirs", async () => {
    const slug = await twins("bulk");
    const paused = await tick(slug, { slug: `${GO}/${slug}`, action: "pause" });
    expect([paused.status, paused.headers.get("location")]).toEqual([303, `/dashboard/links?q=${slug}&bulk=paused&n=1&failed=0`]);
    expect((await each(slug)).map((l) => l.status)).toEqual(["active", "paused", "active"]);
    const moved = await tick(slug, { slug: [slug, `${SHOP}/${slug}`], action: "move", folder: "both" });
    expect(moved.headers.get("location")).toContain("bulk=moved&n=2&failed=0");
    expect((await each(slug)).map((l) => l.folder)).toEqual(["both", null, "both"]);
  });

  test("delete: the confirmation keeps the domain, and deletes that link only", async () => {
    const slug = await twins("bulkdel");
    const ask = await tick(slug, { slug: `${SHOP}/${slug}`, action: "delete" });
    expect(ask.html).toContain(`<input type="hidden" name="slug" value="${SHOP}/${slug}">`);
    expect((await each(slug)).every((l) => l !== null)).toBe(true);
    // The confirmation's fields as a browser sends them, with its button's action=delete.
    const confirmed = await v.post("/dashboard/links/bulk", { ...formFieldsOf(ask.html), action: "delete" });
    expect(confirmed.headers.get("location")).toContain("bulk=deleted&n=1&failed=0");
    expect((await each(slug)).map((l) => l?.status ?? null)).toEqual(["active", "active", null]);
  });

  test("a box naming a domain not the workspace's changes nothing, the other boxes included", async () => {
    const slug = await twins("bulkbad");
    const refused = await tick(slug, { slug: [slug, `elsewhere.example/${slug}`], action: "pause" });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain("Nothing was changed");
    expect((await each(slug)).map((l) => l.status)).toEqual(["active", "active", "active"]);
  });
});

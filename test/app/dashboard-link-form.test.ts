/**
 * The dashboard's link form and list through the Elysia app in process: the fields the link's declaration gives the
 * form (here expiredUrl and externalId) are created, edited and cleared through it with the API's messages, and
 * the list and the link's page show each link's live state (not the owner's status) with the reason, and filter by it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { csrfOf, formFieldsOf, Visitor } from "../helpers/dashboard-visitor.ts";
import { BASE_URL, jsonOf, passwordOf, START_TIME, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import { ledgerFrom } from "../helpers/hit-ledger.ts";

const HOUR = 3_600_000;
const at = (ms: number) => new Date(ms).toISOString();

let cp: InProcessControlPlane;

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
});
afterAll(() => cp?.close());

/** A visitor signed in as `email`, and an API key of the same account. */
async function signedIn(email: string): Promise<{ v: Visitor; key: string }> {
  await cp.account(email);
  const v = new Visitor(BASE_URL, cp.handle);
  const res = await v.submit("/dashboard/signin", "/dashboard/signin", { email, password: passwordOf(email) });
  expect([res.status, res.headers.get("location")]).toEqual([303, "/dashboard/links"]);
  return { v, key: (await cp.createKey(email)).key };
}

/** The fieldset of a form page with this legend. */
function fieldset(html: string, legend: string): string {
  const m = new RegExp(`<fieldset><legend>${legend}</legend>([\\s\\S]*?)</fieldset>`).exec(html);
  if (!m) throw new Error(`no fieldset "${legend}"`);
  return m[1];
}

describe("expiredUrl and externalId in the link form", () => {
  test("are offered in their sections, created, shown, changed and cleared through the dashboard", async () => {
    const { v, key } = await signedIn("fields@example.com");
    const form = (await v.get("/dashboard/links/new")).html;
    expect(fieldset(form, "Link")).toContain('<label for="f-externalId">External id');
    expect(fieldset(form, "Link")).toContain('name="externalId"');
    expect(fieldset(form, "Schedule and limits")).toContain('<label for="f-expiredUrl">After the link ends, send visitors to');
    expect(fieldset(form, "Schedule and limits")).toMatch(/<input id="f-expiredUrl" name="expiredUrl" type="url"/);

    const created = await v.submit("/dashboard/links/new", "/dashboard/links", {
      url: "https://example.com/launch", slug: "ext-form", externalId: " crm-42 ", expiredUrl: "https://example.com/over",
    });
    expect([created.status, created.headers.get("location")]).toEqual([303, "/dashboard/links/ext-form/stats?flash=created"]);
    expect(await jsonOf(await cp.request("GET", "/api/v1/links/ext_crm-42", { key }))).toMatchObject({
      slug: "ext-form", externalId: "crm-42", expiredUrl: "https://example.com/over",
    });

    const edit = await v.get("/dashboard/links/ext-form/edit");
    const shown = formFieldsOf(edit.html);
    expect([shown.externalId, shown.expiredUrl]).toEqual([["crm-42"], ["https://example.com/over"]]);
    const changed = await v.post("/dashboard/links/ext-form/edit", { ...shown, externalId: "crm-43", expiredUrl: "https://example.com/gone" });
    expect([changed.status, changed.headers.get("location")]).toEqual([303, "/dashboard/links/ext-form/stats?flash=updated"]);
    expect(await jsonOf(await cp.request("GET", "/api/v1/links/ext-form", { key }))).toMatchObject({ externalId: "crm-43", expiredUrl: "https://example.com/gone" });
    expect((await cp.request("GET", "/api/v1/links/ext_crm-42", { key })).status).toBe(404);

    const cleared = await v.post("/dashboard/links/ext-form/edit", { ...formFieldsOf((await v.get("/dashboard/links/ext-form/edit")).html), externalId: "", expiredUrl: "" });
    expect(cleared.status).toBe(303);
    expect(await jsonOf(await cp.request("GET", "/api/v1/links/ext-form", { key }))).toMatchObject({ externalId: null, expiredUrl: null, target: "https://example.com/launch" });
  });

  test("invalid values get the API's messages, labelled as in the form, with what was typed kept", async () => {
    const { v, key } = await signedIn("field-errors@example.com");
    const input = { url: "https://example.com/", externalId: "two words", expiredUrl: "ftp://example.com/over" };
    const viaApi = await jsonOf(await cp.request("POST", "/api/v1/links", { key, json: input }));
    const paths = (viaApi.errors as { path: string }[]).map((e) => e.path).sort();
    expect(paths).toEqual(["/expiredUrl", "/externalId"]);
    const bad = await v.submit("/dashboard/links/new", "/dashboard/links", input);
    expect(bad.status).toBe(400);
    const label: Record<string, string> = { "/externalId": "External id", "/expiredUrl": "After the link ends, send visitors to" };
    for (const e of viaApi.errors as { path: string; message: string }[]) {
      const id = `f-${e.path.slice(1)}`;
      expect(bad.html).toContain(`<li><a href="#${id}">${label[e.path]}: ${e.message}</a></li>`);
      expect(bad.html).toContain(`<p class="err" id="${id}-error">${e.message}</p>`);
    }
    expect(formFieldsOf(bad.html)).toMatchObject({ externalId: ["two words"], expiredUrl: ["ftp://example.com/over"] });

    await v.submit("/dashboard/links/new", "/dashboard/links", { url: "https://example.com/", slug: "edit-errors" });
    const edit = await v.get("/dashboard/links/edit-errors/edit");
    const refused = await v.post("/dashboard/links/edit-errors/edit", { ...formFieldsOf(edit.html), expiredUrl: "not a url" });
    expect([refused.status, refused.html]).toEqual([400, expect.stringContaining("After the link ends, send visitors to: must be an absolute http or https URL")]);
    expect((await jsonOf(await cp.request("GET", "/api/v1/links/edit-errors", { key }))).expiredUrl).toBeNull();
  });
});

describe("externalId's upsert and uniqueness in the dashboard", () => {
  test("a new link naming an existing externalId updates that link, and the dashboard says it was saved", async () => {
    const { v, key } = await signedIn("upsert@example.com");
    await v.submit("/dashboard/links/new", "/dashboard/links", { url: "https://example.com/first", slug: "upsert-me", externalId: "dup-1" });
    const again = await v.submit("/dashboard/links/new", "/dashboard/links", { url: "https://example.com/second", externalId: "dup-1" });
    expect([again.status, again.headers.get("location")]).toEqual([303, "/dashboard/links/upsert-me/stats?flash=updated"]);
    const { links } = await jsonOf(await cp.request("GET", "/api/v1/links", { key }));
    expect(links.map((l: { slug: string; target: string }) => [l.slug, l.target])).toEqual([["upsert-me", "https://example.com/second"]]);
  });

  test("an edit giving a link another link's externalId is refused in the form with 409, nothing changed", async () => {
    const { v, key } = await signedIn("unique@example.com");
    await v.submit("/dashboard/links/new", "/dashboard/links", { url: "https://example.com/a", slug: "has-id", externalId: "taken-1" });
    await v.submit("/dashboard/links/new", "/dashboard/links", { url: "https://example.com/b", slug: "wants-id" });
    const edit = await v.get("/dashboard/links/wants-id/edit");
    const refused = await v.post("/dashboard/links/wants-id/edit", { ...formFieldsOf(edit.html), externalId: "taken-1", folder: "moved" });
    expect(refused.status).toBe(409);
    expect(refused.html).toContain('<li><a href="#f-externalId">External id: is already used by another of your links</a></li>');
    expect(formFieldsOf(refused.html)).toMatchObject({ externalId: ["taken-1"], folder: ["moved"] });
    expect(await jsonOf(await cp.request("GET", "/api/v1/links/wants-id", { key }))).toMatchObject({ externalId: null, folder: null });
  });
});

/** Each row of the links table: its slug, and its state badge's class suffix, tooltip and text. */
function rowsOf(html: string): Record<string, { state: string; title: string; text: string }> {
  const out: Record<string, { state: string; title: string; text: string }> = {};
  for (const row of html.split("<tr>").slice(2)) {
    const slug = /data-label="Short link"><a class="mono" href="[^"]+">([^<]+)<\/a>/.exec(row)![1];
    const [, state, title, text] = /<span class="status state-([a-z_]+)" title="([^"]*)">([^<]+)<\/span>/.exec(row)!;
    out[slug] = { state, title, text };
  }
  return out;
}

describe("the link's state", () => {
  let states: InProcessControlPlane;
  let v: Visitor;
  beforeAll(async () => {
    states = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
    await states.account("states@example.com");
    v = new Visitor(BASE_URL, states.handle);
    await v.submit("/dashboard/signin", "/dashboard/signin", { email: "states@example.com", password: passwordOf("states@example.com") });
    const { key } = await states.createKey("states@example.com");
    const create = async (json: Record<string, unknown>) => expect((await states.request("POST", "/api/v1/links", { key, json })).status).toBe(201);
    await create({ url: "https://example.com/", slug: "s-live", tags: "x", maxHits: 5 });
    await create({ url: "https://example.com/", slug: "s-expired", tags: "x", expiresAt: at(START_TIME + HOUR) });
    await create({ url: "https://example.com/", slug: "s-moved-on", expiresAt: at(START_TIME + HOUR), expiredUrl: "https://example.com/next" });
    await create({ url: "https://example.com/", slug: "s-scheduled", startsAt: at(START_TIME + 5 * HOUR) });
    await create({ url: "https://example.com/", slug: "s-limit", maxHits: 1 });
    await create({ url: "https://example.com/", slug: "s-paused", status: "paused" });
    await create({ url: "https://example.com/", slug: "s-archived", status: "archived" });
    const limited = (await states.deps.store.getLink(states.deps.config.defaultDomain, "s-limit"))!;
    await states.deps.hot.takeHit(limited.id, 1, ledgerFrom(0));
    states.clock.advance(2 * HOUR); // 14:30 UTC: past the expiry, before the start
  });
  afterAll(() => states?.close());

  test("the list shows each link's live state with a distinct badge and the reason, never \"active\"", async () => {
    const page = await v.get("/dashboard/links");
    expect(rowsOf(page.html)).toEqual({
      "s-live": { state: "live", title: "serving redirects; 0 of 5 clicks used", text: "live" },
      "s-expired": { state: "expired", title: "expired 15 Jan 2030 13:30 UTC; visitors get a 410 page", text: "expired" },
      "s-moved-on": { state: "expired", title: "expired 15 Jan 2030 13:30 UTC; visitors are sent to https://example.com/next", text: "expired" },
      "s-scheduled": { state: "scheduled", title: "starts 15 Jan 2030 17:30 UTC; until then visitors get a 425 page", text: "scheduled" },
      "s-limit": { state: "limit_reached", title: "served its limit of 1 click; visitors get a 410 page", text: "limit reached" },
      "s-paused": { state: "paused", title: "paused by its owner; visitors get a 404 page", text: "paused" },
      "s-archived": { state: "archived", title: "archived by its owner; visitors get a 410 page", text: "archived" },
    });
    // The reason is also written out for every link that does not serve redirects.
    expect(page.html).toContain('<span class="small muted">expired 15 Jan 2030 13:30 UTC; visitors get a 410 page</span>');
    expect(page.html.slice(page.html.indexOf("<table"))).not.toContain("active");
  });

  test("the link's page shows its state and why", async () => {
    const page = await v.get("/dashboard/links/s-expired/stats");
    expect(page.html).toContain('<dt>State</dt><dd><span class="status state-expired"');
    expect(page.html).toContain('<span class="small muted">expired 15 Jan 2030 13:30 UTC; visitors get a 410 page</span>');
  });

  test("the list filters by state, kept in the query string of its links, beside the other filters", async () => {
    const expired = await v.get("/dashboard/links?state=expired");
    expect(Object.keys(rowsOf(expired.html)).sort()).toEqual(["s-expired", "s-moved-on"]);
    expect(expired.html).toContain('<option value="expired" selected>expired</option>');
    expect(expired.html).toContain('<option value="limit_reached">limit reached</option>');
    expect(expired.html).toContain('href="/dashboard/links?tag=x&amp;state=expired"'); // a row's tag link keeps the state
    const both = await v.get("/dashboard/links?state=expired&tag=x");
    expect(Object.keys(rowsOf(both.html))).toEqual(["s-expired"]);
    expect(Object.keys(rowsOf((await v.get("/dashboard/links?state=paused")).html))).toEqual(["s-paused"]);
    expect(Object.keys(rowsOf((await v.get("/dashboard/links?state=scheduled&status=active")).html))).toEqual(["s-scheduled"]);
    const bogus = await v.get("/dashboard/links?state=dead");
    expect([bogus.status, bogus.html]).toEqual([200, expect.stringContaining("must be live, scheduled, expired, limit_reached, paused or archived")]);
  });
});

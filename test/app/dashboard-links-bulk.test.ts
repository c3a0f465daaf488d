/**
 * The links list's export links and bulk actions (issue #25) through the Elysia app in process, as a signed-in
 * browser without script uses them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { csrfOf, Visitor, signedInVisitor } from "../helpers/dashboard-visitor.ts";
import { BASE_URL, jsonOf, passwordOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

let cp: InProcessControlPlane;
let alice: Visitor;
let keyA: string;
let keyB: string;

const signedIn = (email: string): Promise<Visitor> => signedInVisitor(cp, BASE_URL, email, passwordOf(email));

const unescape = (s: string) => s.replace(/&amp;/g, "&");
const slugsOfCsv = (csv: string) => csv.trim().split("\r\n").slice(1).map((line) => line.split(",")[0]);
const apiLink = async (slug: string, key = keyA) => jsonOf(await cp.request("GET", `/api/v1/links/${slug}`, { key }));

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  keyA = (await cp.createKey("alice@example.com")).key;
  keyB = (await cp.createKey("bob@example.com")).key;
  const rows = Array.from({ length: 40 }, (_, i) => ({ url: `https://example.com/${i}`, slug: `dash-${i}`, tags: i < 30 ? ["spring"] : [], folder: "inbox" }));
  expect((await jsonOf(await cp.request("POST", "/api/v1/bulk", { key: keyA, json: rows }))).created).toBe(40);
  expect((await cp.request("POST", "/api/v1/links", { key: keyB, json: { url: "https://example.com/bob", slug: "bobs-dash" } })).status).toBe(201);
  alice = await signedIn("alice@example.com");
});
afterAll(() => cp?.close());

describe("export", () => {
  test("the list's export links carry its filters, not its page, and download what the API exports", async () => {
    const page = await alice.get("/dashboard/links?tag=spring&folder=inbox&cursor=abc");
    const hrefs = [...page.html.matchAll(/href="(\/dashboard\/links\/export[^"]*)"/g)].map((m) => unescape(m[1]));
    expect(hrefs).toEqual(["/dashboard/links/export?format=csv&tag=spring&folder=inbox", "/dashboard/links/export?format=json&tag=spring&folder=inbox"]);
    const csv = await alice.get(hrefs[0]);
    expect([csv.status, csv.headers.get("content-type")]).toEqual([200, "text/csv; charset=utf-8"]);
    expect(csv.html).toBe(await (await cp.request("GET", "/api/v1/links/export?tag=spring&folder=inbox", { key: keyA })).text());
    expect(slugsOfCsv(csv.html)).toHaveLength(30);
    const json = await alice.get(hrefs[1]);
    expect(JSON.parse(json.html)).toHaveLength(30);
    expect(JSON.parse((await alice.get("/dashboard/links/export?format=json")).html).map((l: { slug: string }) => l.slug)).not.toContain("bobs-dash");
  });

  test("signed out: to sign in; a bad parameter: an error page, not a download", async () => {
    const anon = new Visitor(BASE_URL, (request) => cp.handle(request));
    expect((await anon.get("/dashboard/links/export")).status).toBe(303);
    const bad = await alice.get("/dashboard/links/export?format=xml");
    expect([bad.status, bad.headers.get("content-type")]).toEqual([400, "text/html; charset=utf-8"]);
    expect(bad.html).toContain("format: must be one of csv, json");
  });
});

describe("bulk actions", () => {
  /** Posts the list's bulk form as a browser would after ticking `slugs` and pressing `action`. */
  async function press(action: string, slugs: string[], extra: Record<string, string | string[]> = {}, list = "/dashboard/links?folder=inbox") {
    const page = await alice.get(list);
    const back = unescape(/name="back" value="([^"]*)"/.exec(page.html)![1]);
    return alice.post("/dashboard/links/bulk", { _csrf: csrfOf(page.html), back, action, slug: slugs, ...extra });
  }

  test("the list has a labelled checkbox per link and labelled actions inside one form", async () => {
    const { html } = await alice.get("/dashboard/links");
    expect(html).toContain('<form method="post" action="/dashboard/links/bulk">');
    expect(html).toMatch(/<input type="checkbox" name="slug" value="(dash-\d+)" id="tick-0" aria-label="Select \1">/);
    expect(html.match(/type="checkbox" name="slug"/g)).toHaveLength(25);
    for (const [value, text] of [["add-tag", "Add tag"], ["move", "Move to folder"], ["pause", "Pause"], ["archive", "Archive"], ["delete", "Delete…"]]) {
      expect(html).toContain(`name="action" value="${value}"`);
      expect(html).toContain(`>${text}</button>`);
    }
    expect(html).toContain('<label for="bulk-tag">Tag</label>');
    expect(html).toContain('<label for="bulk-folder">Folder</label>');
  });

  test("pause: 303 back to the same filtered list, which says what was done; only the ticked links change", async () => {
    const res = await press("pause", ["dash-1", "dash-2"]);
    expect(res.status).toBe(303);
    const location = res.headers.get("location")!;
    expect(location).toBe("/dashboard/links?folder=inbox&bulk=paused&n=2&failed=0");
    expect((await alice.get(location)).html).toContain('<p class="flash" role="status">2 links paused.</p>');
    for (const forged of ["bulk=paused", "bulk=paused&n=abc", "bulk=exploded&n=2", "bulk=paused&n=-1", "bulk=paused&n=1&failed=x"]) {
      expect((await alice.get(`/dashboard/links?${forged}`)).html).not.toContain('class="flash"');
    }
    expect(await apiLink("dash-1")).toMatchObject({ status: "paused" });
    expect(await apiLink("dash-3")).toMatchObject({ status: "active" });
  });

  test("add tag, move to folder, archive go through the bulk service", async () => {
    expect((await press("add-tag", ["dash-4", "dash-5"], { tag: " Promo " })).status).toBe(303);
    expect((await apiLink("dash-4")).tags).toEqual(["spring", "Promo"]);
    expect((await press("move", ["dash-4"], { folder: "Archive 2026" })).status).toBe(303);
    expect((await apiLink("dash-4")).folder).toBe("Archive 2026");
    expect((await press("move", ["dash-4"], { folder: "" }, "/dashboard/links")).headers.get("location")).toBe("/dashboard/links?bulk=moved&n=1&failed=0");
    expect((await apiLink("dash-4")).folder).toBeNull();
    expect((await press("archive", ["dash-5"])).status).toBe(303);
    expect(await apiLink("dash-5")).toMatchObject({ status: "archived", state: "archived" });
  });

  test("another account's slug in a forged form is counted as failed and left alone", async () => {
    const res = await press("pause", ["dash-6", "bobs-dash"]);
    expect(res.headers.get("location")).toBe("/dashboard/links?folder=inbox&bulk=paused&n=1&failed=1");
    expect((await alice.get(res.headers.get("location")!)).html).toContain("1 link paused. 1 link could not be changed");
    expect(await apiLink("bobs-dash", keyB)).toMatchObject({ status: "active" });
  });

  test("delete asks first, listing the links; confirming deletes them and goes back", async () => {
    const ask = await press("delete", ["dash-7", "dash-8"]);
    expect(ask.status).toBe(200);
    expect(ask.html).toContain("<h1>Delete 2 links?</h1>");
    expect(ask.html).toContain('<li class="mono">dash-7</li>');
    expect((await apiLink("dash-7")).slug).toBe("dash-7");
    const done = await alice.post("/dashboard/links/bulk", { _csrf: csrfOf(ask.html), back: "/dashboard/links?folder=inbox", action: "delete", confirm: "1", slug: ["dash-7", "dash-8"] });
    expect([done.status, done.headers.get("location")]).toEqual([303, "/dashboard/links?folder=inbox&bulk=deleted&n=2&failed=0"]);
    expect((await cp.request("GET", "/api/v1/links/dash-7", { key: keyA })).status).toBe(404);
  });

  test("nothing ticked, no action, an empty tag: 400 pages that change nothing; a foreign back goes to the list", async () => {
    for (const [action, slugs, extra, words] of [
      ["pause", [], {}, "Tick at least one link first."], ["explode", ["dash-9"], {}, "Choose what to do"], ["add-tag", ["dash-9"], { tag: "  " }, "Tag: "],
    ] as const) {
      const res = await press(action, [...slugs], extra);
      expect(res.status).toBe(400);
      expect(res.html).toContain(words);
      expect(res.html).toContain('<a href="/dashboard/links?folder=inbox">Back to the links</a>');
    }
    expect((await apiLink("dash-9")).tags).toEqual(["spring"]);
    const page = await alice.get("/dashboard/links");
    const res = await alice.post("/dashboard/links/bulk", { _csrf: csrfOf(page.html), back: "https://evil.example/", action: "pause", slug: "dash-9" });
    expect(res.headers.get("location")).toBe("/dashboard/links?bulk=paused&n=1&failed=0");
  });

  test("without the CSRF token: 403 and nothing changes", async () => {
    const res = await alice.post("/dashboard/links/bulk", { action: "pause", slug: "dash-10" });
    expect(res.status).toBe(403);
    expect(await apiLink("dash-10")).toMatchObject({ status: "active" });
  });
});

describe("every link matching the filters (beyond the page shown)", () => {
  const FOLDER = "everything";
  const listOf = (filters: string) => `/dashboard/links?${filters}`;
  /** The hidden fields of the list's bulk form (back, the filters as match_*), as a browser posts them. */
  function formFields(html: string): Record<string, string> {
    const form = html.slice(html.indexOf('action="/dashboard/links/bulk"'));
    const fields: Record<string, string> = { _csrf: csrfOf(html) };
    for (const m of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]!] = unescape(m[2]!);
    return fields;
  }
  /** Presses `action` with "All N links" chosen on the list at `filters`; then, on the confirmation, its button. */
  async function pressAll(filters: string, action: string, extra: Record<string, string> = {}) {
    const list = await alice.get(listOf(filters));
    const ask = await alice.post("/dashboard/links/bulk", { ...formFields(list.html), scope: "all", action, ...extra });
    return { list, ask, confirm: () => alice.post("/dashboard/links/bulk", { ...formFields(ask.html), action }) };
  }
  /** How many of alice's links the API lists with this query, every page. */
  async function apiCount(query: string): Promise<number> {
    let n = 0;
    let cursor = "";
    do {
      const page = await jsonOf(await cp.request("GET", `/api/v1/links?limit=500&${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, { key: keyA }));
      n += page.links.length;
      cursor = page.nextCursor ?? "";
    } while (cursor);
    return n;
  }

  beforeAll(async () => {
    // 520 links: more than one bulk call (500) and than one list page (25). Bob has one in the same folder.
    const rows = Array.from({ length: 520 }, (_, i) => ({ url: `https://example.com/all/${i}`, slug: `all-${i}`, folder: FOLDER, tags: i % 2 ? ["odd"] : [] }));
    for (let at = 0; at < rows.length; at += 500) {
      expect((await jsonOf(await cp.request("POST", "/api/v1/bulk", { key: keyA, json: rows.slice(at, at + 500) }))).created).toBe(Math.min(500, rows.length - at));
    }
    expect((await cp.request("POST", "/api/v1/links", { key: keyB, json: { url: "https://example.com/bob2", slug: "bobs-everything", folder: FOLDER } })).status).toBe(201);
  });

  test("offered with the count when the filters match more than a page; not when one page shows them all", async () => {
    const { html } = await alice.get(listOf(`folder=${FOLDER}`));
    expect(html).toContain('<label class="check"><input type="checkbox" name="scope" value="all"> All 520 links matching these filters, not only the ticked ones</label>');
    expect(html).toContain(`<input type="hidden" name="match_folder" value="${FOLDER}">`);
    expect((await alice.get(listOf(`folder=${FOLDER}&q=all-51`))).html).not.toContain('name="scope"'); // all-51, all-510..519: one page
  });

  test("a change asks first, naming the action and the count; confirming applies it to every match, page after page", async () => {
    const { ask, confirm } = await pressAll(`folder=${FOLDER}&tag=odd`, "add-tag", { tag: "wave" });
    expect(ask.status).toBe(200);
    expect(ask.html).toContain("<h1>Add the tag “wave” to 260 links?</h1>");
    expect(ask.html).toContain('<li>Tag: <span class="mono">odd</span></li><li>Folder: <span class="mono">everything</span></li>');
    expect(await apiCount("tag=wave")).toBe(0); // nothing changed yet
    const done = await confirm();
    expect([done.status, done.headers.get("location")]).toEqual([303, `/dashboard/links?tag=odd&folder=${FOLDER}&bulk=tagged&n=260&failed=0`]);
    expect(await apiCount("tag=wave")).toBe(260);
    expect(await apiCount(`folder=${FOLDER}&tag=odd`)).toBe(260);

    // A change that takes the links out of the filter still reaches each once: 520 paused over two bulk calls.
    const pause = await pressAll(`folder=${FOLDER}&status=active`, "pause");
    expect(pause.ask.html).toContain("<h1>Pause 520 links?</h1>");
    expect((await pause.confirm()).headers.get("location")).toBe(`/dashboard/links?folder=${FOLDER}&status=active&bulk=paused&n=520&failed=0`);
    expect(await apiCount(`folder=${FOLDER}&status=paused`)).toBe(520);
    expect(await apiLink("bobs-everything", keyB)).toMatchObject({ status: "active" });
  });

  test("delete asks first and warns; confirming deletes every match and nothing else", async () => {
    const { ask, confirm } = await pressAll(`folder=${FOLDER}`, "delete");
    expect(ask.html).toContain("<h1>Delete 520 links?</h1>");
    expect(ask.html).toContain("This cannot be undone.");
    expect(await apiCount(`folder=${FOLDER}`)).toBe(520);
    expect((await confirm()).headers.get("location")).toBe(`/dashboard/links?folder=${FOLDER}&bulk=deleted&n=520&failed=0`);
    expect(await apiCount(`folder=${FOLDER}`)).toBe(0);
    expect(await apiLink("bobs-everything", keyB)).toMatchObject({ folder: FOLDER });
    expect(await apiLink("dash-20")).toMatchObject({ folder: "inbox" });
  });

  test("no match, a bad filter or a bad tag: a 400 page that changes nothing", async () => {
    const page = await alice.get("/dashboard/links");
    const post = (fields: Record<string, string>) => alice.post("/dashboard/links/bulk", { _csrf: csrfOf(page.html), back: "/dashboard/links", scope: "all", ...fields });
    for (const [fields, words] of [
      [{ action: "pause", match_folder: "nowhere" }, "No links match these filters."],
      [{ action: "pause", match_status: "sleeping" }, "status: must be"],
      [{ action: "add-tag", tag: " ", match_folder: "inbox" }, "Tag: "],
    ] as const) {
      const res = await post(fields);
      expect([res.status, res.html.includes(words)]).toEqual([400, true]);
    }
    expect(await apiLink("dash-20")).toMatchObject({ status: "active" });
  });
});

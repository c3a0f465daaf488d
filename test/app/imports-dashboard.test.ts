/**
 * The dashboard's import pages in process (app.handle): the upload form, a multipart upload answered 303 to the
 * job's page (POST-redirect-GET), the page's progress bar and summary of what was created, skipped and refused and
 * why; a refused file comes back as the form with the reason; the CSRF token is required; another account's job
 * is not found.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Visitor, csrfOf, signedInVisitor } from "../helpers/dashboard-visitor.ts";
import { BASE_URL, passwordOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import { fixture } from "./imports-helpers.ts";

let cp: InProcessControlPlane;
beforeAll(async () => (cp = await startControlPlane()));
afterAll(() => cp.close());

const signedIn = (email: string): Promise<Visitor> => signedInVisitor(cp, BASE_URL, email, passwordOf(email));

function upload(v: Visitor, csrf: string, file: File, fields: Record<string, string>) {
  const form = new FormData();
  form.set("_csrf", csrf);
  for (const [k, val] of Object.entries(fields)) form.set(k, val);
  form.set("file", file);
  return v.request("/dashboard/imports", { method: "POST", body: form });
}

/** The job's page, reloaded as its Refresh header asks until the job has ended. */
async function jobPage(v: Visitor, path: string) {
  for (let i = 0; i < 1000; i++) {
    const page = await v.get(path);
    if (!page.headers.get("refresh")) return page;
    expect(page.html).toMatch(/<progress max="100" value="\d+"/);
    await Bun.sleep(5);
  }
  throw new Error("the job page kept refreshing");
}

test("upload, 303 to the job page, progress bar and a summary of what was created, skipped and refused and why", async () => {
  const v = await signedIn("dash-import@example.com");
  const form = await v.get("/dashboard/imports");
  expect(form.status).toBe(200);
  expect(form.html).toContain('enctype="multipart/form-data"');
  expect(form.html).toContain('<option value="shlink">Shlink CSV export</option>');
  expect(form.html).toContain('href="/dashboard/imports" aria-current="page"');
  const res = await upload(v, csrfOf(form.html), new File([fixture("bitly.csv")], "bitly export.csv"), { format: "bitly", onConflict: "skip" });
  expect(res.status).toBe(303);
  const location = res.headers.get("location")!;
  expect(location).toMatch(/^\/dashboard\/imports\/imp_[a-z0-9]+$/);
  const page = await jobPage(v, location);
  expect(page.status).toBe(200);
  expect(page.html).toContain('<progress max="100" value="100"');
  expect(page.html).toContain("Import of bitly export.csv");
  expect(page.html).toContain("<dt>Created</dt><dd>4</dd><dt>Skipped</dt><dd>1</dd><dt>Refused</dt><dd>3</dd>");
  expect(page.html).toContain('<td data-label="Code" class="mono">invalid_url</td>');
  expect(page.html).toContain("duplicate_row");
  // The rows' own words are data in the page, escaped.
  expect(page.html).toContain("&quot;yesterday&quot; is not a date");
  const list = await v.get("/dashboard/imports");
  expect(list.html).toContain(`<a href="${location}">bitly export.csv</a>`);

  const stranger = await signedIn("dash-stranger@example.com");
  expect((await stranger.get(location)).status).toBe(404);
});

test("a refused file comes back as the form with the reason; a post without the CSRF token is refused", async () => {
  const v = await signedIn("dash-bad@example.com");
  const csrf = csrfOf((await v.get("/dashboard/imports")).html);
  const latin1 = await upload(v, csrf, new File([fixture("latin1.csv")], "latin1.csv"), { format: "bitly" });
  expect(latin1.status).toBe(400);
  expect(latin1.html).toContain("is not UTF-8 (line 2");
  expect(latin1.html).toContain('enctype="multipart/form-data"');
  const mapping = await upload(v, csrf, new File([fixture("generic.csv")], "generic.csv"), { format: "csv", mapping: "" });
  expect(mapping.status).toBe(400);
  expect(mapping.html).toContain("mapping is required for format=csv");
  expect(mapping.html).toContain('<option value="csv" selected>');
  expect((await upload(v, "wrong-token", new File([fixture("bitly.csv")], "b.csv"), { format: "bitly" })).status).toBe(403);
  const { key } = await cp.createKey("dash-bad@example.com");
  expect((await (await cp.request("GET", "/api/v1/links", { key })).json()).links).toEqual([]);
});

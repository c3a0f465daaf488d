/**
 * The dashboard's Domains page in process (issue #24): add (refused forms keep the input and name the problem),
 * the challenge to publish, verify with the check's result shown, a link made on the domain from the new-link form (a DNS server on loopback answers it), delete
 * refused while the domain has links and done with them deleted; another account's domain is a 404.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { csrfOf, Visitor, signedInVisitor } from "../helpers/dashboard-visitor.ts";
import { startDnsServer, type TestDnsServer } from "../helpers/dns-server.ts";
import { BASE_URL, jsonOf, passwordOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

let cp: InProcessControlPlane;
let dns: TestDnsServer;

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  dns = await startDnsServer();
  cp.deps.domainChecks = { resolveTxt: dns.resolveTxt };
});
afterAll(async () => {
  dns?.close();
  await cp?.close();
});

const signedIn = (email: string): Promise<Visitor> => signedInVisitor(cp, BASE_URL, email, passwordOf(email));

test("add, see what to publish, verify with the result shown, delete refused with links then done with them", async () => {
  const v = await signedIn("domains-dash@example.com");
  expect((await v.get("/dashboard/keys")).html).toContain('href="/dashboard/domains"');
  expect((await v.get("/dashboard/domains")).html).toContain("No custom domains yet.");
  expect((await v.get("/dashboard/links/new")).html).not.toContain('name="domain"');

  const bad = await v.submit("/dashboard/domains", "/dashboard/domains", { hostname: "go.example.com:8080", method: "dns" });
  expect(bad.status).toBe(400);
  expect(bad.html).toContain('value="go.example.com:8080"');
  expect(bad.html).toContain('aria-invalid="true"');

  const added = await v.submit("/dashboard/domains", "/dashboard/domains", { hostname: "Go.Dash.Example", method: "dns" });
  expect([added.status, added.headers.get("location")]).toEqual([303, "/dashboard/domains"]);
  const listed = await v.get("/dashboard/domains");
  expect(listed.html).toContain("go.dash.example");
  expect(listed.html).toContain("<code>_clink-challenge.go.dash.example</code>");
  expect(listed.html).toContain("not checked yet");
  const token = /value <code>(clink-verify-[0-9A-Za-z]+)<\/code>/.exec(listed.html)![1]!;
  const verifyPath = /action="(\/dashboard\/domains\/dom_[^"]+\/verify)"/.exec(listed.html)![1]!;

  expect((await v.post(verifyPath, { _csrf: csrfOf(listed.html) })).status).toBe(303);
  expect((await v.get("/dashboard/domains")).html).toContain("failed");
  expect((await v.get("/dashboard/domains")).html).toContain("no TXT record at _clink-challenge.go.dash.example");
  dns.txt.set("_clink-challenge.go.dash.example", [[token]]);
  expect((await v.post(verifyPath, { _csrf: csrfOf(listed.html) })).status).toBe(303);
  const verified = await v.get("/dashboard/domains");
  expect(verified.html).toContain("TXT record found at _clink-challenge.go.dash.example");
  expect(verified.html).toContain('status-active">verified');

  // The new-link form offers the verified domain; a link made there is on it.
  const form = await v.get("/dashboard/links/new");
  expect(form.html).toContain('<option value="go.dash.example">go.dash.example</option>');
  const made = await v.submit("/dashboard/links/new", "/dashboard/links", { url: "https://example.com/form", slug: "dash-form", domain: "go.dash.example" });
  expect([made.status, made.headers.get("location")]).toEqual([303, "/dashboard/links/dash-form/stats?domain=go.dash.example&flash=created"]);
  expect((await cp.deps.store.getLink("go.dash.example", "dash-form"))?.target).toBe("https://example.com/form");
  const forged = await v.submit("/dashboard/links/new", "/dashboard/links", { url: "https://example.com/form", domain: "not-mine.example.com" });
  expect(forged.status).toBe(400);
  expect(forged.html).toContain('<select id="f-domain" name="domain" aria-invalid="true"');
  expect(forged.html).toContain('<a href="#f-domain">Domain: must be a verified domain of your account');

  // Taken by someone already: the second account is told so on the form.
  const other = await signedIn("domains-other@example.com");
  const taken = await other.submit("/dashboard/domains", "/dashboard/domains", { hostname: "go.dash.example", method: "http" });
  expect(taken.status).toBe(409);
  expect(taken.html).toContain("has already been added");
  // Another account cannot verify or delete it.
  expect((await other.post(verifyPath, { _csrf: csrfOf(taken.html) })).status).toBe(404);
  expect((await other.post(verifyPath.replace("/verify", "/delete"), { _csrf: csrfOf(taken.html), links: "delete" })).status).toBe(404);

  const { key } = await cp.createKey("domains-dash@example.com");
  const link = await cp.request("POST", "/api/v1/links", { key, json: { url: "https://example.com/d", slug: "dash-domain", domain: "go.dash.example" } });
  expect((await jsonOf(link)).shortUrl).toBe("https://go.dash.example/dash-domain");
  const deletePath = verifyPath.replace("/verify", "/delete");
  const refused = await v.post(deletePath, { _csrf: csrfOf(verified.html), links: "" });
  expect(refused.status).toBe(409);
  expect(refused.html).toContain("has 2 links");
  const deleted = await v.post(deletePath, { _csrf: csrfOf(verified.html), links: "delete" });
  expect([deleted.status, deleted.headers.get("location")]).toEqual([303, "/dashboard/domains"]);
  expect((await v.get("/dashboard/domains")).html).toContain("No custom domains yet.");
  expect(await cp.deps.store.getLink("go.dash.example", "dash-domain")).toBeNull();
});

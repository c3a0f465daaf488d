/**
 * The workspace's default domain in the dashboard, in process (issue #24): on the Domains page an admin makes a
 * verified domain the default (its row says "Default"), the new-link form then preselects it and a link made there
 * lands on it, and "Use the base domain" goes back. A pending domain offers no "Make default"; a member sees neither
 * control and is refused (403) if they post the form anyway.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { csrfOf, signedInVisitor, type Visitor } from "../helpers/dashboard-visitor.ts";
import { putDomain } from "../helpers/domains.ts";
import { BASE_URL, passwordOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import { team } from "./workspaces-helpers.ts";

let cp: InProcessControlPlane;
const GO = "go.dash-default.example";
const PENDING = "pending.dash-default.example";
const BASE_HOST = new URL(BASE_URL).host;

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
});
afterAll(() => cp?.close());

const signedIn = (email: string): Promise<Visitor> => signedInVisitor(cp, BASE_URL, email, passwordOf(email));
const selectedDomain = (html: string) => /<select id="f-domain"[^>]*>.*?<option value="([^"]*)"[^>]* selected>/s.exec(html)?.[1];

test("make a verified domain the default: badge, the new-link form preselects it, a link made there is on it; back to the base domain", async () => {
  const email = "dash-default@example.com";
  const v = await signedIn(email);
  const workspaceId = (await cp.account(email)).id;
  await putDomain(cp, workspaceId, GO);
  await putDomain(cp, workspaceId, PENDING, { state: "pending", verifiedAt: null });

  const before = await v.get("/dashboard/domains");
  expect(before.html).toContain("New links go on the base domain unless another is chosen.");
  expect(before.html).not.toContain(">Default<");
  expect(before.html).not.toContain("Use the base domain");
  // One "Make default", on the verified domain's row only.
  expect(before.html.match(/Make default/g)?.length).toBe(1);
  expect(before.html).toContain(`name="hostname" value="${GO}"><button type="submit" class="btn-small">Make default`);
  expect(selectedDomain((await v.get("/dashboard/links/new")).html)).toBe(BASE_HOST);

  const made = await v.post("/dashboard/domains/default", { _csrf: csrfOf(before.html), hostname: GO });
  expect([made.status, made.headers.get("location")]).toEqual([303, "/dashboard/domains"]);
  expect((await cp.deps.store.getWorkspace(workspaceId))?.defaultDomain).toBe(GO);
  const after = await v.get("/dashboard/domains");
  expect(after.html).toContain(`<span class="mono">${GO}</span> <span class="status status-active">Default</span>`);
  expect(after.html).not.toContain("Make default");
  expect(after.html).toContain("Use the base domain");

  const form = await v.get("/dashboard/links/new");
  expect(selectedDomain(form.html)).toBe(GO);
  const link = await v.submit("/dashboard/links/new", "/dashboard/links", { url: "https://example.com/dd", slug: "dash-dd", domain: GO });
  expect(link.headers.get("location")).toBe(`/dashboard/links/dash-dd/stats?domain=${GO}&flash=created`);
  // The base domain stays a choice in the form.
  const onBase = await v.submit("/dashboard/links/new", "/dashboard/links", { url: "https://example.com/db", slug: "dash-db", domain: BASE_HOST });
  expect(onBase.headers.get("location")).toBe("/dashboard/links/dash-db/stats?flash=created");

  // A pending domain posted anyway is refused, naming the problem; nothing changes.
  const refused = await v.post("/dashboard/domains/default", { _csrf: csrfOf(after.html), hostname: PENDING });
  expect(refused.status).toBe(400);
  expect(refused.html).toContain("must be a verified domain of this workspace");
  expect((await cp.deps.store.getWorkspace(workspaceId))?.defaultDomain).toBe(GO);

  const cleared = await v.post("/dashboard/domains/default", { _csrf: csrfOf(after.html), hostname: "" });
  expect(cleared.status).toBe(303);
  expect((await cp.deps.store.getWorkspace(workspaceId))?.defaultDomain).toBeNull();
  expect((await v.get("/dashboard/domains")).html).toContain("New links go on the base domain unless another is chosen.");
  expect(selectedDomain((await v.get("/dashboard/links/new")).html)).toBe(BASE_HOST);
});

test("a member sees the default but no controls, and posting the form anyway is refused", async () => {
  const t = await team(cp, "dash-default-owner@example.com", "Dash Default");
  await putDomain(cp, t.workspaceId, "go.dash-team.example");
  await cp.deps.store.setDefaultDomain(t.workspaceId, "go.dash-team.example");
  const memberEmail = "dash-default-member@example.com";
  await t.join(memberEmail, "member");
  const v = await signedIn(memberEmail);
  const links = await v.get("/dashboard/links");
  expect((await v.post("/dashboard/workspace/switch", { _csrf: csrfOf(links.html), workspace: t.workspaceId })).status).toBe(303);

  const page = await v.get("/dashboard/domains");
  expect(page.html).toContain('<span class="status status-active">Default</span>');
  expect(page.html).not.toContain("Make default");
  expect(page.html).not.toContain("Use the base domain");
  const res = await v.post("/dashboard/domains/default", { _csrf: csrfOf(page.html), hostname: "" });
  expect(res.status).toBe(403);
  expect((await cp.deps.store.getWorkspace(t.workspaceId))?.defaultDomain).toBe("go.dash-team.example");
});

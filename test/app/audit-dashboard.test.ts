/**
 * The dashboard's audit log page in process (issue #24): the table (when, who, what, on what), its filters (a bad
 * one is the form's error, 400), paging to older entries, the header's link for admins and owners only, and the
 * 403 page for a member of a shared workspace, who also cannot read it by URL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { recordAudit } from "../../control/audit/service.ts";
import { acceptInvitation, createInvitation, createWorkspace } from "../../control/workspaces/service.ts";
import { signedInVisitor, type Visitor } from "../helpers/dashboard-visitor.ts";
import { BASE_URL, passwordOf, startControlPlane, type InProcessControlPlane, type TestKey } from "../helpers/in-process.ts";

let cp: InProcessControlPlane;
let owner: TestKey;
let visitor: Visitor;
const OWNER = "audit-page-owner@example.com";

beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  owner = await cp.createKey(OWNER);
  visitor = await signedInVisitor(cp, BASE_URL, OWNER, passwordOf(OWNER));
});
afterAll(async () => {
  await cp?.close();
});

const rows = (html: string) => html.match(/<tr><td data-label="When">/g)?.length ?? 0;

describe("the owner's page", () => {
  test("the table names who did what on what; the header links to it", async () => {
    const res = await cp.request("POST", "/api/v1/links", { key: owner.key, json: { url: "https://example.com/p", slug: "audit-page-link" } });
    expect(res.status).toBe(201);
    const page = await visitor.request("/dashboard/audit");
    expect(page.status).toBe(200);
    expect(page.html).toContain("<h1>Audit log</h1>");
    expect(page.html).toContain('<a href="/dashboard/audit">Audit log</a>');
    const linkRow = page.html.split("<tr>").find((r) => r.includes("<code>link.created</code>"))!;
    expect(linkRow).toContain(OWNER);
    expect(linkRow).toContain(`API key <code>${owner.caller.keyId}</code>`);
    expect(linkRow).toContain("audit-page-link");
    // The sign-in that opened this page is there too, by the person with no key.
    const signIn = page.html.split("<tr>").find((r) => r.includes("<code>session.signed_in</code>"))!;
    expect([signIn.includes(OWNER), signIn.includes("API key")]).toEqual([true, false]);
    expect(page.html).toContain("Entries are kept 365 days.");
  });

  test("filters narrow the table; a bad one is the form's error, answered 400", async () => {
    const filtered = await visitor.request("/dashboard/audit?action=link.created");
    expect(filtered.html).toContain('<option value="link.created" selected>');
    expect(filtered.html).not.toContain("<code>session.signed_in</code>");
    expect(rows(filtered.html)).toBe(1);
    const none = await visitor.request("/dashboard/audit?actor=nobody%40example.com");
    expect([rows(none.html), none.html.includes("No entry matches these filters.")]).toEqual([0, true]);
    const bad = await visitor.request("/dashboard/audit?from=not-a-day");
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('href="#from"');
    expect(bad.html).toMatch(/id="from" name="from" value="not-a-day" type="date" aria-invalid="true"/);
    // A `to` day includes the whole of that day.
    const today = new Date(cp.clock.now()).toISOString().slice(0, 10);
    expect(rows((await visitor.request(`/dashboard/audit?action=link.created&to=${today}`)).html)).toBe(1);
  });

  test("50 a page, newest first; older ones a link away, and back to the newest", async () => {
    for (let i = 0; i < 55; i++) {
      cp.clock.advance(1_000);
      await recordAudit(cp.deps, owner.caller, "domain.updated", { type: "domain", id: `d${i}` }, { hostname: `h${i}.example.com` });
    }
    const first = await visitor.request("/dashboard/audit?action=domain.updated");
    expect(rows(first.html)).toBe(50);
    expect(first.html.indexOf("h54.example.com")).toBeLessThan(first.html.indexOf("h53.example.com"));
    const older = first.html.match(/<a href="([^"]+)">Older entries →<\/a>/)![1]!.replaceAll("&amp;", "&");
    const second = await visitor.request(older);
    expect(rows(second.html)).toBe(5);
    expect(second.html).toContain("h0.example.com");
    expect(second.html).toContain('<a href="/dashboard/audit?action=domain.updated">← Newest</a>');
    expect(second.html).not.toContain("Older entries");
  });
});

describe("a member of a shared workspace", () => {
  test("has no link to it and gets the 403 page; the owner sees the member join and sign in", async () => {
    const team = await createWorkspace(cp.deps, owner.account.id, { name: "Audit team" });
    const inTeam = { ...owner.caller, workspaceId: team.id, keyId: null };
    const invitation = await createInvitation(cp.deps, inTeam, { role: "member" });
    const member = await cp.account("audit-page-member@example.com");
    await acceptInvitation(cp.deps, member.id, new URL(invitation.url).pathname.split("/").pop());
    const m = await signedInVisitor(cp, BASE_URL, member.email, passwordOf(member.email));
    expect((await m.submit("/dashboard/links", "/dashboard/workspace/switch", { workspace: team.id })).status).toBe(303);
    const links = await m.request("/dashboard/links");
    expect(links.html).toContain("Audit team");
    expect(links.html).not.toContain('href="/dashboard/audit"');
    const refused = await m.request("/dashboard/audit");
    expect(refused.status).toBe(403);
    expect(refused.html).toContain("Reading the audit log needs the admin role or higher");

    expect((await visitor.submit("/dashboard/links", "/dashboard/workspace/switch", { workspace: team.id })).status).toBe(303);
    const seen = await visitor.request("/dashboard/audit");
    const actions = [...seen.html.matchAll(/<td data-label="What"><code>([a-z_.]+)<\/code>/g)].map((x) => x[1]);
    expect(actions).toEqual(["session.signed_in", "invitation.accepted", "invitation.created", "workspace.created"]);
    expect(seen.html).toContain("audit-page-member@example.com");
  });
});

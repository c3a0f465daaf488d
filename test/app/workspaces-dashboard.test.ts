/**
 * Workspaces in the dashboard, in process (issue #24): the header's switcher, a new workspace, its settings (rename,
 * delete confirmed by name, leave), members (role, remove), invitations (made, shown once, revoked) and taking one
 * (signed out: sign up and come back; refused links in words), and what each role sees and may do on every page.
 * Two people throughout: the owner invites, the other accepts and sees the shared workspace's links.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { csrfOf, signedInVisitor, Visitor } from "../helpers/dashboard-visitor.ts";
import { BASE_URL, passwordOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

let cp: InProcessControlPlane;
beforeAll(async () => {
  cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
});
afterAll(() => cp?.close());

const signedIn = (email: string): Promise<Visitor> => signedInVisitor(cp, BASE_URL, email, passwordOf(email));
const DAY = 86_400_000;

/** The header's workspace names, in order, and the current one (the switcher's ticked button). */
function switcherOf(html: string): { names: string[]; current: string | null } {
  const menu = /<details class="ws">[\s\S]*?<\/details>/.exec(html)?.[0] ?? "";
  const names = [...menu.matchAll(/<span class="ws-item">([^<]*)<\/span>/g)].map((m) => m[1]!);
  const current = /aria-current="true"><span class="ws-item">([^<]*)</.exec(menu)?.[1] ?? null;
  return { names, current };
}

/** Creates a workspace through the form; the session acts for it afterwards. */
async function newWorkspace(v: Visitor, name: string): Promise<void> {
  const made = await v.submit("/dashboard/workspaces/new", "/dashboard/workspaces", { name });
  expect([made.status, made.headers.get("location")]).toEqual([303, "/dashboard/members?flash=workspace-created"]);
}

/** An invitation link made on the members page (the page after the redirect shows it once). */
async function invite(v: Visitor, role: string, days = "7"): Promise<string> {
  const made = await v.submit("/dashboard/members", "/dashboard/members/invitations", { role, expiresInDays: days });
  expect([made.status, made.headers.get("location")]).toEqual([303, "/dashboard/members"]);
  const shown = await v.get("/dashboard/members");
  const url = /id="new-invite" class="mono" readonly value="([^"]+)"/.exec(shown.html)?.[1];
  expect(url).toStartWith(`${BASE_URL}/dashboard/invitations/`);
  return url!.slice(BASE_URL.length);
}

async function switchTo(v: Visitor, name: string): Promise<void> {
  const page = await v.get("/dashboard/links");
  const id = new RegExp(`name="workspace" value="([^"]+)"[^>]*><span class="ws-item">${name}<`).exec(page.html)?.[1];
  const res = await v.post("/dashboard/workspace/switch", { _csrf: csrfOf(page.html), workspace: id ?? "" });
  expect([res.status, res.headers.get("location")]).toEqual([303, "/dashboard/links?flash=workspace-switched"]);
}

describe("the header's switcher and a new workspace", () => {
  test("personal first with the role; a new workspace is made, switched to, and listed; the switch is a CSRF-checked POST", async () => {
    const v = await signedIn("ws-switch@example.com");
    const home = await v.get("/dashboard/links");
    expect(switcherOf(home.html)).toEqual({ names: ["Personal"], current: "Personal" });
    expect(home.html).toContain('action="/dashboard/workspace/switch"');
    expect(home.html).toContain('href="/dashboard/workspaces/new"');

    const blank = await v.submit("/dashboard/workspaces/new", "/dashboard/workspaces", { name: "   " });
    expect(blank.status).toBe(400);
    expect(blank.html).toContain("data-error-summary");
    expect(blank.html).toContain('id="ws-name" name="name" required maxlength="80" value="   " aria-invalid="true" aria-describedby="ws-name-error"');
    const long = await v.submit("/dashboard/workspaces/new", "/dashboard/workspaces", { name: "x".repeat(81) });
    expect([long.status, long.html.includes('<a href="#ws-name">Name: must be at most 80 characters')]).toEqual([400, true]);

    await newWorkspace(v, "Acme <Team>");
    const members = await v.get("/dashboard/members?flash=workspace-created");
    expect(members.html).toContain("Workspace created.");
    expect(members.html).toContain("Members of Acme &lt;Team&gt;");
    expect(switcherOf(members.html)).toEqual({ names: ["Personal", "Acme &lt;Team&gt;"], current: "Acme &lt;Team&gt;" });

    await switchTo(v, "Personal");
    expect(switcherOf((await v.get("/dashboard/links?flash=workspace-switched")).html).current).toBe("Personal");
    const csrf = csrfOf(home.html);
    const unknown = await v.post("/dashboard/workspace/switch", { _csrf: csrf, workspace: "ws_not-mine" });
    expect([unknown.status, unknown.html.includes("No workspace")]).toEqual([404, true]);
    expect((await v.post("/dashboard/workspace/switch", { workspace: "ws_x" })).status).toBe(403); // no CSRF token
    const other = await signedIn("ws-switch-other@example.com");
    const someoneElses = await v.post("/dashboard/workspace/switch", { _csrf: csrf, workspace: (await cp.account("ws-switch-other@example.com")).id });
    expect(someoneElses.status).toBe(404); // another person's personal workspace: no existence leaks
    expect(switcherOf((await other.get("/dashboard/links")).html).names).toEqual(["Personal"]);
  });
});

describe("settings", () => {
  test("rename (refused name kept and marked), a personal workspace cannot be deleted, delete needs the name typed", async () => {
    const v = await signedIn("ws-settings@example.com");
    const personal = await v.get("/dashboard/workspace");
    expect(personal.html).toContain("This is your personal workspace: it cannot be deleted or left.");
    expect(personal.html).not.toContain('action="/dashboard/workspace/delete"');
    expect(personal.html).not.toContain('action="/dashboard/workspace/leave"');
    const alone = await v.get("/dashboard/members");
    expect(alone.html).toContain("This is a personal workspace.");
    expect(alone.html).not.toContain("Leave…");

    await newWorkspace(v, "Settings Co");
    const bad = await v.submit("/dashboard/workspace", "/dashboard/workspace/rename", { name: "" });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('value="" aria-invalid="true"');
    const renamed = await v.submit("/dashboard/workspace", "/dashboard/workspace/rename", { name: "Settings Inc" });
    expect([renamed.status, renamed.headers.get("location")]).toEqual([303, "/dashboard/workspace?flash=workspace-renamed"]);
    const page = await v.get("/dashboard/workspace?flash=workspace-renamed");
    expect(page.html).toContain("Workspace renamed.");
    expect(switcherOf(page.html).current).toBe("Settings Inc");
    // The only owner cannot leave: the page says what to do instead of offering the button.
    expect(page.html).toContain("You are this workspace's only owner");

    const wrong = await v.submit("/dashboard/workspace", "/dashboard/workspace/delete", { confirm: "Settings" });
    expect(wrong.status).toBe(400);
    expect(wrong.html).toContain('id="ws-confirm" name="confirm" required autocomplete="off" aria-invalid="true"');
    expect(wrong.html).toContain("must be the workspace&#39;s name, “Settings Inc”, typed exactly");
    const forced = await v.submit("/dashboard/workspace", "/dashboard/workspace/leave", {});
    expect([forced.status, forced.html.includes("last owner")]).toEqual([409, true]);

    const deleted = await v.submit("/dashboard/workspace", "/dashboard/workspace/delete", { confirm: "Settings Inc" });
    expect([deleted.status, deleted.headers.get("location")]).toEqual([303, "/dashboard/links?flash=workspace-deleted"]);
    const after = await v.get("/dashboard/links?flash=workspace-deleted");
    expect(after.html).toContain("Workspace deleted.");
    expect(switcherOf(after.html)).toEqual({ names: ["Personal"], current: "Personal" });
    // A personal workspace refused by the service itself, should the form be forged.
    const personalDelete = await v.submit("/dashboard/workspace", "/dashboard/workspace/delete", { confirm: "Personal" });
    expect([personalDelete.status, personalDelete.html.includes("A personal workspace cannot be deleted")]).toEqual([409, true]);
  });
});

describe("two people: invitations, roles and what each sees", () => {
  test("the owner invites a viewer; signed out they sign up and come back, accept, and see the shared links read-only", async () => {
    const owner = await signedIn("ws-owner@example.com");
    await newWorkspace(owner, "Shared Team");
    const link = await owner.submit("/dashboard/links/new", "/dashboard/links", { url: "https://example.com/shared", slug: "team-shared" });
    expect(link.status).toBe(303);

    const badDays = await owner.submit("/dashboard/members", "/dashboard/members/invitations", { role: "viewer", expiresInDays: "0" });
    expect(badDays.status).toBe(400);
    expect(badDays.html).toContain('id="inv-days" name="expiresInDays"');
    expect(badDays.html).toMatch(/id="inv-days"[^>]*value="0" aria-invalid="true"/);
    expect(badDays.html).toContain('<a href="#inv-days">Valid for: must be at least 1');

    const path = await invite(owner, "viewer");
    // The link is shown once: the next load has no hand-off left.
    expect((await owner.get("/dashboard/members")).html).not.toContain('id="new-invite"');
    const pending = await owner.get("/dashboard/members");
    expect(pending.html).toContain("Pending invitations");
    expect(pending.html).toMatch(/<td data-label="Role">viewer<\/td>/);

    // Signed out: the offer names the workspace and role, and sign-in/sign-up come back here.
    const guest = new Visitor(BASE_URL, (r) => cp.handle(r));
    const offer = await guest.get(path);
    expect(offer.status).toBe(200);
    expect(offer.html).toContain("You are invited to join <strong>Shared Team</strong> as a <strong>viewer</strong>");
    const next = encodeURIComponent(path);
    expect(offer.html).toContain(`href="/dashboard/signin?next=${next}"`);
    expect(offer.html).toContain(`href="/dashboard/signup?next=${next}"`);
    const signUp = await guest.submit(`/dashboard/signup?next=${next}`, "/dashboard/signup", { email: "ws-viewer@example.com", password: "a good long password", next: path });
    expect([signUp.status, signUp.headers.get("location")]).toEqual([303, path]);
    const signedInOffer = await guest.get(path);
    expect(signedInOffer.html).toContain("Accept and join");
    const accepted = await guest.post(path, { _csrf: csrfOf(signedInOffer.html) });
    expect([accepted.status, accepted.headers.get("location")]).toEqual([303, "/dashboard/links?flash=invitation-accepted"]);

    // The viewer acts for the shared workspace: its links, no create, edit, delete, bulk or import.
    const list = await guest.get("/dashboard/links?flash=invitation-accepted");
    expect(switcherOf(list.html).current).toBe("Shared Team");
    expect(list.html).toContain("team-shared");
    for (const control of ['href="/dashboard/links/new"', 'href="/dashboard/links/team-shared/edit"', 'href="/dashboard/links/team-shared/delete"', 'action="/dashboard/links/bulk"', 'href="/dashboard/imports"']) {
      expect(list.html).not.toContain(control);
    }
    const stats = await guest.get("/dashboard/links/team-shared/stats");
    expect(stats.status).toBe(200);
    expect(stats.html).not.toContain("/edit");
    expect((await guest.get("/dashboard/analytics")).status).toBe(200);
    // Refused on the server too, whatever is posted: a 403 page in words, never a 500.
    const csrf = csrfOf(list.html);
    const refusals = [
      await guest.get("/dashboard/links/new"),
      await guest.post("/dashboard/links", { _csrf: csrf, url: "https://example.com/no" }),
      await guest.get("/dashboard/links/team-shared/edit"),
      await guest.post("/dashboard/links/team-shared/delete", { _csrf: csrf }),
      await guest.post("/dashboard/links/bulk", { _csrf: csrf, slug: "team-shared", action: "pause" }),
      await guest.get("/dashboard/imports"),
      await guest.post("/dashboard/members/invitations", { _csrf: csrf, role: "viewer", expiresInDays: "7" }),
      await guest.post("/dashboard/workspace/rename", { _csrf: csrf, name: "Mine now" }),
      await guest.get("/dashboard/webhooks"),
    ];
    for (const r of refusals) {
      expect(r.status).toBe(403);
      expect(r.html).toContain("Not allowed in this workspace");
      expect(r.html).toContain("you are a viewer");
    }
    expect((await cp.deps.store.getWorkspace((await cp.account("ws-owner@example.com")).id))?.name).toBe("Personal");
    // The members page shows who is there, with no controls for a viewer.
    const members = await guest.get("/dashboard/members");
    expect(members.html).toContain("ws-owner@example.com");
    expect(members.html).not.toContain("/remove");
    expect(members.html).not.toContain('action="/dashboard/members/invitations"');
    // Keys: a viewer makes their own (what they may do is bounded by the role); no webhook link for a non-admin.
    const keys = await guest.get("/dashboard/keys");
    expect([keys.status, keys.html.includes('href="/dashboard/webhooks"')]).toEqual([200, false]);
    expect((await guest.get("/dashboard/apps")).status).toBe(200);
    // A domain page for a non-admin: the list, no add form.
    const domains = await guest.get("/dashboard/domains");
    expect([domains.status, domains.html.includes('action="/dashboard/domains"')]).toEqual([200, false]);

    // The link works once.
    const reused = await (await signedIn("ws-latecomer@example.com")).get(path);
    expect([reused.status, reused.html.includes("Invitation already used")]).toEqual([409, true]);
  });

  test("roles changed and members removed by the owner; refusals on the page; the removed member falls back to personal", async () => {
    const owner = await signedIn("ws-boss@example.com");
    await newWorkspace(owner, "Roles Team");
    const pathMember = await invite(owner, "member");
    const pathAdmin = await invite(owner, "admin");
    const m = await signedIn("ws-member@example.com");
    const a = await signedIn("ws-admin@example.com");
    for (const [v, path] of [[m, pathMember], [a, pathAdmin]] as const) {
      const page = await v.get(path);
      expect((await v.post(path, { _csrf: csrfOf(page.html) })).status).toBe(303);
    }
    // Already a member: said in words.
    const again = await owner.get(await invite(owner, "viewer"));
    expect([again.status, again.html.includes("Already a member")]).toEqual([409, true]);

    // A member writes links, but manages no domain and sees no member controls.
    expect((await m.submit("/dashboard/links/new", "/dashboard/links", { url: "https://example.com/m", slug: "by-member" })).status).toBe(303);
    const domain = await m.submit("/dashboard/domains", "/dashboard/domains", { hostname: "go.member.example", method: "dns" });
    expect([domain.status, domain.html.includes("you are a member")]).toEqual([403, true]);
    expect((await m.get("/dashboard/members")).html).not.toContain("/role");
    const hooks = await m.get("/dashboard/webhooks");
    expect([hooks.status, hooks.html.includes("needs the admin role or higher in this workspace; you are a member")]).toEqual([403, true]);
    expect((await m.get("/dashboard/keys")).html).not.toContain('href="/dashboard/webhooks"');
    expect((await owner.get("/dashboard/keys")).html).toContain('href="/dashboard/webhooks"');

    // An admin changes a member's role but is offered no owner role, and is refused one when it is forged.
    const adminView = await a.get("/dashboard/members");
    expect(adminView.html).toContain('action="/dashboard/members/invitations"');
    expect(adminView.html).not.toContain('<option value="owner"');
    const memberId = (await cp.account("ws-member@example.com")).id;
    const promote = await a.post(`/dashboard/members/${memberId}/role`, { _csrf: csrfOf(adminView.html), role: "owner" });
    expect(promote.status).toBe(403);
    expect(promote.html).toContain("data-error-summary");
    expect(promote.html).toContain("Making or unmaking an owner needs the owner role");
    const toViewer = await a.post(`/dashboard/members/${memberId}/role`, { _csrf: csrfOf(adminView.html), role: "viewer" });
    expect([toViewer.status, toViewer.headers.get("location")]).toEqual([303, "/dashboard/members?flash=role-changed"]);
    // From the member's next request on, the role is viewer.
    expect((await m.get("/dashboard/links/new")).status).toBe(403);

    // The owner's row has no controls for an admin; the owner cannot remove the last owner (themselves) either.
    const ownerId = (await cp.account("ws-boss@example.com")).id;
    expect(adminView.html).not.toContain(`/dashboard/members/${ownerId}/remove`);
    const lastOwner = await owner.post(`/dashboard/members/${ownerId}/remove`, { _csrf: csrfOf((await owner.get("/dashboard/members")).html) });
    expect([lastOwner.status, lastOwner.html.includes("last owner")]).toEqual([409, true]);

    // Removing the member: their session falls back to their personal workspace at once.
    const ownerView = await owner.get("/dashboard/members");
    const removed = await owner.post(`/dashboard/members/${memberId}/remove`, { _csrf: csrfOf(ownerView.html) });
    expect([removed.status, removed.headers.get("location")]).toEqual([303, "/dashboard/members?flash=member-removed"]);
    const back = await m.get("/dashboard/links");
    expect(switcherOf(back.html)).toEqual({ names: ["Personal"], current: "Personal" });
    expect(back.html).not.toContain("by-member");

    // The admin leaves from the settings page.
    const settings = await a.get("/dashboard/workspace");
    expect(settings.html).toContain('action="/dashboard/workspace/leave"');
    expect(settings.html).not.toContain('action="/dashboard/workspace/delete"'); // owners only
    const left = await a.post("/dashboard/workspace/leave", { _csrf: csrfOf(settings.html) });
    expect([left.status, left.headers.get("location")]).toEqual([303, "/dashboard/links?flash=workspace-left"]);
    expect(switcherOf((await a.get("/dashboard/links")).html).names).toEqual(["Personal"]);
  });

  test("revoked, expired and unknown links are pages in words; a revoke is listed no more", async () => {
    const owner = await signedIn("ws-revoker@example.com");
    await newWorkspace(owner, "Revoke Team");
    const path = await invite(owner, "member");
    const page = await owner.get("/dashboard/members");
    const revoke = /action="(\/dashboard\/members\/invitations\/inv_[^"]+\/revoke)"/.exec(page.html)![1]!;
    const done = await owner.post(revoke, { _csrf: csrfOf(page.html) });
    expect([done.status, done.headers.get("location")]).toEqual([303, "/dashboard/members?flash=invitation-revoked"]);
    expect((await owner.get("/dashboard/members")).html).toContain("No pending invitations.");
    const other = await signedIn("ws-invitee@example.com");
    const revoked = await other.get(path);
    expect([revoked.status, revoked.html.includes("Invitation revoked")]).toEqual([410, true]);
    expect((await other.post(path, { _csrf: csrfOf(revoked.html) })).status).toBe(410);

    // Signing in from an invitation's page comes back to it.
    const live = await invite(owner, "member");
    await cp.account("ws-returning@example.com");
    const returning = new Visitor(BASE_URL, (r) => cp.handle(r));
    const signIn = await returning.submit(`/dashboard/signin?next=${encodeURIComponent(live)}`, "/dashboard/signin", { email: "ws-returning@example.com", password: passwordOf("ws-returning@example.com"), next: live });
    expect([signIn.status, signIn.headers.get("location")]).toEqual([303, live]);
    expect((await returning.get(live)).html).toContain("Accept and join");

    const short = await invite(owner, "member", "1");
    cp.clock.advance(DAY + 1);
    const expired = await other.get(short);
    expect([expired.status, expired.html.includes("Invitation expired")]).toEqual([410, true]);
    const unknown = await other.get("/dashboard/invitations/abc");
    expect([unknown.status, unknown.html.includes("Invitation not found")]).toEqual([404, true]);
    const forged = await new Visitor(BASE_URL, (r) => cp.handle(r)).get(`/dashboard/invitations/${"A".repeat(32)}`);
    expect([forged.status, forged.html.includes("Invitation not found")]).toEqual([404, true]);
  });
});

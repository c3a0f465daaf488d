/**
 * IDOR through the dashboard (issue #24): every dashboard page and form that names an id or a slug, asked by a person
 * signed in and working in workspace B with the ids and slugs of workspace A, answers 404 and changes nothing of A's.
 * The table is checked against the app's own list of dashboard routes, so a new page with a parameter is here too.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildControlPlane } from "../../control/app.ts";
import { csrfOf, Visitor } from "../helpers/dashboard-visitor.ts";
import { BASE_URL, jsonOf, passwordOf, startControlPlane, START_TIME, type InProcessControlPlane } from "../helpers/in-process.ts";
import { fixturesFor, type Fixtures } from "./scoped-routes.ts";
import { team, type Team } from "./workspaces-helpers.ts";

let cp: InProcessControlPlane;
let a: Team;
let keyA: string;
let fxA: Fixtures;
let visitorB: Visitor;

/** A's thing a route names, and how A's own key checks it is still as it was afterwards (the status it expects). */
interface Target {
  params: () => Promise<Record<string, string>>;
  stillThere?: (params: Record<string, string>) => Promise<[string, number]>;
}
const onLink: Target = { params: async () => ({ slug: await fxA.link() }), stillThere: async (p) => [`/api/v1/links/${p.slug}`, 200] };
const onWebhook: Target = { params: async () => ({ id: await fxA.webhook() }), stillThere: async (p) => [`/api/v1/webhooks/${p.id}`, 200] };
const onDomain: Target = { params: async () => ({ id: await fxA.domain() }), stillThere: async (p) => [`/api/v1/domains/${p.id}`, 200] };
const onMember: Target = { params: async () => ({ accountId: await fxA.member() }), stillThere: async () => ["/api/v1/workspace/members", 200] };

const TARGETS: Record<string, Target> = {
  "POST /dashboard/keys/:id/revoke": {
    // A's only key: the one this test checks A's data with, so it must still work afterwards.
    params: async () => ({ id: (await cp.deps.store.listApiKeys(a.workspaceId))[0]!.id }),
    stillThere: async () => ["/api/v1/links", 200],
  },
  "POST /dashboard/apps/:id/revoke": { params: async () => ({ id: await grantOfA() }) },
  "GET /dashboard/links/:slug/stats": onLink,
  "GET /dashboard/links/:slug/qr.svg": onLink,
  "GET /dashboard/links/:slug/clicks.csv": onLink,
  "GET /dashboard/links/:slug/edit": onLink,
  "POST /dashboard/links/:slug/edit": onLink,
  "GET /dashboard/links/:slug/delete": onLink,
  "POST /dashboard/links/:slug/delete": onLink,
  "POST /dashboard/links/:slug/webhook/resume": onLink,
  "GET /dashboard/webhooks/:id": onWebhook,
  "POST /dashboard/webhooks/:id/active": onWebhook,
  "POST /dashboard/webhooks/:id/delete": onWebhook,
  "POST /dashboard/webhooks/:id/deliveries/:deliveryId/retry": { params: async () => fxA.delivery(), stillThere: async (p) => [`/api/v1/webhooks/${p.id}`, 200] },
  "POST /dashboard/domains/:id/verify": onDomain,
  "POST /dashboard/domains/:id/delete": onDomain,
  "POST /dashboard/members/invitations/:id/revoke": { params: async () => ({ id: await fxA.invitation() }) },
  "POST /dashboard/members/:accountId/role": onMember,
  "POST /dashboard/members/:accountId/remove": onMember,
  "GET /dashboard/imports/:id": { params: async () => ({ id: await fxA.importJob() }), stillThere: async (p) => [`/api/v1/imports/${p.id}`, 200] },
};
/** Parameters that name no data (a static file). */
const NOT_DATA = ["GET /dashboard/static/:file", "GET /dashboard/invitations/:token", "POST /dashboard/invitations/:token"];

/** An OAuth grant of A's owner (connected applications are a person's), written as the token endpoint writes one. */
async function grantOfA(): Promise<string> {
  const id = `grant-${crypto.randomUUID()}`;
  const base = { grantId: id, createdAt: START_TIME, expiresAt: START_TIME + 3_600_000 };
  await cp.deps.store.createOAuthGrant(
    { id, accountId: a.owner.id, workspaceId: a.workspaceId, clientId: "c", clientName: "App of A", scopes: ["links:read"], resource: `${BASE_URL}/mcp`, createdAt: START_TIME, lastUsedAt: null, revokedAt: null },
    { tokenHash: `r-${id}`, usedAt: null, ...base },
    { tokenHash: `a-${id}`, scopes: ["links:read"], ...base },
  );
  return id;
}

beforeAll(async () => {
  cp = await startControlPlane({ env: { WEBHOOK_ALLOW_PRIVATE: "true", RATE_LIMIT_PER_MINUTE: "100000" } });
  a = await team(cp, "dash-idor-a@example.com", "A's workspace");
  keyA = await a.keyOf(a.owner);
  fxA = fixturesFor(cp, keyA);
  const b = await team(cp, "dash-idor-b@example.com", "B's workspace");
  visitorB = new Visitor(BASE_URL, cp.handle);
  await visitorB.submit("/dashboard/signin", "/dashboard/signin", { email: b.owner.email, password: passwordOf(b.owner.email) });
  const page = await visitorB.get("/dashboard/links");
  expect((await visitorB.post("/dashboard/workspace/switch", { _csrf: csrfOf(page.html), workspace: b.workspaceId })).status).toBe(303);
});
afterAll(() => cp?.close());

test("the table holds every dashboard route with a parameter", async () => {
  const routes = (buildControlPlane(cp.deps).app.routes as { method: string; path: string }[])
    .filter((r) => r.path.startsWith("/dashboard/") && r.path.includes("/:") && r.method !== "ALL")
    .map((r) => `${r.method} ${r.path}`);
  expect(routes.sort()).toEqual([...Object.keys(TARGETS), ...NOT_DATA].sort());
});

describe("A's ids and slugs in B's dashboard: 404, A's data unchanged", () => {
  for (const [route, target] of Object.entries(TARGETS)) {
    test(route, async () => {
      const [method, template] = route.split(" ") as [string, string];
      const params = await target.params();
      const path = template.replace(/:(\w+)/g, (_, n: string) => encodeURIComponent(params[n]!));
      const csrf = csrfOf((await visitorB.get("/dashboard/links")).html);
      const res = method === "GET" ? await visitorB.get(path) : await visitorB.post(path, { _csrf: csrf, role: "viewer", active: "false", links: "delete" });
      expect([route, res.status]).toEqual([route, 404]);
      expect(res.html).not.toContain("example.com/fixture");
      expect(res.html).not.toContain("A's workspace");
      if (target.stillThere) {
        const [check, status] = await target.stillThere(params);
        const own = await cp.request("GET", check, { key: keyA });
        expect([route, own.status]).toEqual([route, status]);
        if (route.startsWith("POST /dashboard/members/")) expect(JSON.stringify(await jsonOf(own))).toContain(params.accountId!);
      }
    });
  }
});

test("A's OAuth grant and invitations survived B's attempts", async () => {
  const grants = await cp.deps.store.listOAuthGrants(a.owner.id, START_TIME);
  expect(grants.length).toBeGreaterThan(0);
  expect(grants.every((g) => g.revokedAt === null)).toBe(true);
  const { invitations } = await jsonOf(await cp.request("GET", "/api/v1/workspace/invitations", { key: keyA }));
  expect(invitations.filter((i: { state: string }) => i.state === "revoked")).toEqual([]);
});

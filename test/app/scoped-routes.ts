/**
 * The REST API's routes and the scope each needs (issue #23), declared once for the scope tests: each entry is a
 * route as the app lists it ("METHOD /api/v1/path/:param"), its scope, its success status, and how to call it for
 * real (a fresh link to delete, an endpoint to change...), its fixtures made with a key holding every scope.
 */
import { expect } from "bun:test";
import { buildControlPlane } from "../../control/app.ts";
import { createApiKey } from "../../control/keys/service.ts";
import { acceptInvitation } from "../../control/workspaces/service.ts";
import type { Scope } from "../../shared/enums.ts";
import { BASE_URL, jsonOf, problemOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

/** What a route is called with: values for its :params, a query string, a JSON or raw body. */
export interface RouteCall {
  params?: Record<string, string>;
  query?: string;
  json?: unknown;
  body?: string;
}

/** Makes what a call needs in the account, with a key that may do everything. */
export interface Fixtures {
  /** A new link's slug. */
  link(): Promise<string>;
  /** A new event-webhook endpoint's id. */
  webhook(): Promise<string>;
  /** A delivery of a new endpoint: its endpoint's id and its own. */
  delivery(): Promise<{ id: string; deliveryId: string }>;
  /** A new import job's id. */
  importJob(): Promise<string>;
  /** A new (pending) custom domain's id. */
  domain(): Promise<string>;
  /** A new member (invited as a member, the invitation taken by a new account) of the key's workspace: their account id. */
  member(): Promise<string>;
  /** A new pending invitation's id. */
  invitation(): Promise<string>;
}

export interface ScopedRoute {
  route: string;
  scope: Scope;
  ok: number;
  call: (fx: Fixtures) => Promise<RouteCall>;
}

const none = async (): Promise<RouteCall> => ({});
const onLink = (extra: Omit<RouteCall, "params"> = {}) => async (fx: Fixtures): Promise<RouteCall> => ({ params: { slug: await fx.link() }, ...extra });
const onWebhook = (extra: Omit<RouteCall, "params"> = {}) => async (fx: Fixtures): Promise<RouteCall> => ({ params: { id: await fx.webhook() }, ...extra });
const onDomain = (extra: Omit<RouteCall, "params"> = {}) => async (fx: Fixtures): Promise<RouteCall> => ({ params: { id: await fx.domain() }, ...extra });
const onMember = (extra: Omit<RouteCall, "params"> = {}) => async (fx: Fixtures): Promise<RouteCall> => ({ params: { accountId: await fx.member() }, ...extra });
const IMPORT_CSV = "long_url\nhttps://example.com/imported\n";

export const SCOPED_ROUTES: ScopedRoute[] = [
  { route: "GET /api/v1/links", scope: "links:read", ok: 200, call: none },
  { route: "GET /api/v1/links/:slug", scope: "links:read", ok: 200, call: onLink() },
  { route: "GET /api/v1/links/export", scope: "links:read", ok: 200, call: none },
  { route: "GET /api/v1/links/:slug/qr", scope: "links:read", ok: 200, call: onLink() },
  { route: "GET /api/v1/imports", scope: "links:read", ok: 200, call: none },
  { route: "GET /api/v1/imports/:id", scope: "links:read", ok: 200, call: async (fx) => ({ params: { id: await fx.importJob() } }) },
  { route: "POST /api/v1/links", scope: "links:write", ok: 201, call: async () => ({ json: { url: "https://example.com/new" } }) },
  { route: "PATCH /api/v1/links/:slug", scope: "links:write", ok: 200, call: onLink({ json: { folder: "scoped" } }) },
  { route: "DELETE /api/v1/links/:slug", scope: "links:write", ok: 204, call: onLink() },
  { route: "POST /api/v1/bulk", scope: "links:write", ok: 200, call: async () => ({ json: [{ url: "https://example.com/bulk" }] }) },
  { route: "PATCH /api/v1/links/bulk", scope: "links:write", ok: 200, call: async (fx) => ({ json: { slugs: [await fx.link()], changes: { folder: "bulk" } } }) },
  { route: "POST /api/v1/links/bulk-delete", scope: "links:write", ok: 200, call: async (fx) => ({ json: { slugs: [await fx.link()] } }) },
  { route: "POST /api/v1/imports", scope: "links:write", ok: 202, call: async () => ({ query: "?format=bitly", body: IMPORT_CSV }) },
  { route: "GET /api/v1/domains", scope: "links:read", ok: 200, call: none },
  { route: "GET /api/v1/domains/:id", scope: "links:read", ok: 200, call: onDomain() },
  { route: "POST /api/v1/domains", scope: "links:write", ok: 201, call: async () => ({ json: { hostname: `go${crypto.randomUUID().slice(0, 8)}.example.com` } }) },
  { route: "PATCH /api/v1/domains/:id", scope: "links:write", ok: 200, call: onDomain({ json: { rootRedirect: "https://example.com/" } }) },
  { route: "POST /api/v1/domains/:id/verify", scope: "links:write", ok: 200, call: onDomain() },
  { route: "DELETE /api/v1/domains/:id", scope: "links:write", ok: 204, call: onDomain() },
  { route: "GET /api/v1/audit", scope: "links:read", ok: 200, call: none },
  { route: "GET /api/v1/links/:slug/stats", scope: "stats:read", ok: 200, call: onLink() },
  { route: "GET /api/v1/stats", scope: "stats:read", ok: 200, call: none },
  { route: "GET /api/v1/links/:slug/clicks.csv", scope: "stats:read", ok: 200, call: onLink() },
  { route: "GET /api/v1/clicks.csv", scope: "stats:read", ok: 200, call: none },
  { route: "POST /api/v1/webhooks", scope: "webhooks:manage", ok: 201, call: async () => ({ json: { url: "http://127.0.0.1:9/hook", events: ["link.created"] } }) },
  { route: "GET /api/v1/webhooks", scope: "webhooks:manage", ok: 200, call: none },
  { route: "GET /api/v1/webhooks/:id", scope: "webhooks:manage", ok: 200, call: onWebhook() },
  { route: "PATCH /api/v1/webhooks/:id", scope: "webhooks:manage", ok: 200, call: onWebhook({ json: { active: false } }) },
  { route: "DELETE /api/v1/webhooks/:id", scope: "webhooks:manage", ok: 204, call: onWebhook() },
  { route: "GET /api/v1/webhooks/:id/deliveries", scope: "webhooks:manage", ok: 200, call: onWebhook() },
  { route: "POST /api/v1/webhooks/:id/deliveries/:deliveryId/retry", scope: "webhooks:manage", ok: 202, call: async (fx) => ({ params: await fx.delivery() }) },
  { route: "GET /api/v1/workspace", scope: "links:read", ok: 200, call: none },
  { route: "PATCH /api/v1/workspace", scope: "links:write", ok: 200, call: async () => ({ json: { name: "Renamed" } }) },
  // A key's personal workspace cannot be deleted: past the scope check, 409 personal_workspace (workspaces-roles.test.ts deletes a shared one).
  { route: "DELETE /api/v1/workspace", scope: "links:write", ok: 409, call: none },
  { route: "GET /api/v1/workspace/members", scope: "links:read", ok: 200, call: none },
  { route: "PATCH /api/v1/workspace/members/:accountId", scope: "links:write", ok: 200, call: onMember({ json: { role: "viewer" } }) },
  { route: "DELETE /api/v1/workspace/members/:accountId", scope: "links:write", ok: 204, call: onMember() },
  { route: "GET /api/v1/workspace/invitations", scope: "links:read", ok: 200, call: none },
  { route: "POST /api/v1/workspace/invitations", scope: "links:write", ok: 201, call: async () => ({ json: { role: "viewer" } }) },
  { route: "DELETE /api/v1/workspace/invitations/:id", scope: "links:write", ok: 204, call: async (fx) => ({ params: { id: await fx.invitation() } }) },
];

/** Routes that need no key at all (the OpenAPI document and its page). */
export const OPEN_ROUTES = ["GET /api/v1/openapi.json", "GET /api/v1/docs"];

/** The REST routes the app answers, as "METHOD path" (405 catch-alls left out), read from a control plane of its own. */
export async function appApiRoutes(): Promise<string[]> {
  const cp = await startControlPlane();
  try {
    const { app } = buildControlPlane(cp.deps);
    return (app.routes as { method: string; path: string }[])
      .filter((r) => r.path.startsWith("/api/v1/") && r.method !== "ALL")
      .map((r) => `${r.method} ${r.path}`);
  } finally {
    await cp.close();
  }
}

/** The request of a route's call, sent with `key`. */
export function requestOf(cp: InProcessControlPlane, r: ScopedRoute, c: RouteCall, key: string): Promise<Response> {
  const [method, template] = r.route.split(" ") as [string, string];
  const path = template.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(c.params?.[name] ?? `no-${name}`));
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (c.body !== undefined) headers["content-type"] = "text/csv";
  return cp.handle(new Request(`${BASE_URL}${path}${c.query ?? ""}`, {
    method, headers: c.json === undefined ? headers : { ...headers, "content-type": "application/json" },
    body: c.json === undefined ? c.body : JSON.stringify(c.json),
  }));
}

/** Fixtures in the account of `fullKey` (a key with every scope). */
export function fixturesFor(cp: InProcessControlPlane, fullKey: string): Fixtures {
  const made = async (method: string, path: string, json: unknown, status: number) => {
    const res = await cp.request(method, path, { key: fullKey, json });
    expect(res.status).toBe(status);
    return jsonOf(res);
  };
  let n = 0;
  const fx: Fixtures = {
    link: async () => (await made("POST", "/api/v1/links", { url: "https://example.com/fixture", slug: `fx-${++n}-${crypto.randomUUID().slice(0, 8)}` }, 201)).slug,
    domain: async () => (await made("POST", "/api/v1/domains", { hostname: `fx${++n}-${crypto.randomUUID().slice(0, 8)}.example.com`, method: "http" }, 201)).id,
    webhook: async () => (await made("POST", "/api/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["link.created"] }, 201)).id,
    async delivery() {
      const id = await fx.webhook();
      await fx.link(); // its link.created event is a delivery of every endpoint listening
      const { deliveries } = await made("GET", `/api/v1/webhooks/${id}/deliveries`, undefined, 200);
      expect(deliveries.length).toBeGreaterThan(0);
      return { id, deliveryId: deliveries[0].id };
    },
    invitation: async () => (await made("POST", "/api/v1/workspace/invitations", { role: "member" }, 201)).id,
    async member() {
      const { url } = await made("POST", "/api/v1/workspace/invitations", { role: "member" }, 201);
      const person = await cp.account(`fx${++n}-${crypto.randomUUID().slice(0, 8)}@example.com`);
      await acceptInvitation(cp.deps, person.id, url.split("/").at(-1));
      return person.id;
    },
    async importJob() {
      const res = await cp.handle(new Request(`${BASE_URL}/api/v1/imports?format=bitly`, {
        method: "POST", headers: { authorization: `Bearer ${fullKey}`, "content-type": "text/csv" }, body: IMPORT_CSV,
      }));
      expect(res.status).toBe(202);
      return (await jsonOf(res)).id;
    },
  };
  return fx;
}

/** A key of the account with only these scopes. */
export async function keyWith(cp: InProcessControlPlane, accountId: string, scopes: Scope[]): Promise<string> {
  return (await createApiKey(cp.deps, accountId, scopes.join(" "), scopes)).key;
}

/**
 * Checks a refusal for a missing scope: 403 problem+json insufficient_scope, and the RFC 6750 challenge naming the
 * resource's RFC 9728 metadata and the scope needed, so that a client can ask for it.
 */
export async function expectInsufficientScope(res: Response, scope: Scope, resource: "api" | "mcp"): Promise<void> {
  const path = resource === "api" ? "/api/v1" : "/mcp";
  const problem = await problemOf(res, 403, "insufficient_scope");
  expect(problem.detail).toContain(scope);
  expect(res.headers.get("www-authenticate")).toBe(
    `Bearer realm="${resource}", resource_metadata="${BASE_URL}/.well-known/oauth-protected-resource${path}", error="insufficient_scope", scope="${scope}"`,
  );
}

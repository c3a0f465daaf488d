/**
 * REST routes for custom domains (docs/domains.md): thin handlers over domains/service.ts, and the `ask` endpoint
 * Caddy's on-demand TLS calls before it obtains a certificate for a host.
 */
import { Elysia, t } from "elysia";
import { CreateDomainInput, DomainObject, UpdateDomainInput } from "../../shared/domain.ts";
import type { Deps } from "../deps.ts";
import type { ApiContext } from "../http/api.ts";
import { methodNotAllowed } from "../http/errors.ts";
import { doc } from "../http/openapi.ts";
import * as domains from "./service.ts";

const DeleteQuery = t.Object({
  links: t.Optional(t.String({ description: "delete: the domain's links are deleted with it" })),
  moveTo: t.Optional(t.String({ description: "a verified domain of yours, or base: the domain's links move there, keeping their slugs" })),
});

/** Under /api/v1. */
export const domainRoutes = (deps: Deps, api: ApiContext) =>
  new Elysia({ name: "domain-routes" })
    .post("/domains", async ({ request, set }) => {
      const caller = await api.guard(request, set.headers, "links:write", "admin");
      const created = await domains.createDomain(deps, caller, await api.body(request));
      set.status = 201;
      return created;
    }, doc("Add a custom domain (201); it serves once verified", { body: CreateDomainInput, ok: [201, DomainObject] }))
    .get("/domains", async ({ request, set }) => {
      const caller = await api.guard(request, set.headers, "links:read");
      return domains.listDomains(deps, caller);
    }, doc("List your custom domains", { ok: [200, t.Object({ domains: t.Array(DomainObject) })] }))
    .get("/domains/:id", async ({ request, set, params }) => {
      const caller = await api.guard(request, set.headers, "links:read");
      return domains.getDomain(deps, caller, params.id);
    }, doc("Get a custom domain", { ok: [200, DomainObject] }))
    .patch("/domains/:id", async ({ request, set, params }) => {
      const caller = await api.guard(request, set.headers, "links:write", "admin");
      return domains.updateDomain(deps, caller, params.id, await api.body(request));
    }, doc("Change a domain's verification method (pending again) or its root and not-found redirects", { body: UpdateDomainInput, ok: [200, DomainObject] }))
    .post("/domains/:id/verify", async ({ request, set, params }) => {
      const caller = await api.guard(request, set.headers, "links:write", "admin");
      return domains.verifyDomain(deps, caller, params.id);
    }, doc("Run the domain's ownership check now; lastCheck tells what it found", { ok: [200, DomainObject] }))
    .delete("/domains/:id", async ({ request, set, params, query }) => {
      const caller = await api.guard(request, set.headers, "links:write", "admin");
      await domains.deleteDomain(deps, caller, params.id, query as domains.DeleteQuery);
      return new Response(null, { status: 204, headers: set.headers as Record<string, string> });
    }, doc("Delete a domain; one with links needs links=delete or moveTo (else 409 domain_has_links)", { query: DeleteQuery, ok: [204, t.Null()], badRequest: "invalid_input or invalid_parameter" }))
    .all("/domains", () => methodNotAllowed("GET, POST"), { parse: "none", detail: { hide: true } })
    .all("/domains/:id", () => methodNotAllowed("GET, PATCH, DELETE"), { parse: "none", detail: { hide: true } })
    .all("/domains/:id/verify", () => methodNotAllowed("POST"), { parse: "none", detail: { hide: true } });

/** Caddy's on-demand TLS `ask`: 200 when a certificate may be obtained for `?domain=`, 404 otherwise (no body). */
export const tlsAskRoutes = (deps: Deps) =>
  new Elysia({ name: "tls-ask" }).get("/api/internal/tls-ask", async ({ query }) =>
    new Response(null, { status: (await domains.mayHaveCertificate(deps, (query as { domain?: unknown }).domain)) ? 200 : 404 }),
  { detail: { hide: true } });

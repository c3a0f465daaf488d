/** REST routes for links (design §3): thin handlers over links/service.ts. */
import { Elysia, t } from "elysia";
import { BulkCreateInput, BulkResult, CreateLinkInput, LinkDomainQuery, LinkList, LinkObject, ListLinksQuery, UpdateLinkInput } from "../../shared/schemas.ts";
import type { Deps } from "../deps.ts";
import type { ApiContext } from "../http/api.ts";
import { methodNotAllowed } from "../http/errors.ts";
import { doc } from "../http/openapi.ts";
import * as links from "./service.ts";

export const linkRoutes = (deps: Deps, api: ApiContext) =>
  new Elysia({ name: "link-routes" })
    .post("/links", async ({ request, set }) => {
      const caller = await api.guard(request, set.headers, "links:write");
      const { link, created } = await links.createLink(deps, caller, await api.body(request));
      set.status = created ? 201 : 200;
      return link;
    }, doc("Create a link (201); with an externalId you used before, update that link instead (200)", { body: CreateLinkInput, ok: [201, LinkObject] }))
    .get("/links", async ({ request, set, query }) => {
      const caller = await api.guard(request, set.headers, "links:read");
      return links.listLinks(deps, caller, query as links.ListQuery);
    }, doc("List links (newest first, cursor pagination)", { query: ListLinksQuery, ok: [200, LinkList] }))
    .get("/links/:slug", async ({ request, set, params, query }) => {
      const caller = await api.guard(request, set.headers, "links:read");
      return links.getLink(deps, caller, params.slug, query.domain);
    }, doc("Get a link", { query: LinkDomainQuery, ok: [200, LinkObject], badRequest: "unknown_domain" }))
    .patch("/links/:slug", async ({ request, set, params, query }) => {
      const caller = await api.guard(request, set.headers, "links:write");
      return links.updateLink(deps, caller, params.slug, await api.body(request), query.domain);
    }, doc("Update a link (only fields present change; null or \"\" clears)", { query: LinkDomainQuery, body: UpdateLinkInput, ok: [200, LinkObject], badRequest: "invalid_input, invalid_json or unknown_domain" }))
    .delete("/links/:slug", async ({ request, set, params, query }) => {
      const caller = await api.guard(request, set.headers, "links:write");
      await links.deleteLink(deps, caller, params.slug, query.domain);
      set.status = 204;
      return new Response(null, { status: 204, headers: set.headers as Record<string, string> });
    }, doc("Delete a link", { query: LinkDomainQuery, ok: [204, t.Null()], badRequest: "unknown_domain" }))
    .post("/bulk", async ({ request, set }) => {
      const caller = await api.guard(request, set.headers, "links:write");
      return links.bulkCreateLinks(deps, caller, links.bulkRowsOf(await api.body(request)));
    }, doc("Create up to 500 links; each row succeeds or fails alone", { body: BulkCreateInput, ok: [200, BulkResult] }))
    // Any other method on these paths: 405 naming the ones they answer (Elysia tries these after the routes above).
    .all("/links", () => methodNotAllowed("GET, POST"), { parse: "none", detail: { hide: true } })
    .all("/links/:slug", () => methodNotAllowed("GET, PATCH, DELETE"), { parse: "none", detail: { hide: true } })
    .all("/bulk", () => methodNotAllowed("POST"), { parse: "none", detail: { hide: true } });

/** REST routes for bulk changes (issue #25): thin handlers over links/bulk-change.ts. */
import { Elysia } from "elysia";
import type { Deps } from "../deps.ts";
import type { ApiContext } from "../http/api.ts";
import { methodNotAllowed } from "../http/errors.ts";
import { doc } from "../http/openapi.ts";
import { bulkDeleteLinks, bulkUpdateLinks } from "./bulk-change.ts";
import { BulkChangeInput, BulkChangeResult, BulkDeleteInput } from "./bulk-schemas.ts";
import { BULK_MAX } from "./service.ts";

export const linkBulkRoutes = (deps: Deps, api: ApiContext) =>
  new Elysia({ name: "link-bulk-routes" })
    .patch("/links/bulk", async ({ request, set }) => {
      const caller = await api.guard(request, set.headers, "links:write");
      return bulkUpdateLinks(deps, caller, await api.body(request));
    }, doc(`Update up to ${BULK_MAX} links (by slugs, or by filter a page at a time) with the same changes; each row succeeds or fails alone`, { body: BulkChangeInput, ok: [200, BulkChangeResult] }))
    .post("/links/bulk-delete", async ({ request, set }) => {
      const caller = await api.guard(request, set.headers, "links:write");
      return bulkDeleteLinks(deps, caller, await api.body(request));
    }, doc(`Delete up to ${BULK_MAX} links (by slugs, or by filter a page at a time); each row succeeds or fails alone`, { body: BulkDeleteInput, ok: [200, BulkChangeResult] }))
    .all("/links/bulk", () => methodNotAllowed("PATCH"), { parse: "none", detail: { hide: true } })
    .all("/links/bulk-delete", () => methodNotAllowed("POST"), { parse: "none", detail: { hide: true } });

/** REST route for link exports (issue #25): CSV by default, JSON with ?format=json; thin over links/export.ts. */
import { Elysia } from "elysia";
import { Type as T } from "@sinclair/typebox";
import { ListLinksQuery } from "../../shared/schemas.ts";
import type { Deps } from "../deps.ts";
import type { ApiContext } from "../http/api.ts";
import { methodNotAllowed } from "../http/errors.ts";
import { doc } from "../http/openapi.ts";
import { withHeaders } from "../stats/routes.ts";
import { EXPORT_FILTERS, EXPORT_FORMATS, exportLinks } from "./export.ts";

const ExportQuery = T.Object({
  format: T.Optional(T.Union(EXPORT_FORMATS.map((f) => T.Literal(f)), { description: "csv (default) or json (one array, a link per line)" })),
  ...Object.fromEntries(EXPORT_FILTERS.map((k) => [k, ListLinksQuery.properties[k]])),
});
const ExportFile = T.String({ description: "text/csv (a header row, then a line per link) or application/json (an array of link objects), newest first" });

export const linkExportRoutes = (deps: Deps, api: ApiContext) =>
  new Elysia({ name: "link-export-routes" })
    .get("/links/export", async ({ request, set }) => {
      const caller = await api.guard(request, set.headers, "links:read");
      return withHeaders(await exportLinks(deps, caller, new URL(request.url).searchParams), set.headers);
    }, doc("Export links (all, or filtered as the list is) as CSV or JSON, streamed", {
      query: ExportQuery, ok: [200, ExportFile], okType: "text/csv", badRequest: "invalid_parameter, invalid_input",
    }))
    .all("/links/export", () => methodNotAllowed("GET"), { parse: "none", detail: { hide: true } });

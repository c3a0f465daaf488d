/** REST route for per-link stats (design §3.4). */
import { Elysia } from "elysia";
import { LinkStats } from "../../shared/schemas.ts";
import type { Deps } from "../deps.ts";
import type { ApiContext } from "../http/api.ts";
import { methodNotAllowed } from "../http/errors.ts";
import { doc } from "../http/openapi.ts";
import { getLinkStats } from "./service.ts";

export const statsRoutes = (deps: Deps, api: ApiContext) =>
  new Elysia({ name: "stats-routes" }).get("/links/:slug/stats", async ({ request, set, params }) => {
    const caller = await api.guard(request, set.headers);
    return getLinkStats(deps, caller, params.slug);
  }, doc("Click statistics of a link", { ok: [200, LinkStats] }))
    .all("/links/:slug/stats", () => methodNotAllowed("GET"), { parse: "none", detail: { hide: true } });

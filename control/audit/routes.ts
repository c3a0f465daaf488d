/** GET /api/v1/audit (docs/api.md "Audit log"): a thin handler over read.ts. */
import { Elysia, t } from "elysia";
import type { Deps } from "../deps.ts";
import type { ApiContext } from "../http/api.ts";
import { methodNotAllowed } from "../http/errors.ts";
import { doc } from "../http/openapi.ts";
import type { RawQuery } from "../stats/query.ts";
import { AUDIT_ACTIONS } from "./service.ts";
import { AUDIT_MAX_LIMIT } from "./query.ts";
import { AuditPage, readAuditLog } from "./read.ts";

const AuditQuery = t.Object({
  limit: t.Optional(t.String({ description: `Entries per page, 1-${AUDIT_MAX_LIMIT}, default 50.` })),
  cursor: t.Optional(t.String({ description: "nextCursor of the previous page." })),
  action: t.Optional(t.String({ description: `Only this action: ${AUDIT_ACTIONS.join(", ")}.` })),
  actor: t.Optional(t.String({ description: "Only what this person did: an account id or an email." })),
  from: t.Optional(t.String({ description: "Only entries at or after this ISO 8601 date or date-time (UTC unless it has an offset)." })),
  to: t.Optional(t.String({ description: "Only entries at or before this ISO 8601 date or date-time." })),
});

/** Under /api/v1. */
export const auditRoutes = (deps: Deps, api: ApiContext) =>
  new Elysia({ name: "audit-routes" })
    .get("/audit", async ({ request, set, query }) => {
      // links:read: reading needs no write scope; the role (admin or owner) is what guards the log.
      const caller = await api.guard(request, set.headers, "links:read");
      return readAuditLog(deps, caller, query as RawQuery);
    }, doc("Read the workspace's audit log, newest first (admins and owners; 403 forbidden_role otherwise)", {
      query: AuditQuery, ok: [200, AuditPage], badRequest: "invalid_parameter or invalid_range",
    }))
    .all("/audit", () => methodNotAllowed("GET"), { parse: "none", detail: { hide: true } });

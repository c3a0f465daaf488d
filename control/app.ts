/** The control plane: one Elysia app with the REST API, OpenAPI document and health endpoints. */
import { Elysia } from "elysia";
import type { Deps } from "./deps.ts";
import { errorResponse, fromElysiaError } from "./http/errors.ts";
import { dashboardRoutes } from "./dashboard/routes.ts";
import { createApiContext } from "./http/api.ts";
import { docsPage, openapiPlugin } from "./http/openapi.ts";
import { KeyAuthenticator } from "./keys/service.ts";
import { linkBulkRoutes } from "./links/bulk-routes.ts";
import { linkExportRoutes } from "./links/export-route.ts";
import { linkRoutes } from "./links/routes.ts";
import { linkQrRoutes } from "./links/qr-route.ts";
import { importRoutes } from "./imports/routes.ts";
import { mcpRoutes } from "./mcp/routes.ts";
import { oauthRoutes } from "./oauth/routes.ts";
import { AccessTokens } from "./oauth/verifier.ts";
import { statsRoutes } from "./stats/routes.ts";
import { webhookRoutes } from "./webhooks/routes.ts";
import { domainRoutes, tlsAskRoutes } from "./domains/routes.ts";
import { workspaceRoutes } from "./workspaces/routes.ts";
import { auditRoutes } from "./audit/routes.ts";

export interface ControlPlane {
  app: Elysia;
  auth: KeyAuthenticator;
}

export function buildControlPlane(deps: Deps): ControlPlane {
  const auth = new KeyAuthenticator(deps);
  auth.useAccessTokens(new AccessTokens(deps));
  const api = createApiContext(deps, auth);
  const app = new Elysia({ normalize: false })
    .onError(({ code, error, set }) => errorResponse(fromElysiaError(code, error), set.headers as Record<string, unknown>))
    .use(openapiPlugin(deps.config.baseUrl))
    .get("/api/v1/docs", () => docsPage(deps.config.baseUrl), { detail: { hide: true } })
    .get("/", () => Response.redirect("/dashboard", 302))
    .group("/api/v1", (g) => g.use(linkExportRoutes(deps, api)).use(linkBulkRoutes(deps, api)).use(linkRoutes(deps, api)).use(linkQrRoutes(deps, api)).use(statsRoutes(deps, api)).use(importRoutes(deps, api)).use(webhookRoutes(deps, api)).use(domainRoutes(deps, api)).use(auditRoutes(deps, api)).use(workspaceRoutes(deps, api)))
    .use(tlsAskRoutes(deps))
    .use(mcpRoutes(deps, api))
    .use(oauthRoutes(deps))
    .use(dashboardRoutes(deps, auth));
  return { app: app as unknown as Elysia, auth };
}

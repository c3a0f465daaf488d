/**
 * OpenAPI from the same TypeBox schemas (design §3): `@elysiajs/openapi` (the successor of
 * @elysiajs/swagger for Elysia 1.4) collects each route's `detail`. Bodies and query parameters are declared
 * here rather than as Elysia validators because the contract wants auth checked first: Elysia validates before
 * a handler runs, so a bad query would answer 400 to a caller without a key. The services validate them.
 */
import type { TObject, TSchema } from "@sinclair/typebox";
import { openapi } from "@elysiajs/openapi";
import type { DocumentDecoration } from "elysia";
import { SCOPE_DESCRIPTIONS } from "../../shared/enums.ts";
import { Problem } from "../../shared/schemas.ts";

const json = (schema: TSchema) => ({ "application/json": { schema } });
const problem = (description: string) => ({ description, content: { "application/problem+json": { schema: Problem } } });

/** `okType`: the success body's media type (default JSON); `badRequest`: the 400 codes when not the usual ones. */
export function doc(summary: string, o: { body?: TSchema; query?: TObject; ok: [number, TSchema]; okType?: string; badRequest?: string }) {
  // TypeBox schemas are JSON Schema; only their TypeScript types differ from openapi-types'.
  const parameters = Object.entries(o.query?.properties ?? {}).map(([name, schema]) => ({
    name, in: "query", required: false, description: (schema as { description?: string }).description, schema,
  }));
  const detail = {
      summary,
      // Either an API key or an OAuth access token; the scope each route needs is in docs/api.md ("Scopes").
      security: [{ bearer: [] }, { oauth2: [] }],
      ...(parameters.length ? { parameters } : {}),
      ...(o.body ? { requestBody: { required: true, content: json(o.body) } } : {}),
      responses: {
        [o.ok[0]]: o.ok[0] === 204 ? { description: "No content" } : { description: "OK", content: { [o.okType ?? "application/json"]: { schema: o.ok[1] } } },
        400: problem(o.badRequest ?? "invalid_input, invalid_json or slug_reserved"),
        401: problem("unauthorized"),
        // Every route checks a scope, and the caller's role in the workspace (control/auth/roles.ts).
        403: problem("insufficient_scope (the key or token lacks the route's scope) or forbidden_role (the member's role does not allow it)"),
        404: problem("not_found"),
        409: problem("slug_taken"),
        413: problem("payload_too_large"),
        415: problem("unsupported_media_type"),
        429: problem("rate_limited"),
        503: problem("unavailable"),
      },
  } as unknown as DocumentDecoration;
  return { parse: "none" as const, detail };
}

/**
 * The browsable reference (Scalar) runs a third-party script on this origin, where the dashboard lives too. So the
 * version is pinned (not "latest"), and a Content-Security-Policy fences the page: it may load the script and its
 * styles and fonts, fetch only under /api/v1/ (the document and "try it" calls, never /dashboard), post no form
 * and embed no frame, and may not be framed itself.
 */
const SCALAR_SCRIPT = "https://cdn.jsdelivr.net/npm/@scalar/api-reference@1.72.1/dist/browser/standalone.min.js";

export function docsPage(baseUrl: string): Response {
  const origin = new URL(baseUrl).origin;
  const config = JSON.stringify({ url: "/api/v1/openapi.json" }).replace(/'/g, "&#39;");
  const csp = [
    "default-src 'none'", "script-src https://cdn.jsdelivr.net", "style-src 'unsafe-inline' https://cdn.jsdelivr.net https://fonts.scalar.com",
    "font-src https://cdn.jsdelivr.net https://fonts.scalar.com data:", "img-src data: https:", `connect-src ${origin}/api/v1/`,
    "frame-src 'none'", "form-action 'none'", "base-uri 'none'", "frame-ancestors 'none'",
  ].join("; ");
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>clink API</title></head><body><script id="api-reference" data-configuration='${config}'></script><script src="${SCALAR_SCRIPT}" crossorigin="anonymous"></script></body></html>`;
  return new Response(html, {
    headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": csp, "x-content-type-options": "nosniff", "referrer-policy": "no-referrer" },
  });
}

export const openapiPlugin = (baseUrl: string) =>
  openapi({
    // The page is docsPage above; the plugin serves the document only.
    provider: null,
    specPath: "/api/v1/openapi.json",
    // staticFile: false, or the plugin would leave out every path with a dot (the clicks.csv exports).
    exclude: { paths: [/^(?!\/api\/v1\/)/], staticFile: false },
    documentation: {
      info: { title: "clink API", version: "1.0.0", description: "Link shortener REST API. Authenticate with `Authorization: Bearer ck_…` (an API key) or an OAuth access token." },
      servers: [{ url: baseUrl }],
      components: {
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer", bearerFormat: "ck_ API key" },
          // The authorization server of control/oauth (docs/oauth.md): code flow with PKCE, one vocabulary of scopes.
          oauth2: {
            type: "oauth2",
            flows: {
              authorizationCode: {
                authorizationUrl: `${baseUrl}/oauth/authorize`, tokenUrl: `${baseUrl}/oauth/token`, refreshUrl: `${baseUrl}/oauth/token`,
                scopes: SCOPE_DESCRIPTIONS,
              },
            },
          },
        },
      },
    },
  } as Parameters<typeof openapi>[0]);

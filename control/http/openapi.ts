/**
 * OpenAPI from the same TypeBox schemas (design §3): `@elysiajs/openapi` (the successor of
 * @elysiajs/swagger for Elysia 1.4) collects each route's `detail`. Bodies and query parameters are declared
 * here rather than as Elysia validators because the contract wants auth checked first: Elysia validates before
 * a handler runs, so a bad query would answer 400 to a caller without a key. The services validate them.
 */
import type { TObject, TSchema } from "@sinclair/typebox";
import { openapi } from "@elysiajs/openapi";
import type { DocumentDecoration } from "elysia";
import { Problem } from "../../shared/schemas.ts";

const json = (schema: TSchema) => ({ "application/json": { schema } });
const problem = (description: string) => ({ description, content: { "application/problem+json": { schema: Problem } } });

export function doc(summary: string, o: { body?: TSchema; query?: TObject; ok: [number, TSchema] }) {
  // TypeBox schemas are JSON Schema; only their TypeScript types differ from openapi-types'.
  const parameters = Object.entries(o.query?.properties ?? {}).map(([name, schema]) => ({
    name, in: "query", required: false, description: (schema as { description?: string }).description, schema,
  }));
  const detail = {
      summary,
      security: [{ bearer: [] }],
      ...(parameters.length ? { parameters } : {}),
      ...(o.body ? { requestBody: { required: true, content: json(o.body) } } : {}),
      responses: {
        [o.ok[0]]: o.ok[0] === 204 ? { description: "No content" } : { description: "OK", content: json(o.ok[1]) },
        400: problem("invalid_input, invalid_json or slug_reserved"),
        401: problem("unauthorized"),
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

export const openapiPlugin = (baseUrl: string) =>
  openapi({
    path: "/api/v1/docs",
    specPath: "/api/v1/openapi.json",
    exclude: { paths: [/^(?!\/api\/v1\/)/] },
    documentation: {
      info: { title: "clink API", version: "1.0.0", description: "Link shortener REST API. Authenticate with `Authorization: Bearer ck_…`." },
      servers: [{ url: baseUrl }],
      components: { securitySchemes: { bearer: { type: "http", scheme: "bearer", bearerFormat: "ck_ API key" } } },
    },
  } as Parameters<typeof openapi>[0]);

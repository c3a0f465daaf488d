/**
 * What clients discover before anything else: RFC 8414 authorization-server metadata and RFC 9728 protected-resource
 * metadata for /mcp and /api/v1 (each 401 of theirs names the latter, control/auth/challenge.ts). The issuer is
 * BASE_URL; the MCP specification's clients take every endpoint from here.
 */
import { SCOPES } from "../../shared/enums.ts";
import { resourceUrl, type ProtectedResource } from "../auth/challenge.ts";

export const OAUTH_PATHS = {
  authorize: "/oauth/authorize",
  token: "/oauth/token",
  register: "/oauth/register",
  revoke: "/oauth/revoke",
} as const;

export function authorizationServerMetadata(baseUrl: string) {
  return {
    issuer: baseUrl,
    authorization_endpoint: `${baseUrl}${OAUTH_PATHS.authorize}`,
    token_endpoint: `${baseUrl}${OAUTH_PATHS.token}`,
    registration_endpoint: `${baseUrl}${OAUTH_PATHS.register}`,
    revocation_endpoint: `${baseUrl}${OAUTH_PATHS.revoke}`,
    scopes_supported: [...SCOPES],
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    token_endpoint_auth_methods_supported: ["none"],
    revocation_endpoint_auth_methods_supported: ["none"],
    code_challenge_methods_supported: ["S256"],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}

const RESOURCE_NAMES: Record<ProtectedResource, string> = { mcp: "clink MCP server", api: "clink REST API" };

export function protectedResourceMetadata(baseUrl: string, resource: ProtectedResource) {
  return {
    resource: resourceUrl(baseUrl, resource),
    authorization_servers: [baseUrl],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: RESOURCE_NAMES[resource],
  };
}

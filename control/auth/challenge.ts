/**
 * The WWW-Authenticate challenges of the API and MCP (RFC 6750 §3, RFC 9728 §5.1): every 401 and 403 names the
 * protected-resource metadata of the resource asked for, so an OAuth client (mcp-remote, an assistant) finds the
 * authorization server from the 401 alone; a 403 for a missing scope names the scope, so the client can step up.
 */
import type { Scope } from "../../shared/enums.ts";

/** The two protected resources: the REST API under /api/v1 and the MCP endpoint. */
export type ProtectedResource = "api" | "mcp";

const RESOURCE_PATHS: Record<ProtectedResource, string> = { api: "/api/v1", mcp: "/mcp" };

/** The resource identifier (RFC 8707): the absolute URL a token is issued for. */
export const resourceUrl = (baseUrl: string, resource: ProtectedResource): string => `${baseUrl}${RESOURCE_PATHS[resource]}`;

/** RFC 9728 §3.1: the metadata of `https://host/mcp` lives at `https://host/.well-known/oauth-protected-resource/mcp`. */
export function protectedResourceMetadataUrl(baseUrl: string, resource: ProtectedResource): string {
  const base = new URL(baseUrl);
  return `${base.origin}/.well-known/oauth-protected-resource${base.pathname.replace(/\/$/, "")}${RESOURCE_PATHS[resource]}`;
}

/** Which resource a request path is asking for (MCP at /mcp, everything else the API). */
export const resourceOfPath = (pathname: string): ProtectedResource => (/\/mcp\/?$/.test(pathname) ? "mcp" : "api");

const quoted = (v: string) => `"${v.replace(/["\\]/g, "")}"`;

/** `Bearer realm="api", resource_metadata="…"[, error="…", error_description="…"][, scope="…"]`. */
export function bearerChallenge(
  baseUrl: string,
  resource: ProtectedResource,
  opts: { error?: "invalid_token" | "insufficient_scope"; description?: string; scope?: readonly Scope[] } = {},
): string {
  const parts = [`realm=${quoted(resource)}`, `resource_metadata=${quoted(protectedResourceMetadataUrl(baseUrl, resource))}`];
  if (opts.error) parts.push(`error=${quoted(opts.error)}`);
  if (opts.description) parts.push(`error_description=${quoted(opts.description)}`);
  if (opts.scope?.length) parts.push(`scope=${quoted(opts.scope.join(" "))}`);
  return `Bearer ${parts.join(", ")}`;
}

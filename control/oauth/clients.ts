/**
 * Who is asking for access: a client registered here by RFC 7591 dynamic registration (its client_id is ours), or one
 * whose client_id is the https URL of its metadata document (client-documents.ts). Either way a public client: PKCE
 * instead of a secret (token_endpoint_auth_method "none"), as OAuth 2.1 and the MCP specification expect of
 * assistants and other apps that cannot keep one.
 */
import { isOneOf, SCOPES, type Scope } from "../../shared/enums.ts";
import { newToken } from "../../shared/ids.ts";
import type { OAuthClientRecord } from "../../shared/ports/oauth.ts";
import type { Deps } from "../deps.ts";
import { clientDocument, isClientIdUrl } from "./client-documents.ts";
import { OAuthError } from "./errors.ts";
import { pointsAtUs, redirectUriProblem } from "./redirect-uris.ts";

const CLIENT_ID_PREFIX = "clid_";
const MAX_REDIRECT_URIS = 20;

/** A client as the authorization and token endpoints see it, however it was registered. */
export interface OAuthClient {
  id: string;
  name: string;
  redirectUris: string[];
  clientUri: string | null;
  scopes: Scope[] | null;
  /** The host that vouches for the client: its metadata document's (fetched over https); null for a self-declared one. */
  verifiedHost: string | null;
}

/** The client by its client_id; OAuthError invalid_client when unknown or its document cannot be had. */
export async function resolveClient(deps: Deps, clientId: string): Promise<OAuthClient> {
  if (isClientIdUrl(clientId)) {
    const doc = await clientDocument(deps, clientId);
    return { id: clientId, name: doc.name, redirectUris: doc.redirectUris, clientUri: doc.clientUri, scopes: doc.scopes, verifiedHost: new URL(clientId).host };
  }
  const record = clientId.startsWith(CLIENT_ID_PREFIX) && clientId.length <= 100 ? await deps.store.getOAuthClient(clientId) : null;
  if (!record) throw new OAuthError("invalid_client", "Unknown client_id: register the client first (POST /oauth/register) or use a client metadata document URL");
  return { ...record, verifiedHost: null };
}

const metadataError = (why: string) => new OAuthError("invalid_client_metadata", why);

/** Optional string field of at most `max` characters. */
function optionalText(body: Record<string, unknown>, field: string, max: number): string | null {
  const v = body[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== "string" || v.length > max) throw metadataError(`${field} must be a string of at most ${max} characters`);
  return v.trim() || null;
}

/** The registered metadata, in RFC 7591 §3.2.1's words. */
export function registrationResponse(c: OAuthClientRecord) {
  return {
    client_id: c.id,
    client_id_issued_at: Math.floor(c.createdAt / 1000),
    client_name: c.name,
    redirect_uris: c.redirectUris,
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    ...(c.clientUri ? { client_uri: c.clientUri } : {}),
    ...(c.scopes ? { scope: c.scopes.join(" ") } : {}),
  };
}

/**
 * RFC 7591 dynamic registration: checks the metadata and stores a public client. Fields we do not use are ignored;
 * a client asking for a secret-based authentication method is registered as "none" all the same (§3.2.1 lets the
 * server replace values), and the answer says so.
 */
export async function registerClient(deps: Deps, body: unknown): Promise<OAuthClientRecord> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw metadataError("The body must be a JSON object of client metadata");
  const b = body as Record<string, unknown>;
  const uris = b.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > MAX_REDIRECT_URIS || !uris.every((u) => typeof u === "string")) {
    throw new OAuthError("invalid_redirect_uri", `redirect_uris must be a list of 1 to ${MAX_REDIRECT_URIS} URIs`);
  }
  for (const u of uris as string[]) {
    const problem = redirectUriProblem(u) ?? (pointsAtUs(deps.config, u) ? "points at this server" : null);
    if (problem) throw new OAuthError("invalid_redirect_uri", `The redirect URI ${u.slice(0, 200)} ${problem}`);
  }
  const grantTypes = b.grant_types;
  if (grantTypes !== undefined && (!Array.isArray(grantTypes) || !grantTypes.includes("authorization_code"))) {
    throw metadataError('grant_types must include "authorization_code" (the only flow offered, with "refresh_token")');
  }
  const responseTypes = b.response_types;
  if (responseTypes !== undefined && (!Array.isArray(responseTypes) || !responseTypes.includes("code"))) {
    throw metadataError('response_types must include "code"');
  }
  const clientUri = optionalText(b, "client_uri", 2000);
  if (clientUri !== null && !URL.canParse(clientUri)) throw metadataError("client_uri must be a URL");
  const scope = optionalText(b, "scope", 1000);
  const scopes = scope === null ? null : scope.split(/\s+/).filter((s): s is Scope => isOneOf(SCOPES, s));
  const record: OAuthClientRecord = {
    id: `${CLIENT_ID_PREFIX}${newToken()}`,
    name: optionalText(b, "client_name", 100) ?? "Unnamed application",
    redirectUris: [...new Set(uris as string[])],
    clientUri: clientUri?.startsWith("https://") || clientUri?.startsWith("http://") ? clientUri : null,
    scopes: scopes?.length ? scopes : null,
    createdAt: deps.now(),
  };
  await deps.store.createOAuthClient(record);
  return record;
}

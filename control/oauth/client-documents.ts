/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, MCP authorization 2025-11-25): a
 * client whose client_id is an https URL publishes its metadata there, and we fetch it. The URL is someone else's
 * input, so the fetch is guarded as webhooks are (shared/webhooks/ssrf.ts): every address the host resolves to must
 * be public, the request goes to the checked address itself (no second DNS answer), no redirects, 5 s, 5 KiB.
 * Documents are kept for 5 minutes in process; a failure for 30 seconds, so a bad client cannot make us fetch in a loop.
 */
import { readBodyUpTo } from "../../shared/net/body.ts";
import { checkWebhookTarget, type ResolveHost } from "../../shared/webhooks/ssrf.ts";
import { SCOPES, isOneOf, type Scope } from "../../shared/enums.ts";
import type { Deps } from "../deps.ts";
import { OAuthError } from "./errors.ts";
import { redirectUriProblem } from "./redirect-uris.ts";

const FETCH_TIMEOUT_MS = 5_000;
const MAX_DOCUMENT_BYTES = 5 * 1024;
const KEEP_MS = 5 * 60_000;
const KEEP_FAILURE_MS = 30_000;
const MAX_KEPT = 1_000;

/** What we take from a client's metadata document. */
export interface ClientDocument {
  clientId: string;
  name: string;
  redirectUris: string[];
  clientUri: string | null;
  scopes: Scope[] | null;
}

/** Whether a client_id names a metadata document: an https URL with a path (the draft's §3 rules). */
export function isClientIdUrl(clientId: string): boolean {
  return clientId.startsWith("https://");
}

/** Why `clientId` cannot be a metadata document's URL, or null when it can. */
function clientIdUrlProblem(clientId: string): string | null {
  if (clientId.length > 2000) return "is longer than 2000 characters";
  let u: URL;
  try {
    u = new URL(clientId);
  } catch {
    return "is not a URL";
  }
  if (u.protocol !== "https:") return "must be an https URL";
  if (u.pathname === "/" || u.pathname === "") return "must have a path";
  if (u.hash || clientId.includes("#")) return "must not have a fragment";
  if (u.username || u.password) return "must not carry a user name or password";
  if (/\/\.\.?(\/|$)/.test(clientId.slice(8))) return "must not have . or .. path segments";
  return null;
}

const text = (v: unknown, max: number): string | null => (typeof v === "string" && v.trim() !== "" && v.length <= max ? v.trim() : null);

/**
 * The document's fields, checked (pure: tested on its own). It must name itself (client_id equal to its URL), list
 * acceptable redirect URIs, and be a public client: we issue no secrets, and keys of its own are not supported.
 */
export function readClientDocument(clientId: string, doc: unknown): ClientDocument {
  const bad = (why: string) => new OAuthError("invalid_client", `The client metadata document at ${clientId} ${why}`);
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) throw bad("is not a JSON object");
  const d = doc as Record<string, unknown>;
  if (d.client_id !== clientId) throw bad("does not name itself as client_id");
  const uris = d.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 20 || !uris.every((u) => typeof u === "string")) {
    throw bad("has no redirect_uris list (1 to 20 strings)");
  }
  for (const u of uris as string[]) {
    const problem = redirectUriProblem(u);
    if (problem) throw bad(`has a redirect URI that ${problem}: ${u.slice(0, 200)}`);
  }
  const method = d.token_endpoint_auth_method;
  if (method !== undefined && method !== "none") throw bad(`asks for token_endpoint_auth_method ${String(method)}; only "none" (PKCE) is supported`);
  const clientUri = text(d.client_uri, 2000);
  const scope = text(d.scope, 1000);
  return {
    clientId,
    name: text(d.client_name, 100) ?? new URL(clientId).host,
    redirectUris: uris as string[],
    clientUri: clientUri && clientUri.startsWith("https://") ? clientUri : null,
    scopes: scope === null ? null : scope.split(" ").filter((s): s is Scope => isOneOf(SCOPES, s)),
  };
}

type Kept = { at: number; doc: ClientDocument } | { at: number; error: OAuthError };
const kept = new WeakMap<Deps, Map<string, Kept>>();

/** The client's metadata document, fetched (or kept from a fetch a moment ago); OAuthError invalid_client otherwise. */
export async function clientDocument(deps: Deps, clientId: string): Promise<ClientDocument> {
  const problem = clientIdUrlProblem(clientId);
  if (problem) throw new OAuthError("invalid_client", `client_id ${problem}`);
  let cache = kept.get(deps);
  if (!cache) kept.set(deps, (cache = new Map()));
  const now = deps.now();
  const hit = cache.get(clientId);
  if (hit && now - hit.at < ("doc" in hit ? KEEP_MS : KEEP_FAILURE_MS)) {
    if ("doc" in hit) return hit.doc;
    throw hit.error;
  }
  if (cache.size >= MAX_KEPT) cache.clear();
  try {
    const doc = readClientDocument(clientId, await fetchClientDocument(clientId, { resolveHost: deps.resolveHost }));
    cache.set(clientId, { at: now, doc });
    return doc;
  } catch (e) {
    const error = e instanceof OAuthError ? e : new OAuthError("invalid_client", `The client metadata document at ${clientId} could not be read`);
    cache.set(clientId, { at: now, error });
    throw error;
  }
}

/** How a document is fetched; tests give a resolver, private addresses and their own CA, the product only a resolver. */
export interface DocumentFetchOptions {
  resolveHost?: ResolveHost;
  /** Never set by the product: client documents on private addresses are always refused. */
  allowPrivate?: boolean;
  tlsCa?: string;
  timeoutMs?: number;
}

/** GET the document from the checked address, as JSON, within the limits; OAuthError invalid_client otherwise. */
export async function fetchClientDocument(clientId: string, o: DocumentFetchOptions = {}): Promise<unknown> {
  const refused = (why: string) => new OAuthError("invalid_client", `The client metadata document at ${clientId} ${why}`);
  const timeoutMs = o.timeoutMs ?? FETCH_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  const check = await checkWebhookTarget(clientId, o.allowPrivate ?? false, o.resolveHost);
  if (!check.ok) throw refused(`cannot be fetched: ${check.reason}`);
  const target = new URL(clientId);
  const host = target.host;
  const name = target.hostname;
  target.hostname = check.address.includes(":") ? `[${check.address}]` : check.address;
  const tls: { serverName?: string; ca?: string } = {};
  if (!parseIpLiteral(name)) tls.serverName = name;
  if (o.tlsCa) tls.ca = o.tlsCa;
  let res: Response;
  try {
    res = await fetch(target, { redirect: "manual", signal, headers: { host, accept: "application/json" }, tls } as BunFetchRequestInit);
  } catch {
    throw refused(signal.aborted ? `did not answer within ${timeoutMs / 1000} s` : "could not be fetched (connection or TLS failure)");
  }
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => {});
    throw refused(`answered HTTP ${res.status}${res.status >= 300 && res.status < 400 ? " (redirects are not followed)" : ""}`);
  }
  // A Response has the headers and body the reader looks at.
  const bytes = await readBodyUpTo(res as unknown as Request, MAX_DOCUMENT_BYTES).catch(() => null);
  if (bytes === null) throw refused(`is larger than ${MAX_DOCUMENT_BYTES} bytes or was cut short`);
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw refused("is not JSON");
  }
}

const parseIpLiteral = (host: string) => host.startsWith("[") || /^[\d.]+$/.test(host);

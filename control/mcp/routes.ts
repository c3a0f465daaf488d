/**
 * `{base}/mcp`: the MCP server over Streamable HTTP (design §5), served by `@modelcontextprotocol/server` inside
 * Elysia.
 *
 * Every request, in this order:
 * 1. Origin: a browser request from any origin but the service's own is refused with 403 `forbidden` (DNS
 *    rebinding protection, MCP transport spec). Requests without Origin (assistants, curl) pass.
 * 2. Auth and rate limit: the same Bearer key and the same per-key budget as REST (`api.guard`); 401 with
 *    `WWW-Authenticate: Bearer`, 429 with `Retry-After`. Keys are read only from the Authorization header. A
 *    JSON-RPC batch of N messages counts as N requests, refused as a whole when fewer are left.
 * 3. Method: POST carries JSON-RPC messages; DELETE ends a session; GET answers 405, which the spec allows for a
 *    server that never sends messages on its own (ours only answers requests), so no idle SSE stream is held open.
 *
 * Protocol revisions (docs/adr/0009-mcp-protocol-revisions.md): each POST is classified by the SDK's own predicate.
 * - 2026-07-28 (a `_meta` envelope naming the revision on every request, `server/discover` instead of initialize,
 *   no sessions) goes to the SDK's per-request handler, which checks the envelope against the MCP-Protocol-Version
 *   and Mcp-Method headers (400 on a mismatch or an unsupported revision).
 * - 2025-06-18, 2025-11-25 and the older 2025-era revisions: initialize answers the client's protocolVersion when
 *   supported, else the latest; later requests with an unsupported MCP-Protocol-Version header answer 400.
 *
 * Sessions (2025 revisions) and stateless use, both supported, on any control process:
 * - POST `initialize` without `Mcp-Session-Id` opens a session: the answer carries `Mcp-Session-Id`, later requests
 *   send it, DELETE ends it. A session belongs to the account that opened it; an unknown, expired or foreign id
 *   answers 404, upon which the client initializes again. Sessions live in HotState (sessions.ts), so a session
 *   opened on one control process is served, and ended, by any other.
 * - POST of any other message without `Mcp-Session-Id` is served statelessly, so a plain JSON-RPC call
 *   (`tools/list`, `tools/call`) works without any handshake.
 * Every request, in every revision, is served by a fresh server and transport: every tool answers at once and the
 * server never sends on its own, so there is nothing to keep between requests. Answers are JSON, never SSE.
 */
import {
  createMcpHandler as createSdkMcpHandler,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { Elysia } from "elysia";
import { AppError, toAppError } from "../../shared/errors.ts";
import { requireScope } from "../auth/scopes.ts";
import type { Caller, Deps } from "../deps.ts";
import type { ApiContext } from "../http/api.ts";
import { errorResponse, methodNotAllowed } from "../http/errors.ts";
import { McpSessions, type SessionLimits } from "./sessions.ts";
import { getServer, TOOLS_BY_NAME } from "./server.ts";

const SESSION_HEADER = "mcp-session-id";

/** 404 for an unknown, expired or foreign session alike: the transport spec's signal to initialize again. */
const unknownSession = () => new AppError("not_found", "Unknown or expired MCP session; send initialize to start a new one");

/** Refuses requests a browser sends from another site (403); same-origin and non-browser requests pass. */
export function checkOrigin(request: Request, ownOrigin: string): void {
  const origin = request.headers.get("origin");
  if (origin === null) return;
  let parsed: string;
  try {
    parsed = new URL(origin).origin;
  } catch {
    parsed = "null";
  }
  if (parsed !== ownOrigin) throw new AppError("forbidden", "Requests from this Origin are not allowed");
}

function isInitialize(body: unknown): boolean {
  const isInit = (m: unknown) => typeof m === "object" && m !== null && (m as { method?: unknown }).method === "initialize";
  return Array.isArray(body) ? body.some(isInit) : isInit(body);
}

/**
 * A tools/call of a tool outside the caller's scopes is refused before the transport sees it: HTTP 403
 * insufficient_scope with a challenge naming the scope (MCP authorization, "Scope Challenge Handling"), so a client
 * can ask the user for it. An unknown tool name is left to the server's own JSON-RPC error.
 */
export function requireToolScopes(caller: Caller, body: unknown, baseUrl: string): void {
  for (const m of Array.isArray(body) ? body : [body]) {
    if (typeof m !== "object" || m === null || (m as { method?: unknown }).method !== "tools/call") continue;
    const name = (m as { params?: { name?: unknown } }).params?.name;
    const tool = typeof name === "string" ? TOOLS_BY_NAME.get(name) : undefined;
    if (tool) requireScope(caller, tool.scope, baseUrl, "mcp");
  }
}

/** The transport's Response with the rate-limit headers the guard produced. */
function withHeaders(res: Response, extra: Record<string, unknown>): Response {
  const headers = new Headers(res.headers);
  for (const [k, v] of Object.entries(extra)) if (typeof v === "string") headers.set(k, v);
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

export interface McpHandler {
  handle(request: Request): Promise<Response>;
}

/** Whether an answer is a JSON-RPC result: an initialize the server refused opens no session. */
async function succeeded(res: Response): Promise<boolean> {
  if (res.status !== 200) return false;
  const answer: unknown = await res.clone().json().catch(() => null);
  return typeof answer === "object" && answer !== null && "result" in answer;
}

/** Serves one 2025-era request with a fresh server and a stateless transport; the JSON answer is complete on return. */
async function serveOnce(deps: Deps, caller: Caller, request: Request, body: unknown): Promise<Response> {
  const server = getServer(deps, caller);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody: body });
  } finally {
    await server.close();
  }
}

export function createMcpHandler(deps: Deps, api: ApiContext, limits?: SessionLimits): McpHandler {
  const ownOrigin = new URL(deps.config.baseUrl).origin;
  const sessions = new McpSessions(deps.hot, limits);
  /** Who sent each 2026-07-28 request in flight: the SDK hands its server factory the request it was given. */
  const callers = new WeakMap<Request, Caller>();
  const modern = createSdkMcpHandler(
    ({ requestInfo }) => {
      const caller = requestInfo && callers.get(requestInfo);
      if (!caller) throw new Error("MCP request without an authenticated caller");
      return getServer(deps, caller);
    },
    { legacy: "reject" },
  );

  /** The request's session, checked live and the caller's own (404 otherwise); null when it names none. */
  async function sessionOf(request: Request, caller: Caller): Promise<string | null> {
    const id = request.headers.get(SESSION_HEADER);
    if (id === null) return null;
    if (!(await sessions.use(id, caller.workspaceId))) throw unknownSession();
    return id;
  }

  async function post(request: Request, caller: Caller, headers: Record<string, unknown>): Promise<Response> {
    const body = await api.body(request);
    requireToolScopes(caller, body, deps.config.baseUrl);
    // A JSON-RPC batch is as many requests as it holds messages: the guard took one, the rest are taken here.
    if (Array.isArray(body) && body.length > 1) await api.charge(caller, body.length - 1, headers);
    if (!(await isLegacyRequest(request, body))) {
      callers.set(request, caller);
      return modern.fetch(request, { parsedBody: body });
    }
    const session = await sessionOf(request, caller);
    const res = await serveOnce(deps, caller, request, body);
    if (session !== null || !isInitialize(body) || !(await succeeded(res))) return res;
    headers[SESSION_HEADER] = await sessions.open(caller.workspaceId);
    return res;
  }

  async function del(request: Request, caller: Caller): Promise<Response> {
    const id = request.headers.get(SESSION_HEADER);
    if (id === null) throw new AppError("invalid_input", "Send the Mcp-Session-Id header of the session to end");
    if (!(await sessions.end(id, caller.workspaceId))) throw unknownSession();
    return new Response(null, { status: 200 });
  }

  async function handle(request: Request): Promise<Response> {
    const headers: Record<string, unknown> = {};
    try {
      checkOrigin(request, ownOrigin);
      const caller = await api.guard(request, headers);
      if (request.method === "POST") return withHeaders(await post(request, caller, headers), headers);
      if (request.method === "DELETE") return withHeaders(await del(request, caller), headers);
      return withHeaders(methodNotAllowed("POST, DELETE", "Use POST to send MCP messages and DELETE to end a session"), headers);
    } catch (e) {
      return errorResponse(toAppError(e), headers);
    }
  }

  return { handle };
}

/** The Elysia plugin mounting the handler at /mcp for every method (the handler answers 405 itself). */
export const mcpRoutes = (deps: Deps, api: ApiContext) => {
  const mcp = createMcpHandler(deps, api);
  return new Elysia({ name: "mcp-routes" }).all("/mcp", ({ request }) => mcp.handle(request), { parse: "none" });
};

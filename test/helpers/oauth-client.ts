/**
 * An OAuth client for tests, doing by hand what mcp-remote and the MCP SDK do: register, send a person through
 * /oauth/authorize, sign-in and consent (a Visitor: cookies, CSRF, no redirects followed), exchange the code with its
 * PKCE verifier, refresh, revoke. Works against an in-process app (`cp.handle`) or a real server (`fetch`).
 */
import { createHash, randomBytes } from "node:crypto";
import { csrfOf, formFieldsOf, Visitor } from "./dashboard-visitor.ts";

export type Send = (request: Request) => Promise<Response>;

export const REDIRECT_URI = "http://127.0.0.1:33418/callback";

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

export class OAuthTestClient {
  constructor(
    readonly base: string,
    readonly send: Send = (r) => fetch(r, { redirect: "manual" }),
  ) {}

  /** RFC 7591 registration; the JSON answer. */
  async register(metadata: Record<string, unknown> = {}): Promise<{ status: number; body: any }> {
    const res = await this.send(new Request(`${this.base}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Test assistant", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none", ...metadata }),
    }));
    return { status: res.status, body: await res.json() };
  }

  /** A form post to the token or revocation endpoint. */
  async form(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<{ status: number; body: any; headers: Headers }> {
    const res = await this.send(new Request(`${this.base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams(fields),
    }));
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  }

  visitor(): Visitor {
    return new Visitor(this.base, this.send);
  }

  /** Signs the visitor in through the dashboard's own form. */
  async signIn(v: Visitor, email: string, password: string): Promise<void> {
    const page = await v.get("/dashboard/signin");
    const res = await v.post("/dashboard/signin", { _csrf: csrfOf(page.html), email, password, next: "/dashboard/links" });
    if (res.status !== 303 || !v.cookies.has("clink_session")) throw new Error(`sign-in failed: ${res.status}`);
  }

  /**
   * GET /oauth/authorize with `params`, then the consent page, then the person's `decision`: the Location the
   * browser is finally sent to (the client's redirect URI with code or error), or the page where it stopped.
   */
  async authorize(v: Visitor, params: Record<string, string>, decision: "allow" | "deny" = "allow"): Promise<{ location: string | null; status: number; html: string }> {
    const first = await v.get(`/oauth/authorize?${new URLSearchParams(params)}`);
    const to = first.headers.get("location");
    if (first.status !== 302 || !to || !to.startsWith("/dashboard/authorize")) return { location: to, status: first.status, html: first.html };
    const consent = await v.get(to);
    if (consent.status !== 200) return { location: consent.headers.get("location"), status: consent.status, html: consent.html };
    const fields = formFieldsOf(consent.html);
    const posted = await v.post("/dashboard/authorize", { ...Object.fromEntries(Object.entries(fields).map(([k, vs]) => [k, vs])), decision });
    return { location: posted.headers.get("location"), status: posted.status, html: posted.html };
  }

  /** The standard authorization parameters for a registered client, with a fresh PKCE pair. */
  authorizationParams(clientId: string, extra: Record<string, string> = {}) {
    const pkce = pkcePair();
    const params = {
      response_type: "code", client_id: clientId, redirect_uri: REDIRECT_URI, code_challenge: pkce.challenge,
      code_challenge_method: "S256", state: "state-123", resource: `${this.base}/mcp`, scope: "links:read links:write", ...extra,
    };
    return { params, verifier: pkce.verifier };
  }

  /** Register, consent as a signed-in visitor, exchange: the token answer and what it took. */
  async connect(v: Visitor, extra: Record<string, string> = {}) {
    const client = (await this.register()).body;
    const { params, verifier } = this.authorizationParams(client.client_id, extra);
    const { location } = await this.authorize(v, params);
    const code = new URL(location!).searchParams.get("code")!;
    const tokens = await this.form("/oauth/token", {
      grant_type: "authorization_code", code, code_verifier: verifier, client_id: client.client_id, redirect_uri: params.redirect_uri, resource: params.resource,
    });
    return { clientId: client.client_id as string, code, verifier, params, tokens: tokens.body, status: tokens.status };
  }
}

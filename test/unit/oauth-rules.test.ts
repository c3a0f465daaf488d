/** The OAuth server's pure rules (issue #23): redirect URIs, PKCE S256, scopes granted, resources. */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { grantedScopes, resourceKindOf } from "../../control/oauth/authorize.ts";
import { OAuthError } from "../../control/oauth/errors.ts";
import { pointsAtUs, redirectUriMatches, redirectUriProblem, redirectWith } from "../../control/oauth/redirect-uris.ts";
import { loadConfig } from "../../shared/config.ts";
import { isS256Challenge, pkceMatches } from "../../control/oauth/tokens.ts";

describe("redirect URIs", () => {
  test("allowed: https, http on loopback, an application's own scheme", () => {
    for (const ok of ["https://app.example/cb", "http://127.0.0.1:8080/cb", "http://localhost/cb", "http://[::1]:9/cb", "com.example.app:/cb", "cursor://anysphere.cursor-mcp/oauth/callback", "vscode://vscode.github-authentication/did-authenticate"]) {
      expect([ok, redirectUriProblem(ok)]).toEqual([ok, null]);
    }
  });

  test("refused: http elsewhere, schemes a browser runs or reads, fragments, credentials, spaces, relative", () => {
    for (const bad of ["http://app.example/cb", "javascript:alert(1)", "data:text/html,x", "file:///etc/passwd", "https://app.example/cb#x",
      "https://user:pw@app.example/cb", "https://app.example/c b", "/relative", "vbscript:x", "http://127.0.0.1.evil.example/cb", "blob:https://app.example/x", "about:blank", "ws://127.0.0.1/cb"]) {
      expect([bad, typeof redirectUriProblem(bad)]).toEqual([bad, "string"]);
    }
  });

  test("exact match, except a loopback URI's port (RFC 8252 §7.3)", () => {
    const registered = ["http://127.0.0.1/callback", "https://app.example/cb?x=1"];
    expect(redirectUriMatches("http://127.0.0.1:53121/callback", registered)).toBe(true);
    expect(redirectUriMatches("https://app.example/cb?x=1", registered)).toBe(true);
    for (const no of ["http://127.0.0.1:53121/callback/x", "http://localhost:53121/callback", "https://app.example/cb", "https://app.example/cb?x=1&y=2",
      "https://app.example:444/cb?x=1", "http://127.0.0.1:1/callback#f"]) {
      expect([no, redirectUriMatches(no, registered)]).toEqual([no, false]);
    }
  });

  test("a redirect URI that leads back to this service is ours, not a client's (base, OWN_HOSTS, our loopback port)", () => {
    const config = loadConfig({ BASE_URL: "http://localhost:3000", PORT: "3000", OWN_HOSTS: "links.example", DATA_DIR: "/tmp/clink-unused" });
    for (const uri of ["http://localhost:3000/cb", "http://127.0.0.1:3000/x", "https://links.example/abc", "http://links.example/abc"]) {
      expect([uri, pointsAtUs(config, uri)]).toEqual([uri, true]);
    }
    for (const uri of ["http://127.0.0.1:4000/cb", "https://app.example/cb", "com.example.app:/cb"]) {
      expect([uri, pointsAtUs(config, uri)]).toEqual([uri, false]);
    }
  });

  test("answers keep the URI's own query and add theirs", () => {
    expect(redirectWith("https://app.example/cb?x=1", { code: "c&d", state: undefined })).toBe("https://app.example/cb?x=1&code=c%26d");
  });
});

describe("PKCE S256", () => {
  const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
  const challenge = createHash("sha256").update(verifier).digest("base64url");

  test("the verifier's SHA-256 in base64url is the challenge (RFC 7636 appendix B)", () => {
    expect(challenge).toBe("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    expect(pkceMatches(verifier, challenge)).toBe(true);
    expect(isS256Challenge(challenge)).toBe(true);
  });

  test("another verifier, a short or long one, or the challenge itself (plain) does not match", () => {
    expect(pkceMatches(`${verifier}x`, challenge)).toBe(false);
    expect(pkceMatches("short", createHash("sha256").update("short").digest("base64url"))).toBe(false);
    expect(pkceMatches(challenge, challenge)).toBe(false);
    expect(pkceMatches("a".repeat(129), createHash("sha256").update("a".repeat(129)).digest("base64url"))).toBe(false);
  });
});

describe("scopes and resources", () => {
  test("what is asked, within what the client registered; unknown ones ignored; none asked is all allowed", () => {
    expect(grantedScopes("links:read offline_access links:read", null)).toEqual(["links:read"]);
    expect(grantedScopes(null, ["stats:read"])).toEqual(["stats:read"]);
    expect(grantedScopes("", null)).toEqual(["links:read", "links:write", "stats:read", "webhooks:manage"]);
    expect(grantedScopes("links:read links:write", ["links:read"])).toEqual(["links:read"]);
    expect(() => grantedScopes("links:write", ["links:read"])).toThrow(OAuthError);
    expect(() => grantedScopes("openid", null)).toThrow(OAuthError);
  });

  test("a resource is our /mcp or /api/v1, a trailing slash tolerated", () => {
    const base = "https://links.example";
    expect(["/mcp", "/mcp/", "/api/v1", "/api/v1/", "/api", "/mcp/x", ""].map((p) => resourceKindOf(base, `${base}${p}`)))
      .toEqual(["mcp", "mcp", "api", "api", null, null, null]);
    expect(resourceKindOf(base, "https://evil.example/mcp")).toBeNull();
  });
});

/**
 * Which redirect URIs a client may register, and when one asked for matches one registered. Exact string match
 * (OAuth 2.1 §2.3.1), except that a loopback one matches on any port (RFC 8252 §7.3: a native app listens on
 * whatever port is free). Allowed: https; http only to a loopback address; an application's own scheme (RFC 8252
 * §7.1 `com.example.app:/callback`, and in practice `cursor://…` or `vscode://…`), never one a browser runs or
 * reads itself (javascript:, data:, file: …).
 */
import { isOwnHost, ownHostsOf, type OwnHosts } from "../../shared/link-input.ts";
import type { Config } from "../../shared/config.ts";

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);
const BROWSER_SCHEMES = new Set([
  "javascript:", "data:", "vbscript:", "file:", "blob:", "about:", "filesystem:", "view-source:", "ftp:", "ws:", "wss:", "chrome:", "edge:",
  "intent:", "jar:", "mailto:", "tel:", "sms:",
]);

/** Why `uri` cannot be a redirect URI, or null when it can. */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length > 2000) return "is longer than 2000 characters";
  if (/[\s\x00-\x1f\x7f]/.test(uri)) return "contains spaces or control characters";
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return "is not an absolute URI";
  }
  if (u.hash !== "" || uri.includes("#")) return "must not have a fragment";
  if (u.username !== "" || u.password !== "") return "must not carry a user name or password";
  if (u.protocol === "https:") return u.hostname ? null : "has no host";
  if (u.protocol === "http:") return LOOPBACK_HOSTS.has(u.hostname) ? null : "must use https unless it is a loopback address (localhost, 127.0.0.1, [::1])";
  if (BROWSER_SCHEMES.has(u.protocol) || !/^[a-z][a-z0-9+.-]*:$/.test(u.protocol)) {
    return `scheme ${u.protocol} is not allowed (https, http on loopback, or an application's own scheme such as com.example.app:)`;
  }
  return null;
}

const isLoopback = (u: URL) => u.protocol === "http:" && LOOPBACK_HOSTS.has(u.hostname);

/** Whether `asked` is one of `registered`: the same string, or a loopback URI differing only by its port. */
export function redirectUriMatches(asked: string, registered: readonly string[]): boolean {
  if (registered.includes(asked)) return true;
  let a: URL;
  try {
    a = new URL(asked);
  } catch {
    return false;
  }
  if (!isLoopback(a) || asked.includes("#")) return false;
  return registered.some((r) => {
    const b = URL.canParse(r) ? new URL(r) : null;
    if (!b || !isLoopback(b)) return false;
    a.port = "";
    b.port = "";
    return a.href === b.href;
  });
}

/** Where an authorization answer goes: the redirect URI with `params` added to its query (RFC 6749 §4.1.2). */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const u = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.append(k, v);
  return u.href;
}

const ownHostsByConfig = new WeakMap<Config, OwnHosts>();

/**
 * Whether `uri` leads back to this service (its base URL, OWN_HOSTS, or its own loopback port): a client has no
 * business receiving codes here, and a short link there could forward them anywhere while the consent page named us.
 */
export function pointsAtUs(config: Config, uri: string): boolean {
  let own = ownHostsByConfig.get(config);
  if (!own) ownHostsByConfig.set(config, (own = ownHostsOf([config.baseUrl, ...config.ownBaseUrls], config.port)));
  const u = URL.canParse(uri) ? new URL(uri) : null;
  return u !== null && (u.protocol === "http:" || u.protocol === "https:") && isOwnHost(u, own);
}

/**
 * The visitor's address for the sign-in rate limit. Elysia's `app.handle(request)` has no socket, so the
 * process entry (control/main.ts) records each control request's peer here before handing it over; the
 * address is then resolved through TRUSTED_PROXIES exactly as the redirector does.
 */
import { createClientIpResolver, type ClientIpResolver } from "../../shared/facts/client-ip.ts";
import type { Deps } from "../deps.ts";

const peers = new WeakMap<Request, string>();
const resolvers = new WeakMap<readonly string[], ClientIpResolver>();

/** Called by the server's fetch handler with `server.requestIP(request)?.address`. */
export function rememberPeer(request: Request, address: string | null | undefined): void {
  if (address) peers.set(request, address);
}

/** The client's address, or null when the socket peer was not recorded (e.g. a request made in-process). */
export function clientIp(deps: Deps, request: Request): string | null {
  const list = deps.config.trustedProxies;
  let resolve = resolvers.get(list);
  if (!resolve) {
    resolve = createClientIpResolver(list);
    resolvers.set(list, resolve);
  }
  return resolve(peers.get(request) ?? null, request.headers.get("x-forwarded-for"));
}

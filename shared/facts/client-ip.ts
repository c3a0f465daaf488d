/**
 * The visitor's address (design §4): the socket peer, or, when that peer is one of our own trusted proxies, the
 * first untrusted hop in X-Forwarded-For counted from the right. Hops to the left of an untrusted one were written
 * by the client itself and are never believed.
 */
import { cidrContains, normaliseIp, parseCidr, parseIp, type Cidr, type ParsedIp } from "../net/ip.ts";

export type ClientIpResolver = (socketIp: string | null, xff: string | null) => string | null;

/** Hops walked at most; a longer X-Forwarded-For chain is attacker-made or broken, not a real proxy path. */
const MAX_HOPS = 32;

/**
 * Builds the resolver once at start-up from TRUSTED_PROXIES (addresses or CIDRs, IPv4 or IPv6).
 * Throws an Error naming TRUSTED_PROXIES for an entry that is not an address or CIDR.
 */
export function createClientIpResolver(trustedProxies: readonly string[]): ClientIpResolver {
  const nets: Cidr[] = [];
  for (const raw of trustedProxies) {
    const c = parseCidr(raw.trim());
    if (!c) throw new Error(`TRUSTED_PROXIES: "${raw}" is not an IP address or CIDR`);
    nets.push(c);
  }

  const socketAddress = (socketIp: string | null) => (socketIp ? normaliseIp(socketIp) : null);

  // Nobody trusted: X-Forwarded-For is ignored outright, no parsing at all.
  if (nets.length === 0) return (socketIp) => socketAddress(socketIp);

  const trusted = (ip: ParsedIp) => {
    for (const c of nets) if (cidrContains(c, ip)) return true;
    return false;
  };

  return (socketIp, xff) => {
    const peer = socketIp ? parseIp(socketIp) : null;
    if (!peer) return null;
    const peerText = socketAddress(socketIp)!;
    if (!xff || !trusted(peer)) return peerText;

    // Walk right to left without splitting the whole header.
    let nearest = peerText; // the closest hop we have reached, all of them trusted so far
    let end = xff.length;
    for (let hops = 0; hops < MAX_HOPS && end > 0; hops++) {
      const comma = xff.lastIndexOf(",", end - 1);
      const entry = hopAddress(xff.slice(comma + 1, end));
      end = comma === -1 ? 0 : comma;
      if (entry === null) return nearest; // garbage from further left cannot be believed
      const parsed = parseIp(entry)!;
      if (!trusted(parsed)) return normaliseIp(entry);
      nearest = normaliseIp(entry)!;
    }
    return nearest;
  };
}

/**
 * One X-Forwarded-For element as an address: trims spaces and accepts the `[v6]`, `[v6]:port` and `v4:port` forms
 * some proxies write. Null when it is not an address ("unknown", obfuscated identifiers, junk).
 */
function hopAddress(raw: string): string | null {
  let s = raw.trim();
  if (s.length === 0) return null;
  if (s.charCodeAt(0) === 91 /* [ */) {
    const close = s.indexOf("]");
    if (close === -1) return null;
    s = s.slice(1, close);
  } else {
    const colon = s.indexOf(":");
    if (colon !== -1 && s.indexOf(":", colon + 1) === -1) s = s.slice(0, colon); // "1.2.3.4:5678"
  }
  return parseIp(s) ? s : null;
}

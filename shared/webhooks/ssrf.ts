/**
 * SSRF guard for webhook targets (design §4, §8 "no SSRF through webhooks"): a webhook URL is user input, and the
 * server must not become a way to reach loopback, the private network or a cloud metadata service.
 *
 * The check resolves the host and refuses if ANY address it resolves to is non-public; the sender then connects to
 * the checked address itself (see sender.ts), so a second DNS answer cannot swap in a private one.
 */
import { lookup } from "node:dns/promises";
import { cidrContains, embeddedIPv4, normaliseIp, parseCidr, parseIp, v6HasPrefix, type Cidr, type ParsedIp } from "../net/ip.ts";
import { TimeoutError, withTimeout } from "../time.ts";

/** Resolves a host name to its addresses (all families). */
export type ResolveHost = (host: string) => Promise<string[]>;

export type WebhookTargetCheck = { ok: true; address: string } | { ok: false; reason: string };

function cidrs(list: string[]): Cidr[] {
  return list.map((s) => parseCidr(s)!);
}

/** IPv4 ranges that are not the public internet (RFC 6890 special-purpose registry and friends). */
const PRIVATE_V4 = cidrs([
  "0.0.0.0/8", // "this network"; 0.0.0.0 reaches the local host on Linux
  "10.0.0.0/8",
  "100.64.0.0/10", // carrier-grade NAT
  "127.0.0.0/8",
  "169.254.0.0/16", // link-local, includes the 169.254.169.254 metadata service
  "172.16.0.0/12",
  "192.0.0.0/24", // IETF protocol assignments
  "192.0.2.0/24", // documentation
  "192.88.99.0/24", // 6to4 relay anycast (deprecated)
  "192.168.0.0/16",
  "198.18.0.0/15", // benchmarking
  "198.51.100.0/24", // documentation
  "203.0.113.0/24", // documentation
  "224.0.0.0/4", // multicast
  "240.0.0.0/4", // reserved, includes 255.255.255.255 broadcast
]);

/**
 * IPv6 ranges inside global unicast (2000::/3) that are not public. Everything outside 2000::/3 is refused
 * wholesale (::, ::1, IPv4-compatible ::/96, fc00::/7 unique-local, fe80::/10 link-local, ff00::/8 multicast,
 * 100::/64 discard, …), except the NAT64 prefix whose embedded IPv4 address is checked instead.
 */
const PRIVATE_V6_IN_GLOBAL = cidrs([
  "2001::/23", // IETF protocol assignments: Teredo (2001::/32, embeds an IPv4 address), benchmarking, ORCHID
  "2001:db8::/32", // documentation
  "3fff::/20", // documentation (RFC 9637)
]);

/** Cloud metadata endpoints: refused even when private targets are allowed, since no webhook needs them. */
const METADATA = ["169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254"].map((s) => parseIp(s)!);

/**
 * Compared by value, so every spelling of an address (zeros, case, mapped form) is caught, and an IPv4 one also in
 * the NAT64 and 6to4 forms that reach it (the same unpacking as the private check's).
 */
function isMetadataParsed(ip: ParsedIp): boolean {
  const v4 = ip.v === 4 ? ip.n : embeddedIPv4(ip.w);
  for (const m of METADATA) {
    if (m.v === 4 ? v4 === m.n : ip.v === 6 && v6HasPrefix(ip.w, m.w, 128)) return true;
  }
  return false;
}

const NAT64_LOCAL = [0x64, 0xff9b, 1]; // 64:ff9b:1::/48, local-use NAT64 (RFC 8215)

function isPrivateV4(n: number): boolean {
  const ip: ParsedIp = { v: 4, n };
  for (const c of PRIVATE_V4) if (cidrContains(c, ip)) return true;
  return false;
}

function isPrivateParsed(ip: ParsedIp): boolean {
  if (ip.v === 4) return isPrivateV4(ip.n); // also IPv4-mapped ::ffff:a.b.c.d, in either text form
  const w = ip.w;
  const embedded = embeddedIPv4(w); // NAT64 and 6to4 reach the IPv4 address they carry
  if (embedded >= 0) return isPrivateV4(embedded);
  if (v6HasPrefix(w, NAT64_LOCAL, 48)) return true;
  if ((w[0] & 0xe000) !== 0x2000) return true; // outside global unicast 2000::/3
  for (const c of PRIVATE_V6_IN_GLOBAL) if (cidrContains(c, ip)) return true;
  return false;
}

/**
 * Whether an address is loopback, private, link-local, CGNAT, reserved, documentation, multicast or a metadata
 * address, in IPv4 or any IPv6 form that carries an IPv4 address. Text that is not a strict address counts as
 * private: what cannot be read cannot be allowed.
 */
export function isPrivateAddress(ip: string): boolean {
  const parsed = parseIp(ip);
  return parsed === null || isPrivateParsed(parsed);
}

/** Whether an address is a cloud metadata service (refused even with WEBHOOK_ALLOW_PRIVATE). */
export function isMetadataAddress(ip: string): boolean {
  const parsed = parseIp(ip);
  return parsed !== null && isMetadataParsed(parsed);
}

const systemResolve: ResolveHost = async (host) => (await lookup(host, { all: true })).map((a) => a.address);

/** A name that takes longer than this to resolve is refused: the check runs while an API request waits for it. */
const RESOLVE_TIMEOUT_MS = 3_000;

/**
 * Checks a webhook URL just before it is called: http/https only; the host (an IP literal, or every address it
 * resolves to) must be public unless `allowPrivate`. Returns the address to connect to (IPv4 preferred, as it
 * works on hosts without IPv6 routes). Never throws.
 *
 * Numeric host tricks (`0x7f.1`, `2130706433`, `0177.0.0.1`) need no special code: WHATWG URL parsing turns them
 * into the dotted address they mean before the check sees them.
 */
export async function checkWebhookTarget(
  url: string,
  allowPrivate: boolean,
  resolve: ResolveHost = systemResolve,
): Promise<WebhookTargetCheck> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { ok: false, reason: "not a valid URL" };
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return { ok: false, reason: `scheme ${u.protocol} is not allowed` };
  let host = u.hostname;
  if (host.startsWith("[")) host = host.slice(1, -1);
  if (!host) return { ok: false, reason: "no host" };

  let addresses: string[];
  // For a host name, what it resolves to is not told back: that would map internal names to private addresses.
  const literal = parseIp(host) !== null;
  const what = (normal: string) => (literal ? normal : `host ${host}`);
  if (literal) {
    addresses = [host];
  } else {
    try {
      addresses = await withTimeout(resolve(host), RESOLVE_TIMEOUT_MS);
    } catch (err) {
      if (err instanceof TimeoutError) return { ok: false, reason: `host ${host} did not resolve within ${RESOLVE_TIMEOUT_MS / 1000} s` };
      return { ok: false, reason: `host ${host} does not resolve` };
    }
    if (addresses.length === 0) return { ok: false, reason: `host ${host} does not resolve` };
  }

  let chosen: string | null = null;
  for (const a of addresses) {
    const parsed = parseIp(a);
    if (!parsed) return { ok: false, reason: `host ${host} resolves to an unreadable address` };
    const normal = normaliseIp(a)!;
    if (isMetadataParsed(parsed)) return { ok: false, reason: `${what(normal)} is a metadata address` };
    if (!allowPrivate && isPrivateParsed(parsed)) return { ok: false, reason: `${what(normal)} is not a public address` };
    if (chosen === null || (parsed.v === 4 && chosen.indexOf(":") !== -1)) chosen = normal;
  }
  return { ok: true, address: chosen! };
}

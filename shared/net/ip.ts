/**
 * Strict IP address and CIDR parsing without allocation-heavy helpers, shared by the client-address resolver
 * (trusted proxies), the GeoIP lookup and the webhook SSRF guard.
 *
 * Strict on purpose: only canonical dotted-quad IPv4 (no octal, hex or short forms, no leading zeros) and RFC 4291
 * IPv6 text. Anything else is "not an address", so a crafted string can never be read as a different address
 * than the one the OS would connect to.
 */

/** An IPv4 address as an unsigned 32-bit number, or an IPv6 address as eight 16-bit words. */
export type ParsedIp = { v: 4; n: number } | { v: 6; w: Uint16Array };

/** Dotted-quad IPv4 → unsigned 32-bit number, or -1 when `s[from, to)` is not one. */
export function parseIPv4(s: string, from = 0, to = s.length): number {
  let n = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c === 46 /* . */) {
      if (digits === 0 || dots === 3) return -1;
      n = n * 256 + part;
      part = 0;
      digits = 0;
      dots++;
    } else if (c >= 48 && c <= 57) {
      // A leading zero ("010") is octal to inet_aton and decimal to us: refuse the ambiguity.
      if (digits === 1 && part === 0) return -1;
      part = part * 10 + (c - 48);
      if (++digits > 3 || part > 255) return -1;
    } else {
      return -1;
    }
  }
  if (dots !== 3 || digits === 0) return -1;
  return n * 256 + part;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** IPv6 text (optionally with an embedded IPv4 tail and a `%zone`) → eight words, or null. */
export function parseIPv6(input: string): Uint16Array | null {
  let end = input.indexOf("%");
  if (end === -1) end = input.length;
  else if (end === input.length - 1) return null; // "%" with an empty zone
  if (end < 2 || end > 45) return null;

  const words = new Uint16Array(8);
  let count = 0; // words written so far
  let gap = -1; // index in `words` where "::" sits
  let i = 0;
  if (input.charCodeAt(0) === 58 /* : */) {
    if (input.charCodeAt(1) !== 58) return null;
    gap = 0;
    i = 2;
    if (i === end) return words; // "::"
  }
  while (i < end) {
    // One group: up to 4 hex digits, or an IPv4 tail in the last 32 bits.
    let value = 0;
    let digits = 0;
    const start = i;
    while (i < end) {
      const h = hexValue(input.charCodeAt(i));
      if (h === -1) break;
      value = value * 16 + h;
      if (++digits > 4) return null;
      i++;
    }
    if (i < end && input.charCodeAt(i) === 46 /* . */) {
      const v4 = parseIPv4(input, start, end);
      if (v4 < 0 || count > 6) return null;
      words[count++] = v4 >>> 16;
      words[count++] = v4 & 0xffff;
      i = end;
      break;
    }
    if (digits === 0 || count === 8) return null;
    words[count++] = value;
    if (i === end) break;
    if (input.charCodeAt(i) !== 58) return null;
    i++;
    if (input.charCodeAt(i) === 58) {
      if (gap !== -1) return null; // a second "::"
      gap = count;
      i++;
      if (i === end) break;
    } else if (i === end) {
      return null; // trailing single ":"
    }
  }
  if (gap === -1) return count === 8 ? words : null;
  if (count === 8) return null; // "::" must stand for at least one zero word
  // Slide the words written after the gap to the end.
  const tail = count - gap;
  for (let k = tail - 1; k >= 0; k--) {
    words[8 - tail + k] = words[gap + k];
    words[gap + k] = 0;
  }
  return words;
}

/** The IPv4 address carried in an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`), else -1. */
export function mappedIPv4(w: Uint16Array): number {
  if (w[0] === 0 && w[1] === 0 && w[2] === 0 && w[3] === 0 && w[4] === 0 && w[5] === 0xffff) {
    return w[6] * 65536 + w[7];
  }
  return -1;
}

const NAT64 = [0x64, 0xff9b, 0, 0, 0, 0];
const SIX_TO_FOUR = [0x2002];

/**
 * The IPv4 address an IPv6 address reaches through a translator or tunnel, else -1: NAT64's well-known prefix
 * 64:ff9b::/96 (RFC 6052) carries it in its last 32 bits, 6to4's 2002::/16 (RFC 3056) right after the prefix.
 * (The IPv4-mapped form needs no unpacking here: parseIp already reads it as IPv4.)
 */
export function embeddedIPv4(w: Uint16Array): number {
  if (v6HasPrefix(w, NAT64, 96)) return w[6] * 65536 + w[7];
  if (v6HasPrefix(w, SIX_TO_FOUR, 16)) return w[1] * 65536 + w[2];
  return -1;
}

/** Parses either family; an IPv4-mapped IPv6 address comes back as the IPv4 address it carries. */
export function parseIp(s: string): ParsedIp | null {
  if (s.indexOf(":") === -1) {
    const n = parseIPv4(s);
    return n < 0 ? null : { v: 4, n };
  }
  const w = parseIPv6(s);
  if (!w) return null;
  const n = mappedIPv4(w);
  return n < 0 ? { v: 6, w } : { v: 4, n };
}

export function formatIPv4(n: number): string {
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/**
 * Canonical text for an address, or null if it is not one: IPv4-mapped IPv6 becomes dotted IPv4, IPv6 loses its
 * zone and is lower-cased. Cheap for the common case (a plain IPv4 string is returned as is).
 */
export function normaliseIp(s: string): string | null {
  if (s.indexOf(":") === -1) return parseIPv4(s) < 0 ? null : s;
  const w = parseIPv6(s);
  if (!w) return null;
  const n = mappedIPv4(w);
  if (n >= 0) return formatIPv4(n);
  const zone = s.indexOf("%");
  return (zone === -1 ? s : s.slice(0, zone)).toLowerCase();
}

/**
 * What a per-visitor limit counts by: an IPv4 address as it is, an IPv6 address by its /64 (one subscriber usually
 * holds a whole /64, so counting single addresses would give an attacker 2^64 budgets). Anything else as given.
 */
export function addressBucket(ip: string): string {
  const parsed = parseIp(ip);
  if (!parsed) return ip;
  if (parsed.v === 4) return formatIPv4(parsed.n);
  return `${Array.from(parsed.w.subarray(0, 4), (x) => x.toString(16)).join(":")}::/64`;
}

/** A network: IPv4 `net/bits` or IPv6 words + prefix length. */
export type Cidr = { v: 4; net: number; mask: number } | { v: 6; w: Uint16Array; bits: number };

function v4Mask(bits: number): number {
  return bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
}

/** `addr` or `addr/bits` → Cidr (host bits cleared), or null. `::ffff:a.b.c.d/n` (n ≥ 96) becomes IPv4. */
export function parseCidr(s: string): Cidr | null {
  const slash = s.indexOf("/");
  const addr = slash === -1 ? s : s.slice(0, slash);
  let bits = -1;
  if (slash !== -1) {
    const b = s.slice(slash + 1);
    if (!/^\d{1,3}$/.test(b)) return null;
    bits = Number(b);
  }
  if (addr.indexOf(":") === -1) {
    const n = parseIPv4(addr);
    if (n < 0) return null;
    if (bits === -1) bits = 32;
    if (bits > 32) return null;
    const mask = v4Mask(bits);
    return { v: 4, net: (n & mask) >>> 0, mask };
  }
  const w = parseIPv6(addr);
  if (!w) return null;
  if (bits === -1) bits = 128;
  if (bits > 128) return null;
  const mapped = mappedIPv4(w);
  if (mapped >= 0 && bits >= 96) {
    const mask = v4Mask(bits - 96);
    return { v: 4, net: (mapped & mask) >>> 0, mask };
  }
  for (let i = 0; i < 8; i++) {
    const keep = Math.max(0, Math.min(16, bits - i * 16));
    w[i] &= keep === 0 ? 0 : (0xffff << (16 - keep)) & 0xffff;
  }
  return { v: 6, w, bits };
}

export function cidrContains(c: Cidr, ip: ParsedIp): boolean {
  if (c.v === 4) return ip.v === 4 && ((ip.n & c.mask) >>> 0) === c.net;
  if (ip.v !== 6) return false;
  return v6HasPrefix(ip.w, c.w, c.bits);
}

/** Whether the first `bits` bits of `w` equal those of `prefix`. */
export function v6HasPrefix(w: Uint16Array, prefix: ArrayLike<number>, bits: number): boolean {
  let i = 0;
  for (; bits >= 16; bits -= 16, i++) if (w[i] !== prefix[i]) return false;
  if (bits === 0) return true;
  const mask = (0xffff << (16 - bits)) & 0xffff;
  return (w[i] & mask) === (prefix[i] & mask);
}

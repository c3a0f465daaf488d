/** Webhook SSRF guard (design §4, §8): private, loopback, link-local, CGNAT, metadata, in every textual form. */
import { describe, expect, test } from "bun:test";
import { checkWebhookTarget, isMetadataAddress, isPrivateAddress, type ResolveHost } from "../../shared/webhooks/ssrf.ts";

describe("isPrivateAddress", () => {
  test.each([
    // IPv4 special-purpose ranges, edges included
    "0.0.0.0", "0.255.255.255", "10.0.0.0", "10.255.255.255", "100.64.0.1", "100.127.255.255", "127.0.0.1",
    "127.255.255.254", "169.254.0.1", "169.254.169.254", "172.16.0.1", "172.31.255.255", "192.0.0.8", "192.0.2.1",
    "192.88.99.1", "192.168.0.1", "192.168.255.255", "198.18.0.1", "198.19.255.255", "198.51.100.7",
    "203.0.113.200", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
    // IPv6
    "::", "::1", "fc00::1", "fd12:3456::1", "fd00:ec2::254", "fe80::1", "fe80::1%eth0", "febf::1", "ff02::1",
    "100::1", "2001:db8::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "3fff::1",
    // IPv4 carried in IPv6
    "::ffff:127.0.0.1", "::ffff:7f00:1", "::FFFF:7F00:0001", "0:0:0:0:0:ffff:a00:1", "::ffff:169.254.169.254",
    "::127.0.0.1", "::7f00:1", "::8.8.8.8", // IPv4-compatible (deprecated): refused whatever it embeds
    "64:ff9b::127.0.0.1", "64:ff9b::a00:1", "64:ff9b:1::8.8.8.8", "2002:7f00:1::1", "2002:c0a8:101::1",
    "::ffff:0:8.8.8.8", // SIIT IPv4-translated
    // not strict addresses
    "", "localhost", "0x7f.0.0.1", "2130706433", "010.0.0.1", "1.2.3", "[::1]",
  ])("%p is refused", (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });

  test.each([
    "8.8.8.8", "1.1.1.1", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "126.255.255.255",
    "128.0.0.0", "169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0", "192.0.1.1", "192.167.255.255",
    "192.169.0.0", "198.17.255.255", "198.20.0.0", "223.255.255.255",
    "2606:4700:4700::1111", "2001:4860:4860::8888", "2a00:1450:4001::200e", "2001:200::1",
    "::ffff:8.8.8.8", "::ffff:808:808", "64:ff9b::8.8.8.8", "2002:808:808::1",
  ])("%p is public", (ip) => {
    expect(isPrivateAddress(ip)).toBe(false);
  });

  test.each([
    ["169.254.169.254", true], ["::ffff:169.254.169.254", true], ["fd00:ec2::254", true], ["FD00:EC2:0::254", true],
    ["169.254.170.2", true], ["100.100.100.200", true], ["169.254.169.253", false], ["10.0.0.1", false],
    // embedded IPv4 in every form the private check unpacks: NAT64 (64:ff9b::/96) and 6to4 (2002::/16)
    ["64:ff9b::a9fe:a9fe", true], ["64:ff9b::169.254.169.254", true], ["64:FF9B:0:0:0:0:A9FE:A9FE", true],
    ["64:ff9b::a9fe:aa02", true], ["64:ff9b::6464:64c8", true], ["2002:a9fe:a9fe::1", true], ["2002:a9fe:a9fe::", true],
    ["2002:6464:64c8:1:2:3:4:5", true], ["64:ff9b::a9fe:a9fd", false], ["2002:a9fe:a9fd::1", false], ["2003:a9fe:a9fe::1", false],
  ] as const)("metadata %s → %p", (ip, expected) => {
    expect(isMetadataAddress(ip)).toBe(expected);
  });
});

/** A resolver that answers from a table, so tests never depend on public DNS. */
function fakeDns(table: Record<string, string[]>): ResolveHost {
  return async (host) => {
    const a = table[host];
    if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return a;
  };
}

const dns = fakeDns({
  "public.example": ["93.184.215.14"],
  "dual.example": ["2606:2800:21f:cb07:6820:80da:af6b:8b2c", "93.184.215.14"],
  "v6only.example": ["2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
  "internal.example": ["10.0.0.5"],
  "mixed.example": ["93.184.215.14", "127.0.0.1"], // one bad address is enough to refuse
  "mapped.example": ["::ffff:7f00:1"],
  "metadata.example": ["169.254.169.254"],
  "nat64-metadata.example": ["64:ff9b::a9fe:a9fe"],
  "empty.example": [],
  "junk.example": ["not-an-ip"],
});

describe("checkWebhookTarget", () => {
  test.each([
    // [url, allowPrivate, expected address or null when refused]
    ["https://public.example/hook", false, "93.184.215.14"],
    ["http://public.example:8080/hook?x=1", false, "93.184.215.14"],
    ["https://dual.example/hook", false, "93.184.215.14"], // IPv4 preferred
    ["https://v6only.example/hook", false, "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    ["https://8.8.8.8/hook", false, "8.8.8.8"],
    ["https://[2606:4700:4700::1111]/hook", false, "2606:4700:4700::1111"],
    ["https://internal.example/hook", false, null],
    ["https://internal.example/hook", true, "10.0.0.5"],
    ["https://mixed.example/hook", false, null],
    ["https://mixed.example/hook", true, "93.184.215.14"],
    ["https://mapped.example/hook", false, null],
    ["https://mapped.example/hook", true, "127.0.0.1"],
    ["https://metadata.example/hook", false, null],
    ["https://metadata.example/hook", true, null], // metadata stays refused even when private targets are allowed
    ["http://169.254.169.254/latest/meta-data/", true, null],
    ["http://[fd00:ec2::254]/latest/meta-data/", true, null],
    ["http://[64:ff9b::a9fe:a9fe]/latest/meta-data/", true, null], // NAT64 form of 169.254.169.254
    ["http://[2002:a9fe:a9fe::1]/latest/meta-data/", true, null], // 6to4 form
    ["https://nat64-metadata.example/hook", true, null],
    ["http://[64:ff9b::a00:1]/", true, "64:ff9b::a00:1"], // a private address in NAT64 form is allowed with allowPrivate
    ["https://empty.example/hook", true, null],
    ["https://junk.example/hook", true, null],
    ["https://nxdomain.example/hook", true, null],
    // numeric host tricks, normalised by WHATWG URL parsing before the check
    ["http://127.0.0.1/", false, null],
    ["http://127.0.0.1/", true, "127.0.0.1"],
    ["http://0x7f.1/", false, null],
    ["http://2130706433/", false, null],
    ["http://0177.0.0.1/", false, null],
    ["http://0/", false, null],
    ["http://127.1/", false, null],
    ["http://[::1]/", false, null],
    ["http://[::ffff:127.0.0.1]/", false, null],
    ["http://[::ffff:7f00:1]/", false, null],
    ["http://[0:0:0:0:0:ffff:a9fe:a9fe]/", false, null],
    ["http://0xa9.0xfe.0xa9.0xfe/", true, null], // 169.254.169.254 in hex: metadata
    // schemes and malformed input
    ["ftp://public.example/hook", false, null],
    ["file:///etc/passwd", true, null],
    ["javascript:alert(1)", true, null],
    ["not a url", true, null],
    ["", true, null],
  ] as const)("%s (allowPrivate %p) → %p", async (url, allowPrivate, expected) => {
    const r = await checkWebhookTarget(url, allowPrivate, dns);
    if (expected === null) {
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason.length).toBeGreaterThan(0);
    } else {
      expect(r).toEqual({ ok: true, address: expected });
    }
  });

  test("WHATWG URL parsing is what defeats numeric host tricks", () => {
    expect(new URL("http://0x7f.1/").hostname).toBe("127.0.0.1");
    expect(new URL("http://2130706433/").hostname).toBe("127.0.0.1");
    expect(new URL("http://0177.0.0.1/").hostname).toBe("127.0.0.1");
    expect(new URL("http://[::ffff:127.0.0.1]/").hostname).toBe("[::ffff:7f00:1]");
  });

  test("a metadata address in NAT64 or 6to4 form is named as one, even with private targets allowed", async () => {
    expect(await checkWebhookTarget("http://[64:ff9b::a9fe:a9fe]/", true, dns)).toEqual({ ok: false, reason: "64:ff9b::a9fe:a9fe is a metadata address" });
    expect(await checkWebhookTarget("http://[2002:a9fe:a9fe::1]/", true, dns)).toEqual({ ok: false, reason: "2002:a9fe:a9fe::1 is a metadata address" });
    expect(await checkWebhookTarget("https://nat64-metadata.example/", true, dns)).toEqual({ ok: false, reason: "host nat64-metadata.example is a metadata address" });
  });

  test("a name that does not resolve within 3 s is refused, so an API request never hangs on DNS", async () => {
    const never = () => new Promise<string[]>(() => {});
    expect(await checkWebhookTarget("https://slow.example/hook", false, never)).toEqual({ ok: false, reason: "host slow.example did not resolve within 3 s" });
  });

  test("the system resolver is used by default (localhost resolves to loopback and is refused)", async () => {
    const r = await checkWebhookTarget("http://localhost:9/hook", false);
    expect(r.ok).toBe(false);
    // A host name's resolved address is not told back (it would map internal names to private addresses).
    if (!r.ok) expect(r.reason).toBe("host localhost is not a public address");
    const literal = await checkWebhookTarget("http://127.0.0.1:9/hook", false);
    if (!literal.ok) expect(literal.reason).toBe("127.0.0.1 is not a public address");
    expect(literal.ok).toBe(false);
    const allowed = await checkWebhookTarget("http://localhost:9/hook", true);
    expect(allowed.ok).toBe(true);
    if (allowed.ok) expect(["127.0.0.1", "::1"]).toContain(allowed.address);
  });
});

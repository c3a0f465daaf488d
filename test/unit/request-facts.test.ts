/**
 * LazyRequestFacts (redirector/request-facts.ts): each fact is worked out once per request, when first asked; the
 * socket's address above all (server.requestIP is a getpeername(2) call), which a country rule's lookup and the
 * click's record share.
 */
import type { Server } from "bun";
import { expect, test } from "bun:test";
import { createFactsContext, requestFacts } from "../../redirector/request-facts.ts";

/** A server whose requestIP answers `address` and counts the calls. */
function countingServer(address: string) {
  const s = { calls: 0, requestIP: () => (s.calls++, { address, family: "IPv4", port: 40_000 }) };
  return s;
}

const lookup = (ip: string) => (ip === "203.0.113.9" ? "DE" : null);

test("a country lookup and the click's address ask the socket once between them", () => {
  for (const trustedProxies of [[], ["10.0.0.0/8"]]) {
    const ctx = createFactsContext({ trustedProxies, countryHeader: null } as never, lookup);
    const server = countingServer("203.0.113.9");
    const req = new Request("http://short.example/s");
    const facts = requestFacts(ctx, req, server as unknown as Server<unknown>, req.url, null, 0)!;
    expect(server.calls).toBe(0); // nothing asked yet
    expect(facts.country()).toBe("DE");
    expect(facts.clickAddress()).toBe("203.0.113.9");
    expect(facts.visitorAddress()).toBe("203.0.113.9");
    expect(server.calls).toBe(1);
  }
});

test("behind a trusted proxy the click carries the forwarded address; otherwise the socket's as Bun reports it", () => {
  const req = new Request("http://short.example/s", { headers: { "x-forwarded-for": "198.51.100.7" } });
  const behind = createFactsContext({ trustedProxies: ["10.0.0.0/8"], countryHeader: null } as never, null);
  const direct = createFactsContext({ trustedProxies: [], countryHeader: null } as never, null);
  const viaProxy = countingServer("10.1.2.3") as unknown as Server<unknown>;
  expect(requestFacts(behind, req, viaProxy, req.url, null, 0)!.clickAddress()).toBe("198.51.100.7");
  const mapped = countingServer("::ffff:203.0.113.9") as unknown as Server<unknown>;
  expect(requestFacts(direct, req, mapped, req.url, null, 0)!.clickAddress()).toBe("::ffff:203.0.113.9");
});

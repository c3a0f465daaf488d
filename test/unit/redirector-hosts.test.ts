/**
 * Host header tricks against the redirector (issue #24): its `fetch` in process with the URL Bun would build from a
 * Host, and over real HTTP (Bun.serve, raw requests on a socket) for what only a client can send: an empty Host, a
 * Unicode one, a request target with an authority, two Host headers. A Host names one domain and serves only its
 * links; a name that is not a verified domain serves nothing. DomainTable's own spelling rules are
 * test/unit/domain-table.test.ts; the control plane's `ask` for certificates is checked on the same spellings here.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { putDomain } from "../helpers/domains.ts";
import { jsonOf } from "../helpers/in-process.ts";
import { expectPage, expectRedirect, socketFrom, startRedirector, type RedirectorHarness } from "./redirector-harness.ts";

const GO = "go.acme.example";
const SHOP = "shop.acme.example";
const THEIRS = "go.other.example";
const PENDING = "pending.acme.example";
const IDN = "xn--bcher-kva.example"; // bücher.example

let h: RedirectorHarness;
let server: ReturnType<typeof Bun.serve>;
const slug = "spring";
const only = "only-go";

beforeAll(async () => {
  h = await startRedirector();
  const owner = (await h.cp.account("owner@example.com")).id;
  const other = await h.cp.createKey("other@example.com");
  for (const d of [GO, SHOP, IDN]) await putDomain(h.cp, owner, d);
  await putDomain(h.cp, owner, PENDING, { state: "pending", verifiedAt: null });
  await putDomain(h.cp, other.account.id, THEIRS);
  await h.redirector.domains.refresh();
  await h.createLink({ slug, url: "https://example.com/base" });
  for (const d of [GO, SHOP, IDN]) await h.createLink({ slug, url: `https://example.com/${d}`, domain: d });
  await h.createLink({ slug: only, url: "https://example.com/only", domain: GO, webhookUrl: "https://93.184.216.34/hook" });
  const theirs = await h.cp.request("POST", "/api/v1/links", { key: other.key, json: { slug: "theirs", url: "https://example.com/theirs", domain: THEIRS } });
  expect(theirs.status, JSON.stringify(await jsonOf(theirs))).toBe(201);
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req, srv) => h.redirector.fetch(req, srv) });
});
afterAll(async () => {
  server?.stop(true);
  await h?.close();
});

/** The redirector's answer to a request whose URL (what Bun builds from the Host header) is `url`. */
const at = async (url: string) => h.redirector.fetch(new Request(url, { redirect: "manual" }), socketFrom("127.0.0.1"));

describe("in process, by the URL Bun builds from Host", () => {
  test("the same slug on the base domain and two custom domains: each Host gets its own link", async () => {
    expectRedirect(await at(`http://clink.test/${slug}`), "https://example.com/base");
    expectRedirect(await at(`https://${GO}/${slug}`), `https://example.com/${GO}`);
    expectRedirect(await at(`https://${SHOP}/${slug}`), `https://example.com/${SHOP}`);
  });

  test("every spelling of a verified domain's Host: case, trailing dot, port, punycode and its Unicode form", async () => {
    for (const host of ["GO.ACME.EXAMPLE", "go.acme.example.", "go.acme.example:8080", "Go.Acme.Example.:443"]) {
      expectRedirect(await at(`https://${host}/${slug}`), `https://example.com/${GO}`);
    }
    for (const host of [IDN, "XN--BCHER-KVA.example", "bücher.example", "BÜCHER.example."]) {
      expectRedirect(await at(`https://${host}/${slug}`), `https://example.com/${IDN}`);
    }
  });

  test("a Host that is not a verified domain serves nothing, not the base domain's link nor another domain's", async () => {
    for (const host of ["victim.example", PENDING, `${PENDING}:443`, `deeper.${GO}`, "acme.example", "go.acme.example.evil.example"]) {
      expectPage(await at(`https://${host}/${slug}`), 404);
    }
    // A domain serves its own links only: a slug of another domain, or of another account's, is unknown there.
    expectPage(await at(`https://${SHOP}/${only}`), 404);
    expectPage(await at(`https://${THEIRS}/${slug}`), 404);
    expectRedirect(await at(`https://${THEIRS}/theirs`), "https://example.com/theirs");
    expectPage(await at(`https://${GO}/theirs`), 404);
  });

  test("an address literal (a health check, a proxy that drops the Host) is the base domain", async () => {
    for (const host of ["127.0.0.1", "127.0.0.1:9", "[::1]", "[::1]:8080", "10.0.0.7"]) expectRedirect(await at(`http://${host}/${slug}`), "https://example.com/base");
  });

  test("a URL with no host (Bun's req.url for an empty or broken Host) serves nothing, whatever its path names", async () => {
    for (const url of [`/${slug}`, `//${GO}/${slug}`, `/${GO}/${slug}`, `/localhost/${slug}`, `/127.0.0.1/${slug}`]) {
      expectPage(await h.redirector.fetch({ url, method: "GET", headers: new Headers() } as Request, socketFrom("127.0.0.1"), url), 404);
    }
  });

  test("a click's webhook gives the short address on the domain it came in on", async () => {
    expectRedirect(await at(`https://GO.acme.example:443/${only}`), "https://example.com/only");
    const hook = h.webhooks.findLast((w) => w.url === "https://93.184.216.34/hook");
    expect(hook?.payload).toMatchObject({ event: "link.clicked", slug: only, domain: GO, shortUrl: `https://${GO}/${only}` });
  });
});

/** One raw HTTP/1.1 request to the server (`lines`: the request line and headers); the status and Location. */
function raw(lines: string[]): Promise<{ status: number; location: string | null }> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port!, "127.0.0.1", () => socket.write(`${[...lines, "Connection: close"].join("\r\n")}\r\n\r\n`));
    let answer = "";
    socket.on("data", (d) => (answer += d));
    socket.on("error", reject);
    socket.on("close", () => {
      const head = answer.slice(0, answer.indexOf("\r\n\r\n"));
      resolve({ status: Number(head.split(" ")[1]), location: /\r\nlocation: ([^\r]*)/i.exec(head)?.[1] ?? null });
    });
  });
}

describe("over real HTTP", () => {
  const base = { status: 302, location: "https://example.com/base" };
  const go = { status: 302, location: `https://example.com/${GO}` };
  const none = { status: 404, location: null };

  test("Host spellings answer as in process", async () => {
    expect(await raw([`GET /${slug} HTTP/1.1`, "Host: GO.Acme.Example.:8080"])).toEqual(go);
    expect(await raw([`GET /${slug} HTTP/1.1`, `Host: ${IDN}`])).toEqual({ status: 302, location: `https://example.com/${IDN}` });
    expect(await raw([`GET /${slug} HTTP/1.1`, "Host: victim.example"])).toEqual(none);
    expect(await raw([`GET /${slug} HTTP/1.1`, "Host: 127.0.0.1:9"])).toEqual(base);
    expect(await raw([`GET /${slug} HTTP/1.1`, "Host: [::1]"])).toEqual(base);
  });

  test("an empty, Unicode or malformed Host, and a target naming a host, serve nothing; no Host at all is 400", async () => {
    expect(await raw([`GET /${slug} HTTP/1.1`, "Host: "])).toEqual(none);
    expect(await raw([`GET //${GO}/${slug} HTTP/1.1`, "Host: "])).toEqual(none);
    expect(await raw([`GET /${GO}/${slug} HTTP/1.1`, "Host: go acme"])).toEqual(none);
    expect(await raw([`GET /${slug} HTTP/1.1`, "Host: bücher.example"])).toEqual(none); // not ASCII: clients send punycode
    expect(await raw([`GET /${slug} HTTP/1.1`, `Host: ${GO}@victim.example`])).toEqual(none);
    // An absolute request target does not choose the domain: the Host header does.
    expect(await raw([`GET https://${GO}/${slug} HTTP/1.1`, "Host: victim.example"])).toEqual(none);
    expect((await raw([`GET /${slug} HTTP/1.1`])).status).toBe(400);
  });

  test("two Host headers: the first decides, so the second never reaches its domain's links", async () => {
    expect(await raw([`GET /${slug} HTTP/1.1`, "Host: victim.example", `Host: ${GO}`])).toEqual(none);
    expect(await raw([`GET /${slug} HTTP/1.1`, `Host: ${GO}`, `Host: ${SHOP}`])).toEqual(go);
  });
});

describe("the control plane's certificate ask, on the same spellings", () => {
  const ask = async (domain: string) => (await h.cp.request("GET", `/api/internal/tls-ask?domain=${encodeURIComponent(domain)}`)).status;

  test("a verified domain in any case, with a trailing dot, as punycode or Unicode: yes; with a port, pending, unknown or an address: no", async () => {
    for (const d of [GO, "GO.ACME.EXAMPLE.", IDN, "XN--BCHER-KVA.EXAMPLE", "bücher.example", THEIRS]) expect([d, await ask(d)]).toEqual([d, 200]);
    for (const d of [`${GO}:443`, PENDING, "victim.example", `deeper.${GO}`, "127.0.0.1", "[::1]", `${GO}@victim.example`, `victim.example/${GO}`]) {
      expect([d, await ask(d)]).toEqual([d, 404]);
    }
  });
});

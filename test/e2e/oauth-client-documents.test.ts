/**
 * Client ID Metadata Documents fetched for real (issue #23): a local https server stands for the client's site; the
 * fetch pins the checked address while TLS verifies the certificate against the client_id's host name, follows no
 * redirect, reads at most 5 KiB, gives up after its time; the document's rules are checked on their own.
 * (That the product refuses private addresses, before any request, is in test/app/oauth-hostile.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fetchClientDocument, readClientDocument } from "../../control/oauth/client-documents.ts";
import { OAuthError } from "../../control/oauth/errors.ts";

const HOST = "client.test";
let dir: string;
let cert: string;
let site: ReturnType<typeof Bun.serve>;
const clientIdOf = (path: string, host = HOST) => `https://${host}:${site.port}${path}`;
const viaLoopback = { resolveHost: async () => ["127.0.0.1"], allowPrivate: true, timeoutMs: 1_000 };

function documentFor(clientId: string, over: Record<string, unknown> = {}) {
  return { client_id: clientId, client_name: "Doc client", redirect_uris: ["http://127.0.0.1/callback"], token_endpoint_auth_method: "none", ...over };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "clink-cimd-"));
  const made = Bun.spawnSync(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", `/CN=${HOST}`,
    "-addext", `subjectAltName=DNS:${HOST}`, "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")], { stderr: "pipe" });
  expect(made.exitCode).toBe(0);
  cert = readFileSync(join(dir, "cert.pem"), "utf8");
  site = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: { cert, key: readFileSync(join(dir, "key.pem"), "utf8") },
    async fetch(req) {
      const url = new URL(req.url);
      const self = `https://${req.headers.get("host")}${url.pathname}`;
      switch (url.pathname) {
        case "/client.json":
          return Response.json(documentFor(self));
        case "/big.json":
          return Response.json(documentFor(self, { padding: "x".repeat(6_000) }));
        case "/moved.json":
          return new Response(null, { status: 302, headers: { location: "https://client.test/client.json" } });
        case "/slow.json":
          await Bun.sleep(3_000);
          return Response.json(documentFor(self));
        case "/text":
          return new Response("not json");
        default:
          return new Response("no", { status: 404 });
      }
    },
  });
});
afterAll(() => {
  site.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

const refusal = async (work: Promise<unknown>): Promise<string> => {
  const e = await work.then(() => null, (err: unknown) => err);
  expect(e).toBeInstanceOf(OAuthError);
  expect((e as OAuthError).code).toBe("invalid_client");
  return (e as OAuthError).description;
};

describe("fetching a client's metadata document", () => {
  test("fetched from the checked address, with the name's certificate verified, and read as the client's metadata", async () => {
    const clientId = clientIdOf("/client.json");
    const doc = readClientDocument(clientId, await fetchClientDocument(clientId, { ...viaLoopback, tlsCa: cert }));
    expect(doc).toEqual({ clientId, name: "Doc client", redirectUris: ["http://127.0.0.1/callback"], clientUri: null, scopes: null });
  });

  test("an untrusted certificate, a redirect, a document over 5 KiB, no JSON, a 404 or no answer in time: refused", async () => {
    expect(await refusal(fetchClientDocument(clientIdOf("/client.json"), viaLoopback))).toContain("TLS");
    const withCa = { ...viaLoopback, tlsCa: cert };
    expect(await refusal(fetchClientDocument(clientIdOf("/moved.json"), withCa))).toContain("HTTP 302 (redirects are not followed)");
    expect(await refusal(fetchClientDocument(clientIdOf("/big.json"), withCa))).toContain("larger than 5120 bytes");
    expect(await refusal(fetchClientDocument(clientIdOf("/text"), withCa))).toContain("is not JSON");
    expect(await refusal(fetchClientDocument(clientIdOf("/nothing.json"), withCa))).toContain("HTTP 404");
    expect(await refusal(fetchClientDocument(clientIdOf("/slow.json"), withCa))).toContain("did not answer within 1 s");
  });

  test("without the test's permission, the loopback address is refused before any request", async () => {
    expect(await refusal(fetchClientDocument(clientIdOf("/client.json"), { resolveHost: async () => ["127.0.0.1"], tlsCa: cert }))).toContain("not a public address");
  });
});

describe("the document's rules", () => {
  const id = "https://app.example/oauth/client.json";
  const problem = (doc: unknown) => {
    try {
      readClientDocument(id, doc);
    } catch (e) {
      return (e as OAuthError).description;
    }
    return null;
  };

  test("it must name itself, list acceptable redirect URIs and ask for no secret", () => {
    expect(problem(documentFor("https://other.example/client.json"))).toContain("does not name itself");
    expect(problem(documentFor(id, { redirect_uris: [] }))).toContain("no redirect_uris");
    expect(problem(documentFor(id, { redirect_uris: ["javascript:alert(1)"] }))).toContain("javascript:");
    expect(problem(documentFor(id, { redirect_uris: ["http://evil.example/cb"] }))).toContain("must use https");
    expect(problem(documentFor(id, { token_endpoint_auth_method: "client_secret_basic" }))).toContain("only \"none\"");
    expect(problem([documentFor(id)])).toContain("not a JSON object");
  });

  test("a document without a name is known by its host; unknown scopes are dropped; an http client_uri is not shown", () => {
    const doc = readClientDocument(id, documentFor(id, { client_name: undefined, scope: "links:read offline_access", client_uri: "http://app.example" }));
    expect([doc.name, doc.scopes, doc.clientUri]).toEqual(["app.example", ["links:read"], null]);
  });
});

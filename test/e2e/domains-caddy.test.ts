/**
 * Automatic HTTPS for custom domains (issue #24) with real Caddy (Debian's package, installed by the test setup when
 * missing) in front of clink, as docs/domains.md sets it up: on-demand TLS from Caddy's internal CA, asking clink's
 * /api/internal/tls-ask before it issues a certificate. Two loopback names (*.localhost) verified through the API
 * (the DNS check answered by a DNS server on loopback) get certificates on their first visit and redirect their own
 * links over HTTPS; an unverified name gets no certificate at all.
 *
 * Caddy runs the shipped deploy/Caddyfile.embedded, with test-only global options (internal CA, ports, storage).
 * clink runs in this process (the control plane and the redirector on one Bun.serve, as the embedded server wires
 * them), so the check's resolver can be the test's: the names resolve nowhere else on this machine.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRedirector, type Redirector } from "../../redirector/handler.ts";
import { caddyExecutable } from "../setup/caddy.ts";
import { startDnsServer, type TestDnsServer } from "../helpers/dns-server.ts";
import { jsonOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import { freePort, REPO_ROOT } from "../helpers/server.ts";

const STEP_MS = 15_000;

let cp: InProcessControlPlane;
let redirector: Redirector;
let clink: ReturnType<typeof Bun.serve>;
let dns: TestDnsServer;
let caddy: ReturnType<typeof Bun.spawn> | undefined;
let dir: string;
let httpsPort: number;
let key: string;
/** The hosts clink's ask endpoint was asked about, with its answers. */
const asked: string[] = [];

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = STEP_MS): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await Bun.sleep(50);
  }
}

beforeAll(async () => {
  const caddyPath = await caddyExecutable();
  dir = mkdtempSync(join(tmpdir(), "clink-caddy-"));
  cp = await startControlPlane({ env: { BASE_URL: "https://links.localhost", RATE_LIMIT_PER_MINUTE: "100000" } });
  dns = await startDnsServer();
  cp.deps.domainChecks = { resolveTxt: dns.resolveTxt };
  key = (await cp.createKey("caddy@example.com")).key;
  const { config, store, hot } = cp.deps;
  redirector = createRedirector({ config, store, hot, now: cp.clock.now, countryLookup: null, webhooks: { send() {}, drain: async () => {}, pending: () => 0 } });
  clink = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req, srv) {
      const url = req.url;
      if (new URL(url).pathname.startsWith("/api/") && !redirector.domains.isCustomDomain(url)) {
        if (url.includes("/api/internal/tls-ask")) asked.push(new URL(url).searchParams.get("domain") ?? "");
        return cp.handle(req);
      }
      return redirector.fetch(req, srv, url);
    },
  });
  httpsPort = await freePort();
  const httpPort = await freePort();
  const caddyfile = join(dir, "Caddyfile");
  // The shipped deploy/Caddyfile.embedded (docs/domains.md), with test-only global options: Caddy's internal CA
  // instead of Let's Encrypt, free ports, its own storage, no admin endpoint.
  const shipped = readFileSync(join(REPO_ROOT, "deploy/Caddyfile.embedded"), "utf8");
  const testOptions = `{\n\tadmin off\n\tlocal_certs\n\tskip_install_trust\n\thttp_port ${httpPort}\n\thttps_port ${httpsPort}\n\tstorage file_system ${join(dir, "data")}\n`;
  expect(shipped).toContain("\n{\n\t# Custom domains");
  writeFileSync(caddyfile, shipped.replace("\n{\n\t# Custom domains", `\n${testOptions}\t# Custom domains`));
  caddy = Bun.spawn([caddyPath, "run", "--config", caddyfile, "--adapter", "caddyfile"], {
    cwd: dir, env: { ...process.env, SITE_ADDRESS: "https://links.localhost", CLINK_UPSTREAM: `127.0.0.1:${clink.port}`, HOME: dir, XDG_DATA_HOME: join(dir, "xdg-data"), XDG_CONFIG_HOME: join(dir, "xdg-config") },
    // Caddy's log to a file (a pipe nobody reads could fill and stall it); kept in the temp dir until the end.
    stdout: "ignore", stderr: Bun.file(join(dir, "caddy.log")),
  });
  // Caddy makes its root CA at start; it is listening once the port takes connections.
  await until("Caddy's root certificate", () => (existsSync(rootCertPath()) ? true : undefined));
  await until("Caddy listening", async () => {
    try {
      await Bun.connect({ hostname: "127.0.0.1", port: httpsPort, socket: { data() {} } }).then((s) => s.end());
      return true;
    } catch {
      return undefined;
    }
  });
}, 120_000);

afterAll(async () => {
  caddy?.kill();
  await caddy?.exited;
  clink?.stop(true);
  redirector?.domains.close();
  dns?.close();
  await cp?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const rootCertPath = () => join(dir, "data", "pki", "authorities", "local", "root.crt");

/** GET https://<host>/<path> through Caddy, the certificate checked against Caddy's root for `host` (SNI). */
function viaCaddy(host: string, path: string): Promise<Response> {
  return fetch(`https://127.0.0.1:${httpsPort}${path}`, {
    headers: { host },
    redirect: "manual",
    tls: { serverName: host, ca: readFileSync(rootCertPath(), "utf8") },
    signal: AbortSignal.timeout(STEP_MS),
  });
}

async function verified(hostname: string): Promise<void> {
  const added = await jsonOf(await cp.request("POST", "/api/v1/domains", { key, json: { hostname } }));
  dns.txt.set(added.challenge.name, [[added.challenge.value]]);
  expect((await jsonOf(await cp.request("POST", `/api/v1/domains/${added.id}/verify`, { key }))).state).toBe("verified");
  await until(`the redirector serving ${hostname}`, () => (redirector.domains.resolve(hostname) ? true : undefined));
}

test("two verified domains get certificates on their first visit and redirect their links over HTTPS; an unverified one gets none", async () => {
  await verified("a.localhost");
  await verified("b.localhost");
  for (const [domain, to] of [["a.localhost", "https://a.example.com/"], ["b.localhost", "https://b.example.com/"]]) {
    const res = await cp.request("POST", "/api/v1/links", { key, json: { url: to, slug: "launch", domain } });
    expect((await jsonOf(res)).shortUrl).toBe(`https://${domain}/launch`);
  }
  for (const [host, to] of [["a.localhost", "https://a.example.com/"], ["b.localhost", "https://b.example.com/"]]) {
    const res = await viaCaddy(host, "/launch");
    expect([host, res.status, res.headers.get("location")]).toEqual([host, 302, to]);
  }
  expect(asked).toEqual(expect.arrayContaining(["a.localhost", "b.localhost"]));
  // The base domain (SITE_ADDRESS) keeps its own certificate and its own links.
  await cp.request("POST", "/api/v1/links", { key, json: { url: "https://base.example.com/", slug: "launch" } });
  const base = await viaCaddy("links.localhost", "/launch");
  expect([base.status, base.headers.get("location")]).toEqual([302, "https://base.example.com/"]);
  expect(existsSync(join(dir, "data", "certificates", "local", "a.localhost"))).toBe(true);

  // Added but not verified: clink's ask says no, Caddy issues nothing, the handshake fails.
  await cp.request("POST", "/api/v1/domains", { key, json: { hostname: "c.localhost" } });
  const refused = await viaCaddy("c.localhost", "/launch").then(() => "answered", (e: Error) => `failed: ${e.message}`);
  expect(refused).toStartWith("failed");
  expect(asked).toContain("c.localhost");
  expect(existsSync(join(dir, "data", "certificates", "local", "c.localhost"))).toBe(false);
}, 90_000);

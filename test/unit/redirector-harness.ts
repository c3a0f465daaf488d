/**
 * The redirector built in this process for its unit tests: the real control plane of test/helpers/in-process.ts
 * (SQLite in a temp dir, memory HotState, a test clock) creates links through its REST API, and a redirector on
 * the same store, HotState and clock answers `fetch(new Request(...))`, as Bun.serve would hand it requests.
 *
 *   const h = await startRedirector();
 *   const slug = await h.createLink({ url: "https://example.com/", maxHits: 2 });
 *   const res = await h.visit(slug);                        // GET http://clink.test/<slug>
 *   expect(await h.clicks()).toHaveLength(1);
 *   await h.close();
 */
import type { Server } from "bun";
import { expect } from "bun:test";
import { linkKey, type CompiledLink } from "../../shared/link.ts";
import type { ClickEvent, HotState } from "../../shared/ports.ts";
import type { WebhookJob, WebhookSender } from "../../shared/webhooks/sender.ts";
import { createRedirector, type Redirector, type RedirectorDeps } from "../../redirector/handler.ts";
import { BASE_URL, jsonOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

export { BASE_URL };

export const UA = {
  desktop: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
  iphone: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
  facebook: "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
};

/** What Bun.serve would pass as `server`: only the socket address is read from it. */
export function socketFrom(address: string): Server<unknown> {
  return { requestIP: () => ({ address, family: address.includes(":") ? "IPv6" : "IPv4", port: 40_000 }) } as unknown as Server<unknown>;
}

export interface VisitOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: BodyInit;
  /** The visitor's socket address (default 127.0.0.1). */
  ip?: string;
}

export interface RedirectorHarness {
  cp: InProcessControlPlane;
  redirector: Redirector;
  /** Webhook deliveries the redirector queued, in order (the sender itself is tested on its own). */
  webhooks: WebhookJob[];
  /** The API key of the links' owner. */
  key: string;
  /** The redirector's answer to `path` as it returns it: a Response, or a Promise when it had to wait. */
  fetch(path: string, o?: VisitOptions): Response | Promise<Response>;
  visit(path: string, o?: VisitOptions): Promise<Response>;
  /** Creates a link through the REST API (fields as in §3.2, a fresh slug unless given); returns its slug. */
  createLink(fields: Record<string, unknown>): Promise<string>;
  /** Puts a compiled link where the redirector looks first (HotState), for fields the API cannot set yet. */
  putCompiled(link: CompiledLink): Promise<void>;
  /** Every click the redirector has queued so far (buffer flushed first). */
  clicks(): Promise<ClickEvent[]>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  /** Wraps the store or HotState the redirector gets (not the control plane's), e.g. to count or fail calls. */
  store?: (real: RedirectorDeps["store"]) => RedirectorDeps["store"];
  hot?: (real: HotState) => HotState;
}

let slugSeq = 0;

export async function startRedirector(opts: HarnessOptions = {}): Promise<RedirectorHarness> {
  const cp = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000", ...opts.env } });
  const { config, store, hot } = cp.deps;
  const { key } = await cp.createKey("owner@example.com");
  const webhooks: WebhookJob[] = [];
  const sender: WebhookSender = { send: (job) => void webhooks.push(job), drain: async () => {}, pending: () => 0 };
  const redirector = createRedirector({
    config,
    hot: opts.hot ? opts.hot(hot) : hot,
    store: opts.store ? opts.store(store) : store,
    now: cp.clock.now,
    countryLookup: null,
    webhooks: sender,
  });
  const queued: ClickEvent[] = [];

  function fetch(path: string, o: VisitOptions = {}): Response | Promise<Response> {
    const headers = { "user-agent": UA.desktop, ...o.headers };
    const req = new Request(`${BASE_URL}${path.startsWith("/") ? path : `/${path}`}`, { method: o.method ?? "GET", headers, body: o.body, redirect: "manual" });
    return redirector.fetch(req, socketFrom(o.ip ?? "127.0.0.1"));
  }

  return {
    cp,
    redirector,
    webhooks,
    key,
    fetch,
    visit: async (path, o) => fetch(path, o),
    async createLink(fields) {
      const res = await cp.request("POST", "/api/v1/links", { key, json: { slug: `rdr-${++slugSeq}`, ...fields } });
      const body = await jsonOf(res);
      expect(res.status, JSON.stringify(body)).toBe(201);
      return body.slug;
    },
    async putCompiled(link) {
      await hot.setLink(linkKey(config.defaultDomain, link.slug), link);
    },
    async clicks() {
      await redirector.flush();
      const read = await hot.readClicks("redirector-test", 100_000);
      await hot.ackBatches([...new Set(read.map((c) => c.batch))]);
      queued.push(...read.map((c) => c.event));
      return queued;
    },
    close: () => cp.close(),
  };
}

/** The compiled form of a link created through the API (as the redirector reads it), to derive variants from. */
export async function compiledOf(h: RedirectorHarness, slug: string): Promise<CompiledLink> {
  const link = await h.cp.deps.hot.getLink(linkKey(h.cp.deps.config.defaultDomain, slug));
  if (!link) throw new Error(`no compiled link for ${slug}`);
  return link;
}

/** A 302 to `location` that no cache may keep (design §4 step 7). */
export function expectRedirect(res: Response, location: string): void {
  expect([res.status, res.headers.get("location"), res.headers.get("cache-control")]).toEqual([302, location, "private, max-age=0"]);
}

/** An HTML page with `status`, no Location, and the pages' CSP. */
export function expectPage(res: Response, status: number): void {
  expect([res.status, res.headers.get("location")]).toEqual([status, null]);
  expect(res.headers.get("content-type")).toContain("text/html");
  expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
}

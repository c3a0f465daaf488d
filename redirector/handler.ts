/**
 * The short address (design §4): request → facts → decide() → Response. Plain Bun, no framework.
 * A cached link is answered without awaiting anything; storage is touched only on a cache miss,
 * for the atomic maxHits step and for password attempts.
 */
import type { Server } from "bun";
import type { Config } from "../shared/config.ts";
import { decide, type Outcome, type RequestFacts } from "../shared/decide.ts";
import { createClientIpResolver } from "../shared/facts/client-ip.ts";
import { classifyUserAgent } from "../shared/facts/device.ts";
import { countryFromHeader, type CountryLookup } from "../shared/facts/geo.ts";
import { linkKey, type CompiledLink } from "../shared/link.ts";
import { addressBucket } from "../shared/net/ip.ts";
import type { ClickEvent, ClickQueue, HotState, LinkStore } from "../shared/ports.ts";
import type { WebhookSender } from "../shared/webhooks/sender.ts";
import { ClickBuffer, type ClickBufferOptions } from "./click-buffer.ts";
import { LinkCache } from "./link-cache.ts";
import * as pages from "./pages.ts";
import { postedPassword } from "./password-form.ts";
import { LazyRequestFacts, type FactsContext } from "./request-facts.ts";
import { slugOf } from "./slug.ts";
import { isUnlocked, unlockCookie } from "./unlock.ts";

export interface RedirectorDeps {
  config: Config;
  hot: HotState;
  store: LinkStore;
  now: () => number;
  countryLookup: CountryLookup | null;
  webhooks: WebhookSender;
  /** Where click batches go (default: HotState's queue). The embedded default passes its writer thread. */
  clickQueue?: ClickQueue;
  clickBuffer?: ClickBufferOptions;
}

const PASSWORD_ATTEMPTS = 5;
const PASSWORD_WINDOW_MS = 60_000;
const MAX_CACHED_DESTINATIONS = 64;
const REDIRECT_HEADERS = { "cache-control": "private, max-age=0", "referrer-policy": "unsafe-url" };

type RedirectOutcome = Extract<Outcome, { kind: "redirect" }>;

/** Whether serving this outcome leaves the hit counter alone (so the count has to be looked up, not taken). */
function takesNoHit(o: Outcome): boolean {
  return o.kind === "password" || o.kind === "preview" || (o.kind === "redirect" && !o.count);
}

/**
 * A HotState that can take a maxHits step synchronously (the in-memory one, once the link's counter is seeded:
 * undefined until then). Using it keeps a maxHits redirect off the Promise path in embedded mode.
 */
interface SyncHitCounter {
  takeHitSync(linkId: string, max: number): number | undefined;
}

function hasSyncHits(hot: HotState): hot is HotState & SyncHitCounter {
  return typeof (hot as Partial<SyncHitCounter>).takeHitSync === "function";
}

export interface Redirector {
  /** `url`: req.url when the caller has read it already (each read of req.url makes a new string). */
  fetch(req: Request, server: Server<unknown>, url?: string): Response | Promise<Response>;
  /** Hands buffered clicks to the click queue (shutdown, tests). */
  flush(): Promise<void>;
  readonly clicks: ClickBuffer;
  readonly cache: LinkCache;
}

export function createRedirector(deps: RedirectorDeps): Redirector {
  const { config, hot, store } = deps;
  const cache = new LinkCache(hot, store, config.defaultDomain);
  const clicks = new ClickBuffer(deps.clickQueue ?? hot, deps.clickBuffer);
  const clientIp = createClientIpResolver(config.trustedProxies);
  const secureCookies = config.baseUrl.startsWith("https:");
  const idPrefix = `${process.pid.toString(36)}${Date.now().toString(36)}-`;
  let seq = 0;
  const syncHits = hasSyncHits(hot) ? hot : null;
  /** Last counter value seen per maxHits link, so a HEAD or form view can answer 410 without a round trip. */
  const knownHits = new Map<string, number>();

  // Without trusted proxies X-Forwarded-For is never believed, so it is not even read.
  const readsForwardedFor = config.trustedProxies.length > 0;
  function ipOf(req: Request, server: Server<unknown>): string | null {
    return clientIp(server.requestIP(req)?.address ?? null, readsForwardedFor ? req.headers.get("x-forwarded-for") : null);
  }

  /**
   * A click's address only feeds the country lookup (it is never stored), which takes any form Bun reports,
   * IPv4-mapped included, so without trusted proxies the socket address goes as it is, not parsed per click.
   */
  const clickAddress = readsForwardedFor ? ipOf : (req: Request, server: Server<unknown>) => server.requestIP(req)?.address ?? null;

  const factsContext: FactsContext = { countryHeader: config.countryHeader, countryLookup: deps.countryLookup, ipOf };
  const makeFacts = (req: Request, server: Server<unknown>, method: RequestFacts["method"], unlocked: boolean) =>
    new LazyRequestFacts(factsContext, req, server, method, unlocked);

  function recordClick(req: Request, server: Server<unknown>, link: CompiledLink, destination: string, variant: number | null, facts: LazyRequestFacts, now: number) {
    const ua = req.headers.get("user-agent") ?? "";
    const event: ClickEvent = {
      id: idPrefix + (seq++).toString(36),
      linkId: link.id,
      ts: now,
      ua: ua.length > 512 ? ua.slice(0, 512) : ua,
      ip: null,
      country: null,
      referrer: req.headers.get("referer"),
      variant,
    };
    // A country the rules already resolved is reused. When that resolution found none, the database lookup has
    // been made and failed, so the address (server.requestIP is one of the costliest calls here) is not needed.
    const known = facts.knownCountry();
    if (known !== undefined) event.country = known;
    else {
      event.country = config.countryHeader ? countryFromHeader(req.headers.get(config.countryHeader)) : null;
      if (event.country === null && deps.countryLookup) event.ip = clickAddress(req, server);
    }
    clicks.push(event);
    if (link.webhookUrl && link.webhookSecret) {
      const info = classifyUserAgent(ua);
      const country = event.country ?? (event.ip && deps.countryLookup ? deps.countryLookup(event.ip) : null);
      deps.webhooks.send({
        id: `msg_${event.id}`,
        url: link.webhookUrl,
        secret: link.webhookSecret,
        payload: {
          event: "link.clicked", slug: link.slug, target: link.rawTarget, destination, timestamp: new Date(now).toISOString(),
          country, device: info.device, browser: info.browser, referrer: event.referrer,
        },
      });
    }
  }

  async function takeHit(link: CompiledLink): Promise<boolean> {
    const n = await hot.takeHit(link.id, link.maxHits!, async () => (await store.getLinkById(link.id))?.hits ?? 0);
    knownHits.set(link.id, n < 0 ? link.maxHits! : n);
    return n >= 0;
  }

  /**
   * The link's hit count for a request that takes no hit (HEAD, crawler preview, password form), which therefore
   * cannot learn it from takeHit: the shared counter, else the last count seen here, else the stored hits.
   */
  async function currentHits(link: CompiledLink): Promise<number> {
    const counted = await hot.peekHits(link.id);
    if (counted !== null) {
      knownHits.set(link.id, counted);
      return counted;
    }
    const known = knownHits.get(link.id);
    if (known !== undefined) return known;
    const stored = (await store.getLinkById(link.id))?.hits ?? 0;
    knownHits.set(link.id, stored);
    return stored;
  }

  /**
   * The 302 for one of a link's destinations, built once per destination and cloned per request: a clone of a
   * finished Response costs less than a new one whose headers must be parsed from an object. Kept beside the
   * compiled link (WeakMap), so a changed link, which is a new object, starts afresh and nothing outlives it.
   */
  const redirects = new WeakMap<CompiledLink, Map<string, Response>>();
  function redirectResponse(link: CompiledLink, url: string): Response {
    let byUrl = redirects.get(link);
    if (byUrl === undefined) redirects.set(link, (byUrl = new Map()));
    let res = byUrl.get(url);
    if (res === undefined) {
      res = new Response(null, { status: 302, headers: { location: url, ...REDIRECT_HEADERS } });
      // Destinations are the target, the rules' and the A/B URLs (UTM included): few, but bounded anyway.
      if (byUrl.size < MAX_CACHED_DESTINATIONS) byUrl.set(url, res);
    }
    return res.clone();
  }

  /** Decides the request and answers it; the only async steps are maxHits and password checks. */
  function respond(req: Request, server: Server<unknown>, link: CompiledLink | null, method: RequestFacts["method"], unlocked: boolean, now: number): Response | Promise<Response> {
    const facts = makeFacts(req, server, method, unlocked);
    const outcome = decide(link, facts, now, link?.maxHits != null ? (knownHits.get(link.id) ?? 0) : 0);
    // Outcomes that take no hit must still answer 410 once the limit is reached, also when the clicks were served
    // before a restart or by another redirector, so they ask for the current count (maxHits links only).
    if (link !== null && link.maxHits !== null && takesNoHit(outcome)) {
      return currentHits(link).then(
        (hits) => render(req, server, link, decide(link, facts, now, hits), facts, method, now),
        () => pages.unavailablePage(),
      );
    }
    return render(req, server, link, outcome, facts, method, now);
  }

  /** Turns an outcome into a Response (taking the hit first for a counted click on a maxHits link). */
  function render(req: Request, server: Server<unknown>, link: CompiledLink | null, outcome: Outcome, facts: LazyRequestFacts, method: RequestFacts["method"], now: number): Response | Promise<Response> {
    switch (outcome.kind) {
      case "not_found":
        return pages.notFoundPage();
      case "gone":
        return pages.gonePage(outcome.reason);
      case "too_early":
        return pages.tooEarlyPage(outcome.startsAt);
      case "password":
        return pages.passwordPage(link!.slug);
      case "preview":
        return pages.previewPage(link!, `${config.baseUrl}/${link!.slug}`);
      case "redirect": {
        const l = link!;
        if (!outcome.count || l.maxHits === null) return redirect(req, server, l, outcome, facts, method, now);
        // In-process counters (embedded mode) answer at once; only a counter not yet seeded or a remote one is awaited.
        const n = syncHits?.takeHitSync(l.id, l.maxHits);
        if (n !== undefined) {
          knownHits.set(l.id, n < 0 ? l.maxHits : n);
          return n >= 0 ? redirect(req, server, l, outcome, facts, method, now) : pages.gonePage("limit");
        }
        return takeHit(l).then(
          (ok) => (ok ? redirect(req, server, l, outcome, facts, method, now) : pages.gonePage("limit")),
          () => pages.unavailablePage(),
        );
      }
    }
  }

  /** The 302 of a redirect outcome, the click recorded first when it counts; after a password POST, with the unlock cookie. */
  function redirect(req: Request, server: Server<unknown>, link: CompiledLink, outcome: RedirectOutcome, facts: LazyRequestFacts, method: RequestFacts["method"], now: number): Response {
    if (outcome.count) recordClick(req, server, link, outcome.url, outcome.variant, facts, now);
    if (method !== "POST") return redirectResponse(link, outcome.url);
    const cookie = unlockCookie(link, now, secureCookies);
    return new Response(null, { status: 302, headers: { location: outcome.url, ...REDIRECT_HEADERS, "set-cookie": cookie } });
  }

  async function passwordAttempt(req: Request, server: Server<unknown>, link: CompiledLink, now: number): Promise<Response> {
    // Checked before the password is verified, so a correct guess over the limit is refused too.
    const ip = addressBucket(ipOf(req, server) ?? "unknown");
    const limit = await hot.rateLimit(`pw:${link.id}:${ip}`, PASSWORD_ATTEMPTS, PASSWORD_WINDOW_MS);
    if (!limit.allowed) return pages.tooManyAttemptsPage(limit.resetSeconds);
    const password = await postedPassword(req);
    const ok = password.length > 0 && (await Bun.password.verify(password, link.passwordHash!));
    if (!ok) return pages.passwordPage(link.slug, { wrong: true });
    return respond(req, server, link, "POST", true, now);
  }

  function handleLink(req: Request, server: Server<unknown>, link: CompiledLink | null, now: number): Response | Promise<Response> {
    const method = req.method;
    if (method === "GET" || method === "HEAD") {
      const unlocked = link !== null && link.passwordHash !== null && isUnlocked(link, req.headers.get("cookie"), now);
      return respond(req, server, link, method, unlocked, now);
    }
    if (method === "POST") {
      // Expiry, schedule and limits still come first: decide() as a locked HEAD tells whether the form applies.
      const gate = decide(link, makeFacts(req, server, "HEAD", false), now, link?.maxHits != null ? (knownHits.get(link.id) ?? 0) : 0);
      if (gate.kind === "password") return passwordAttempt(req, server, link!, now);
      if (gate.kind !== "redirect" && gate.kind !== "preview") return respond(req, server, link, "HEAD", false, now);
    }
    return new Response("Method not allowed", { status: 405, headers: { allow: "GET, HEAD" } });
  }

  function fetch(req: Request, server: Server<unknown>, url: string = req.url): Response | Promise<Response> {
    const slug = slugOf(url);
    if (slug === null) return pages.notFoundPage();
    const key = linkKey(config.defaultDomain, slug);
    const now = deps.now();
    const cached = cache.peek(key, now);
    if (cached !== undefined) return handleLink(req, server, cached, now);
    return cache.load(key, slug, now).then(
      (link) => handleLink(req, server, link, now),
      () => pages.unavailablePage(),
    );
  }

  return { fetch, flush: () => clicks.flush(), clicks, cache };
}

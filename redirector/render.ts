/**
 * The render step: an outcome of decide() (after the maxHits step) as the Response the visitor gets. Redirects
 * carry `Cache-Control: private, max-age=0`, so no cache answers for us and every click reaches the redirector.
 */
import type { Outcome } from "../shared/decide.ts";
import { shortUrlOf, type ShortBase } from "../shared/domain.ts";
import type { CompiledLink } from "../shared/link.ts";
import * as pages from "./pages.ts";
import { unlockCookie } from "./unlock.ts";

/** Every outcome but `unlock`, which waits for the posted password first (pipeline.ts). */
export type RenderableOutcome = Exclude<Outcome, { kind: "unlock" }>;

const MAX_CACHED_DESTINATIONS = 64;
const REDIRECT_HEADERS = { "cache-control": "private, max-age=0", "referrer-policy": "unsafe-url" };

/** baseUrl and defaultDomain: the preview card's og:url is the short address (shortUrlOf). */
export interface RenderContext extends ShortBase {
  /** Whether the unlock cookie is marked Secure (an https base address). */
  readonly secureCookies: boolean;
  /** Finished 302s per link and destination (see redirectResponse). */
  readonly redirects: WeakMap<CompiledLink, Map<string, Response>>;
}

export function createRenderContext(baseUrl: string, defaultDomain: string): RenderContext {
  return { baseUrl, defaultDomain, secureCookies: baseUrl.startsWith("https:"), redirects: new WeakMap() };
}

/** The Response for an outcome; `link` is null only with not_found. `domain`: the links.domain it was asked on. */
export function render(r: RenderContext, link: CompiledLink | null, outcome: RenderableOutcome, domain = r.defaultDomain): Response {
  switch (outcome.kind) {
    case "not_found":
      return pages.notFoundPage();
    case "gone":
      return pages.gonePage(outcome.reason);
    case "too_early":
      return pages.tooEarlyPage(outcome.startsAt);
    case "password":
      return pages.passwordPage(link!.slug);
    case "method_not_allowed":
      return pages.methodNotAllowedPage();
    case "preview":
      return pages.previewPage(link!, shortUrlOf(r, domain, link!.slug));
    case "redirect":
    case "gone_redirect":
      return redirectResponse(r, link!, outcome.url);
  }
}

/**
 * The 302 to one of a link's addresses, built once per address and cloned per request: a clone of a finished
 * Response costs less than a new one whose headers must be parsed from an object. Kept beside the compiled link
 * (WeakMap), so a changed link, which is a new object, starts afresh and nothing outlives it.
 */
export function redirectResponse(r: RenderContext, link: CompiledLink, url: string): Response {
  let byUrl = r.redirects.get(link);
  if (byUrl === undefined) r.redirects.set(link, (byUrl = new Map()));
  let res = byUrl.get(url);
  if (res === undefined) {
    res = new Response(null, { status: 302, headers: { location: url, ...REDIRECT_HEADERS } });
    // Destinations are the target, the rules' and the A/B URLs (UTM included) and expiredUrl: few, but bounded anyway.
    if (byUrl.size < MAX_CACHED_DESTINATIONS) byUrl.set(url, res);
  }
  return res.clone();
}

/** The 302 after a right password, with the unlock cookie that spares the visitor the form for a while. */
export function unlockedRedirect(r: RenderContext, link: CompiledLink, url: string, now: number): Response {
  const cookie = unlockCookie(link, now, r.secureCookies);
  return new Response(null, { status: 302, headers: { location: url, ...REDIRECT_HEADERS, "set-cookie": cookie } });
}

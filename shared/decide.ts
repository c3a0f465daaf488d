/**
 * The redirect decision of design §4, as a pure function: the link, the request's facts, the time and
 * the hit count in; an outcome out. The redirector turns the outcome into a Response and does the I/O.
 */
import type { CompiledLink, DeviceMatch } from "./link.ts";

export interface DeviceFacts {
  /** desktop, mobile or tablet */
  type: string;
  /** ios, android or other */
  os: string;
}

/** Facts about the request. Costly ones are functions, called only when the link needs them. */
export interface RequestFacts {
  method: "GET" | "HEAD" | "POST";
  /**
   * The visitor proved the password earlier (a valid unlock cookie). A form POST's password is checked after
   * decide(), on its `unlock` outcome.
   */
  unlocked: boolean;
  isCrawler: () => boolean;
  country: () => string | null;
  device: () => DeviceFacts;
  /** A uniform random draw in [0, 1) for the A/B pick. */
  draw: number;
}

export type GoneReason = "archived" | "expired" | "limit";

export type Outcome =
  | { kind: "not_found" }
  | { kind: "gone"; reason: GoneReason }
  /** Gone, and the link names where its visitors go instead (expiredUrl): a 302 that is not a click. */
  | { kind: "gone_redirect"; reason: GoneReason; url: string }
  | { kind: "too_early"; startsAt: number }
  | { kind: "password" }
  /**
   * A form POST on a password link whose gates passed: the redirector checks the posted password; if it is right
   * the visitor is sent to `url` (a counted click), otherwise shown the form again.
   */
  | { kind: "unlock"; url: string; variant: number | null; rule: number | null }
  /** A POST on a link without a password: only the password form is ever posted. */
  | { kind: "method_not_allowed" }
  | { kind: "preview"; destination: string }
  | {
      kind: "redirect";
      url: string;
      /** Index in the A/B list when a variant was picked, else null. */
      variant: number | null;
      /** Index of the rule that matched, else null. */
      rule: number | null;
      /** Whether this request is a click: counted, limited by maxHits and sent to the webhook. */
      count: boolean;
    };

// Outcomes without a per-request value are shared, so a 404 or a form view allocates none.
const NOT_FOUND: Outcome = Object.freeze({ kind: "not_found" });
const PASSWORD: Outcome = Object.freeze({ kind: "password" });
const METHOD_NOT_ALLOWED: Outcome = Object.freeze({ kind: "method_not_allowed" });
const GONE: Record<GoneReason, GoneOutcome> = {
  archived: Object.freeze({ kind: "gone", reason: "archived" }),
  expired: Object.freeze({ kind: "gone", reason: "expired" }),
  limit: Object.freeze({ kind: "gone", reason: "limit" }),
};

export type GoneOutcome = Extract<Outcome, { kind: "gone" | "gone_redirect" }>;

/**
 * What a gone link answers: its 410, or a redirect to its expiredUrl when it has one. `expiredUrl` is undefined in
 * a link compiled (and cached) by a version that did not know it: the same as null.
 */
export function goneOutcome(link: CompiledLink, reason: GoneReason): GoneOutcome {
  return link.expiredUrl ? { kind: "gone_redirect", reason, url: link.expiredUrl } : GONE[reason];
}

function matchesDevice(match: string, d: DeviceFacts): boolean {
  switch (match as DeviceMatch) {
    case "ios":
    case "android":
      return d.os === match;
    default:
      return d.type === match;
  }
}

/** Where a request goes and why: the matched rule's index, or the A/B variant's, or neither (the target). */
export interface Destination {
  url: string;
  variant: number | null;
  rule: number | null;
}

/** Destination for the request: first matching rule, else weighted A/B pick, else the target. */
export function pickDestination(link: CompiledLink, facts: RequestFacts): Destination {
  const rules = link.rules;
  if (rules.length > 0) {
    let country: string | null | undefined;
    let device: DeviceFacts | undefined;
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i]!;
      if (rule.kind === "country") {
        if (country === undefined) country = facts.country();
        if (country !== null && country === rule.match) return { url: rule.url, variant: null, rule: i };
      } else {
        device ??= facts.device();
        if (matchesDevice(rule.match, device)) return { url: rule.url, variant: null, rule: i };
      }
    }
  }
  if (link.ab.length > 0) {
    for (let i = 0; i < link.ab.length; i++) {
      if (facts.draw < link.ab[i].upTo) return { url: link.ab[i].url, variant: i, rule: null };
    }
    return { url: link.ab[link.ab.length - 1].url, variant: link.ab.length - 1, rule: null };
  }
  return { url: link.target, variant: null, rule: null };
}

/**
 * @param hits clicks already served (the best known count; the atomic take after a counted redirect
 *   is what makes maxHits exact).
 */
export function decide(link: CompiledLink | null, facts: RequestFacts, now: number, hits: number): Outcome {
  if (link === null || link.status === "paused") return NOT_FOUND;
  if (link.status === "archived") return goneOutcome(link, "archived");
  if (link.expiresAt !== null && now >= link.expiresAt) return goneOutcome(link, "expired");
  if (link.startsAt !== null && now < link.startsAt) return { kind: "too_early", startsAt: link.startsAt };
  if (link.maxHits !== null && hits >= link.maxHits) return goneOutcome(link, "limit");
  if (link.passwordHash !== null) {
    // The destination is picked now so that a right password needs no second decision.
    if (facts.method === "POST") {
      const { url, variant, rule } = pickDestination(link, facts);
      return { kind: "unlock", url, variant, rule };
    }
    // A locked link shows its form to everyone, crawlers included, so no destination leaks.
    if (!facts.unlocked) return PASSWORD;
  } else if (facts.method === "POST") return METHOD_NOT_ALLOWED;
  if (link.og !== null && facts.isCrawler()) {
    return { kind: "preview", destination: link.target };
  }
  const { url, variant, rule } = pickDestination(link, facts);
  return { kind: "redirect", url, variant, rule, count: facts.method !== "HEAD" };
}

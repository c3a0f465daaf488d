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
  /** The visitor proved the password (correct form POST or a valid unlock cookie). */
  unlocked: boolean;
  isCrawler: () => boolean;
  country: () => string | null;
  device: () => DeviceFacts;
  /** A uniform random draw in [0, 1) for the A/B pick. */
  draw: number;
}

export type Outcome =
  | { kind: "not_found" }
  | { kind: "gone"; reason: "archived" | "expired" | "limit" }
  | { kind: "too_early"; startsAt: number }
  | { kind: "password" }
  | { kind: "preview"; destination: string }
  | {
      kind: "redirect";
      url: string;
      /** Index in the A/B list when a variant was picked, else null. */
      variant: number | null;
      /** Whether this request is a click: counted, limited by maxHits and sent to the webhook. */
      count: boolean;
    };

function matchesDevice(match: string, d: DeviceFacts): boolean {
  switch (match as DeviceMatch) {
    case "ios":
    case "android":
      return d.os === match;
    default:
      return d.type === match;
  }
}

/** Destination for the request: first matching rule, else weighted A/B pick, else the target. */
export function pickDestination(link: CompiledLink, facts: RequestFacts): { url: string; variant: number | null } {
  if (link.rules.length > 0) {
    let country: string | null | undefined;
    let device: DeviceFacts | undefined;
    for (const rule of link.rules) {
      if (rule.kind === "country") {
        if (country === undefined) country = facts.country();
        if (country !== null && country === rule.match) return { url: rule.url, variant: null };
      } else {
        device ??= facts.device();
        if (matchesDevice(rule.match, device)) return { url: rule.url, variant: null };
      }
    }
  }
  if (link.ab.length > 0) {
    for (let i = 0; i < link.ab.length; i++) {
      if (facts.draw < link.ab[i].upTo) return { url: link.ab[i].url, variant: i };
    }
    return { url: link.ab[link.ab.length - 1].url, variant: link.ab.length - 1 };
  }
  return { url: link.target, variant: null };
}

/**
 * @param hits clicks already served (the best known count; the atomic take after a counted redirect
 *   is what makes maxHits exact).
 */
export function decide(link: CompiledLink | null, facts: RequestFacts, now: number, hits: number): Outcome {
  if (link === null || link.status === "paused") return { kind: "not_found" };
  if (link.status === "archived") return { kind: "gone", reason: "archived" };
  if (link.expiresAt !== null && now >= link.expiresAt) return { kind: "gone", reason: "expired" };
  if (link.startsAt !== null && now < link.startsAt) return { kind: "too_early", startsAt: link.startsAt };
  if (link.maxHits !== null && hits >= link.maxHits) return { kind: "gone", reason: "limit" };
  // A locked link shows its form to everyone, crawlers included, so no destination leaks.
  if (link.passwordHash !== null && !facts.unlocked) return { kind: "password" };
  if (link.og !== null && facts.method !== "POST" && facts.isCrawler()) {
    return { kind: "preview", destination: link.target };
  }
  const { url, variant } = pickDestination(link, facts);
  return { kind: "redirect", url, variant, count: facts.method !== "HEAD" };
}

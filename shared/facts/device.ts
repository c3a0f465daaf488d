/**
 * Device, OS and browser of a visitor (design §4: ua-parser-js 1.x) and crawler detection (isbot).
 * Parsing costs a few microseconds, and the same few hundred User-Agent strings make most traffic, so both results
 * are kept in small bounded caches.
 */
import UAParser from "ua-parser-js";
import { isbot } from "isbot";
import type { DeviceMatch } from "../link.ts";

export type DeviceKind = "desktop" | "mobile" | "tablet" | "other";

export interface DeviceInfo {
  device: DeviceKind;
  /** ua-parser's OS name ("iOS", "Android", "Windows", "Mac OS", "Linux"…) or "Other". */
  os: string;
  /** Browser family ("Chrome", "Safari", "Firefox", "Edge"…), "Mobile " prefix folded away, or "Other". */
  browser: string;
}

/** ua-parser-js 1.x reads only the first 500 characters, so that prefix is a complete cache key. */
const UA_SIGNIFICANT_LENGTH = 500;
const CACHE_SIZE = 1000;

/**
 * A bounded cache in two generations: new entries go to `young`; when it is full it becomes `old` and a fresh
 * `young` starts, so what was not used for a whole generation is dropped. A hit costs one or two Map lookups and
 * no reordering (a strict LRU moves the entry on every hit, which showed on the redirect path).
 */
class Lru<V> {
  private young = new Map<string, V>();
  private old = new Map<string, V>();
  constructor(private readonly max: number) {}

  get(key: string): V | undefined {
    const v = this.young.get(key);
    if (v !== undefined) return v;
    const o = this.old.get(key);
    if (o !== undefined) this.set(key, o); // still in use: carried into the young generation
    return o;
  }

  set(key: string, v: V): void {
    if (this.young.size >= this.max) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, v);
  }
}

const deviceCache = new Lru<DeviceInfo>(CACHE_SIZE);
const crawlerCache = new Lru<boolean>(CACHE_SIZE);
const parser = new UAParser();

function toDeviceKind(type: string | undefined, hasClient: boolean): DeviceKind {
  if (type === "mobile" || type === "tablet") return type;
  // ua-parser leaves the type unset for desktops; a UA with neither browser nor OS (curl, bots) is not one.
  if (type === undefined) return hasClient ? "desktop" : "other";
  return "other"; // console, smarttv, wearable, embedded, xr
}

function browserFamily(name: string | undefined): string {
  if (!name) return "Other";
  return name.startsWith("Mobile ") ? name.slice(7) : name;
}

/** Device kind, OS and browser for a User-Agent (cached; the returned object is shared: do not mutate it). */
export function classifyUserAgent(ua: string): DeviceInfo {
  const key = ua.length > UA_SIGNIFICANT_LENGTH ? ua.slice(0, UA_SIGNIFICANT_LENGTH) : ua;
  const hit = deviceCache.get(key);
  if (hit) return hit;
  parser.setUA(key);
  const os = parser.getOS().name;
  const browser = parser.getBrowser().name;
  const info: DeviceInfo = Object.freeze({
    device: toDeviceKind(parser.getDevice().type, Boolean(os || browser)),
    os: os || "Other",
    browser: browserFamily(browser),
  });
  deviceCache.set(key, info);
  return info;
}

/**
 * Whether a device rule's `match` (a DeviceMatch, design §3.2) applies to this visitor. Takes the compiled rule's
 * plain string; anything that is not a DeviceMatch matches nothing.
 */
export function matchesDevice(info: DeviceInfo, match: DeviceMatch | (string & {})): boolean {
  switch (match) {
    case "desktop":
    case "mobile":
    case "tablet":
      return info.device === match;
    case "ios":
      return info.os === "iOS";
    case "android":
      return info.os === "Android";
    default:
      return false;
  }
}

/** Whether the User-Agent is a crawler, link-preview fetcher or script (isbot), cached like classifyUserAgent. */
export function isCrawler(ua: string): boolean {
  // isbot reads the whole string, so over-long ones are answered but not cached (they would bloat the cache).
  if (ua.length > UA_SIGNIFICANT_LENGTH) return isbot(ua);
  const hit = crawlerCache.get(ua);
  if (hit !== undefined) return hit;
  const bot = isbot(ua);
  crawlerCache.set(ua, bot);
  return bot;
}

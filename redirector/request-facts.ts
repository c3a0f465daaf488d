/**
 * The first step of a short-address request: the facts decide() asks about it (shared/decide.ts RequestFacts),
 * each worked out only when a link needs it and at most once: the User-Agent is parsed for device rules, the
 * country read from the trusted header or looked up for country rules, the A/B draw made for links with A/B
 * destinations. One object per request, its methods on the prototype: a redirect that needs none of these costs
 * one small allocation. The same object carries the request to the later steps (password attempt, click event).
 */
import type { Server } from "bun";
import { QR_MARKER } from "../shared/clicks/dimensions.ts";
import type { Config } from "../shared/config.ts";
import type { DeviceFacts, RequestFacts } from "../shared/decide.ts";
import { createClientIpResolver } from "../shared/facts/client-ip.ts";
import { classifyUserAgent, isCrawler, type DeviceInfo } from "../shared/facts/device.ts";
import { countryFromHeader, type CountryLookup } from "../shared/facts/geo.ts";
import type { CompiledLink } from "../shared/link.ts";
import { isUnlocked } from "./unlock.ts";

/** What the facts need from the redirector's configuration. */
export interface FactsContext {
  countryHeader: string | undefined;
  countryLookup: CountryLookup | null;
  /** The visitor's address from the socket's (`socket`): X-Forwarded-For from a trusted proxy, else the socket's. */
  ipOf(req: Request, socket: string | null): string | null;
  /** The address a click carries for its place lookup and visitor hash (never stored); see createFactsContext. */
  clickAddress(req: Request, socket: string | null): string | null;
}

export function createFactsContext(config: Pick<Config, "trustedProxies" | "countryHeader">, countryLookup: CountryLookup | null): FactsContext {
  const clientIp = createClientIpResolver(config.trustedProxies);
  // Without trusted proxies X-Forwarded-For is never believed, so it is not even read.
  const readsForwardedFor = config.trustedProxies.length > 0;
  const ipOf = (req: Request, socket: string | null) => clientIp(socket, readsForwardedFor ? req.headers.get("x-forwarded-for") : null);
  // The country lookup takes any form Bun reports, IPv4-mapped included, so without trusted proxies the socket
  // address goes as it is, not parsed per click.
  const asIs = (_req: Request, socket: string | null) => socket;
  return { countryHeader: config.countryHeader, countryLookup, ipOf, clickAddress: readsForwardedFor ? ipOf : asIs };
}

/**
 * The facts of a request for `link`, or null for a method the short address does not answer (405). GET and HEAD
 * are unlocked by a valid unlock cookie; a POST is the password form, whose password decide()'s caller checks.
 */
export function requestFacts(ctx: FactsContext, req: Request, server: Server<unknown>, url: string, link: CompiledLink | null, now: number): LazyRequestFacts | null {
  const method = req.method;
  if (method === "GET" || method === "HEAD") {
    const unlocked = link !== null && link.passwordHash !== null && isUnlocked(link, req.headers.get("cookie"), now);
    return new LazyRequestFacts(ctx, req, server, url, method, unlocked);
  }
  return method === "POST" ? new LazyRequestFacts(ctx, req, server, url, "POST", false) : null;
}

const QR_PARAM = `${QR_MARKER}=1`;

/**
 * Whether the request URL's query carries the QR marker (`?qr=1` or `&qr=1`: the address of a QR code clink made),
 * read from the string (no URL object: this runs for every counted click). The marker needs no stripping: a short
 * address never passes its query on, so the Location is the link's destination whatever the request carried.
 */
export function hasQrMarker(url: string): boolean {
  const query = url.indexOf("?");
  if (query < 0) return false;
  for (let at = url.indexOf(QR_PARAM, query); at >= 0; at = url.indexOf(QR_PARAM, at + 1)) {
    const before = url.charCodeAt(at - 1);
    const end = at + QR_PARAM.length;
    const after = end === url.length ? 38 /* & */ : url.charCodeAt(end);
    if ((before === 63 /* ? */ || before === 38) && (after === 38 || after === 35 /* # */)) return true;
  }
  return false;
}

export function osClass(os: string): string {
  const o = os.toLowerCase();
  return o === "ios" || o === "ipados" ? "ios" : o === "android" ? "android" : "other";
}

/** DeviceFacts per classified User-Agent (classifyUserAgent caches and shares its results), so none is rebuilt per request. */
const deviceFactsOf = new WeakMap<DeviceInfo, DeviceFacts>();

export class LazyRequestFacts implements RequestFacts {
  /** -1 until drawn: only links with A/B destinations ask, and the pick may read it more than once. */
  private drawValue = -1;
  /** undefined until asked; null when neither the header nor the database knows it. */
  private countryValue: string | null | undefined = undefined;
  private deviceValue: DeviceFacts | undefined = undefined;
  /**
   * The socket's address, undefined until asked: server.requestIP is a getpeername(2) call, and a request whose
   * country rule looked its address up records its click with the same address.
   */
  private socketValue: string | null | undefined = undefined;

  constructor(
    readonly ctx: FactsContext,
    readonly req: Request,
    readonly server: Server<unknown>,
    /** req.url, read once by the caller. */
    readonly url: string,
    readonly method: RequestFacts["method"],
    readonly unlocked: boolean,
  ) {}

  get draw(): number {
    if (this.drawValue < 0) this.drawValue = Math.random();
    return this.drawValue;
  }

  isCrawler(): boolean {
    return isCrawler(this.req.headers.get("user-agent") ?? "");
  }

  country(): string | null {
    if (this.countryValue === undefined) {
      const { countryHeader, countryLookup } = this.ctx;
      let country = countryHeader ? countryFromHeader(this.req.headers.get(countryHeader)) : null;
      if (country === null && countryLookup) {
        const ip = this.visitorAddress();
        country = ip ? countryLookup(ip) : null;
      }
      this.countryValue = country;
    }
    return this.countryValue;
  }

  device(): DeviceFacts {
    if (this.deviceValue === undefined) {
      const info = classifyUserAgent(this.req.headers.get("user-agent") ?? "");
      let facts = deviceFactsOf.get(info);
      if (facts === undefined) deviceFactsOf.set(info, (facts = Object.freeze({ type: info.device, os: osClass(info.os) })));
      this.deviceValue = facts;
    }
    return this.deviceValue;
  }

  /** The visitor's address (socket peer, or X-Forwarded-For from a trusted proxy). */
  visitorAddress(): string | null {
    return this.ctx.ipOf(this.req, this.socketAddress());
  }

  /** The address the click carries (see FactsContext.clickAddress). */
  clickAddress(): string | null {
    return this.ctx.clickAddress(this.req, this.socketAddress());
  }

  private socketAddress(): string | null {
    if (this.socketValue === undefined) this.socketValue = this.server.requestIP(this.req)?.address ?? null;
    return this.socketValue;
  }

  /** The country if a rule already asked for it (undefined otherwise), so recording the click can reuse it. */
  knownCountry(): string | null | undefined {
    return this.countryValue;
  }
}

/**
 * The facts decide() asks about one request (shared/decide.ts RequestFacts), each worked out only when a link
 * needs it and at most once: the User-Agent is parsed for device rules, the country read from the trusted header
 * or looked up for country rules, the A/B draw made for links with A/B destinations. One object per request, its
 * methods on the prototype: a redirect that needs none of these costs one small allocation.
 */
import type { Server } from "bun";
import type { DeviceFacts, RequestFacts } from "../shared/decide.ts";
import { classifyUserAgent, isCrawler, type DeviceInfo } from "../shared/facts/device.ts";
import { countryFromHeader, type CountryLookup } from "../shared/facts/geo.ts";

/** What the facts need from the redirector's configuration. */
export interface FactsContext {
  countryHeader: string | undefined;
  countryLookup: CountryLookup | null;
  /** The visitor's address (socket peer, or X-Forwarded-For from a trusted proxy). */
  ipOf(req: Request, server: Server<unknown>): string | null;
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

  constructor(
    private readonly ctx: FactsContext,
    private readonly req: Request,
    private readonly server: Server<unknown>,
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
        const ip = this.ctx.ipOf(this.req, this.server);
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

  /** The country if a rule already asked for it (undefined otherwise), so recording the click can reuse it. */
  knownCountry(): string | null | undefined {
    return this.countryValue;
  }
}

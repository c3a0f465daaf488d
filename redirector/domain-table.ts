/**
 * Which domain a request is for (issue #24, docs/domains.md), from its Host, without touching storage: the verified
 * custom domains are kept in memory, re-read from the store when the control plane publishes a change (HotState bus),
 * when the subscription comes back after an outage, and every `refreshMs` in case a message was lost.
 *
 * A Host that is a verified domain serves that domain's links. BASE_URL's host, OWN_HOSTS, `localhost` and address
 * literals (a health check, a proxy that does not pass the Host on) serve the base domain's. Any other Host, a
 * pending domain's included, serves nothing (404): a Host header names one domain and can never reach another's
 * links, and a name pointed at this server by someone else does not become a mirror of the base domain.
 */
import type { Config } from "../shared/config.ts";
import { requestHostname } from "../shared/domain.ts";
import { parseIp } from "../shared/net/ip.ts";
import { hostOf } from "../shared/webhooks/sender.ts";
import { DOMAINS_CHANGED_CHANNEL, type Bus, type DomainStore, type LinkCache as HotLinkCache } from "../shared/ports.ts";

/** What the pipeline needs of the domain a request is for. */
export interface ServedHost {
  /** The links' domain (links.domain): the base one is BASE_URL's host with its port, as links were always keyed. */
  readonly domain: string;
  readonly rootRedirect: string | null;
  readonly notFoundRedirect: string | null;
}

/** Request spellings of served hosts remembered between two reads of the domains (a Host header is the client's). */
const MAX_SPELLINGS = 1_024;

export interface DomainTableOptions {
  /** How often the verified domains are re-read without being told (default 30 s). */
  refreshMs?: number;
}

export class DomainTable {
  /** By hostname, and by the request spellings resolve() has seen: one Map lookup for a known Host. */
  private byHost = new Map<string, ServedHost>();
  /** Authorities resolve() added to byHost since it was built. */
  private spellings = 0;
  private readonly base: ServedHost;
  private readonly baseNames: Set<string>;
  private readonly timer: ReturnType<typeof setInterval>;
  private reading: Promise<void> | null = null;
  private again = false;
  /** Resolves once the first read has succeeded (custom domains answer 404 until then). */
  readonly ready: Promise<void>;
  private markReady!: () => void;

  constructor(private store: Pick<DomainStore, "listVerifiedDomains">, hot: Bus & Pick<HotLinkCache, "onResubscribed">, config: Config, o: DomainTableOptions = {}) {
    this.base = { domain: config.defaultDomain, rootRedirect: null, notFoundRedirect: null };
    this.baseNames = new Set([config.baseUrl, ...config.ownBaseUrls].map((u) => new URL(u).hostname.toLowerCase()));
    this.baseNames.add("localhost");
    this.ready = new Promise((r) => (this.markReady = r));
    this.byHost = this.tableOf([]);
    hot.subscribe(DOMAINS_CHANGED_CHANNEL, () => void this.refresh());
    hot.onResubscribed(() => void this.refresh());
    this.timer = setInterval(() => void this.refresh(), o.refreshMs ?? 30_000);
    this.timer.unref?.();
    void this.refresh();
  }

  /** The domain a request's authority is for, or null: none (404). */
  resolve(authority: string): ServedHost | null {
    const known = this.byHost.get(authority);
    if (known !== undefined) return known;
    const host = requestHostname(authority);
    const served = this.byHost.get(host) ??
      (this.baseNames.has(host) || parseIp(host.startsWith("[") ? host.slice(1, -1) : host) !== null ? this.base : null);
    // Remembered under the request's own spelling (a port, an address, upper case), so its next request is one
    // Map lookup instead of a parse; a bounded number of spellings, and none for hosts served nothing.
    if (served !== null && this.spellings < MAX_SPELLINGS) {
      this.byHost.set(authority, served);
      this.spellings++;
    }
    return served;
  }

  /** Whether the URL is on a verified custom domain (whose every path is the redirector's: root, slugs, not-found). */
  isCustomDomain(url: string): boolean {
    const host = this.resolve(hostOf(url));
    return host !== null && host !== this.base;
  }

  /** Re-reads the verified domains; calls while a read runs make one more read after it. A failed read keeps the table. */
  refresh(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = (async () => {
      do {
        this.again = false;
        try {
          this.byHost = this.tableOf(await this.store.listVerifiedDomains());
          this.spellings = 0;
          this.markReady();
        } catch {
          /* the store is down: the domains known stay served; the next refresh tries again */
        }
      } while (this.again);
      this.reading = null;
    })();
    return this.reading;
  }

  private tableOf(domains: readonly { hostname: string; rootRedirect: string | null; notFoundRedirect: string | null }[]): Map<string, ServedHost> {
    const t = new Map<string, ServedHost>();
    for (const name of this.baseNames) t.set(name, this.base);
    t.set(this.base.domain, this.base);
    for (const d of domains) t.set(d.hostname, { domain: d.hostname, rootRedirect: d.rootRedirect, notFoundRedirect: d.notFoundRedirect });
    return t;
  }

  close(): void {
    clearInterval(this.timer);
  }
}

/**
 * The redirector: the short address's fetch handler (design §4), wired from its dependencies. The steps
 * themselves are in pipeline.ts and the files it names.
 */
import type { Server } from "bun";
import type { Config } from "../shared/config.ts";
import type { CountryLookup } from "../shared/facts/geo.ts";
import type { ClickIntake, DomainStore, HotState, LinkStore } from "../shared/ports.ts";
import type { WebhookSender } from "../shared/webhooks/sender.ts";
import { ClickBuffer, type ClickBufferOptions } from "./click-buffer.ts";
import { createClickRecorder } from "./click-event.ts";
import { DomainTable } from "./domain-table.ts";
import { createHitPolicy } from "./hit-policy.ts";
import { LinkCache } from "./link-cache.ts";
import { serve, type Pipeline } from "./pipeline.ts";
import { createRenderContext } from "./render.ts";
import { createFactsContext } from "./request-facts.ts";

export interface RedirectorDeps {
  config: Config;
  hot: HotState;
  store: LinkStore & Pick<DomainStore, "listVerifiedDomains">;
  now: () => number;
  countryLookup: CountryLookup | null;
  webhooks: WebhookSender;
  /** Where click batches go (default: HotState's queue). The embedded default passes its writer thread. */
  clickQueue?: ClickIntake;
  clickBuffer?: ClickBufferOptions;
}

export interface Redirector {
  /** `url`: req.url when the caller has read it already (each read of req.url makes a new string). */
  fetch(req: Request, server: Server<unknown>, url?: string): Response | Promise<Response>;
  /** Hands buffered clicks to the click queue (shutdown, tests). */
  flush(): Promise<void>;
  readonly clicks: ClickBuffer;
  readonly cache: LinkCache;
  /** The verified custom domains this redirector serves, by Host (refreshed on change). */
  readonly domains: DomainTable;
}

export function createRedirector(deps: RedirectorDeps): Redirector {
  const { config, hot, store } = deps;
  const cache = new LinkCache(hot, store);
  const domains = new DomainTable(store, hot, config);
  const clicks = new ClickBuffer(deps.clickQueue ?? hot, deps.clickBuffer);
  const pipeline: Pipeline = {
    domains,
    now: deps.now,
    hot,
    cache,
    facts: createFactsContext(config, deps.countryLookup),
    hits: createHitPolicy(hot, store),
    clicks: createClickRecorder(clicks, deps.webhooks, config),
    render: createRenderContext(config.baseUrl, config.defaultDomain),
  };
  return {
    fetch: (req, server, url = req.url) => serve(pipeline, req, server, url),
    flush: () => clicks.flush(),
    clicks,
    cache,
    domains,
  };
}

/**
 * Prometheus metrics (prom-client), one registry per process, served at GET /metrics.
 *
 * The redirect hot path must not pay for them: a redirect only bumps a slot of a Float64Array (its outcome)
 * and one histogram bucket, no label hashing, no allocation. prom-client reads those arrays when scraped:
 * counters through their `collect()` hook, the latency histogram through `FastHistogram`, a prom-client
 * Histogram whose buckets live in an array. (prom-client's own `child.inc()` and `observe()` cost about
 * 120-140 ns each here, against 2-3 ns for an array slot.) Everything else (API, webhooks, clicks written)
 * is counted through prom-client directly: those paths are not hot.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { ClickIntake } from "../ports.ts";
import { WEBHOOK_RESULTS, type WebhookResult } from "../webhooks/sender.ts";
import { withTimeout } from "../time.ts";

export type ProcessRole = "embedded" | "control" | "redirector";

/** Statuses the redirector answers with; anything else is counted as "other". */
export const REDIRECT_OUTCOMES = ["302", "404", "410", "425", "401", "429", "200", "405", "503", "other"] as const;
const OTHER = REDIRECT_OUTCOMES.length - 1;

/** Seconds. A cache hit is answered in tens of microseconds; store round trips take milliseconds. */
export const REDIRECT_LATENCY_BUCKETS = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];

export const API_LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Status code → index into REDIRECT_OUTCOMES, precomputed so counting is one array read. */
const OUTCOME_INDEX = (() => {
  const table = new Uint8Array(600).fill(OTHER);
  REDIRECT_OUTCOMES.forEach((o, i) => {
    if (o !== "other") table[Number(o)] = i;
  });
  return table;
})();

/**
 * A histogram whose observations go into a plain array (one bucket search, three additions) and are turned
 * into prom-client's exposition only when scraped.
 */
class FastHistogram extends Histogram<never> {
  private readonly bounds: Float64Array;
  /** Per bucket (not cumulative); the last slot is +Inf. */
  private readonly counts: Float64Array;
  private sum = 0;
  private count = 0;

  constructor(name: string, help: string, buckets: number[], registry: Registry) {
    super({ name, help, buckets, registers: [registry] });
    this.bounds = Float64Array.from(buckets);
    this.counts = new Float64Array(buckets.length + 1);
  }

  /** Seconds. */
  record(value: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && value > b[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }

  /** registry.resetMetrics() lands here; prom-client's constructor calls it too, before our arrays exist. */
  override reset(): void {
    super.reset();
    this.counts?.fill(0);
    this.sum = 0;
    this.count = 0;
  }

  private snapshot() {
    const name = (this as unknown as { name: string }).name;
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    let cumulative = 0;
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += this.counts[i]!;
      values.push({ labels: { le: this.bounds[i]! }, value: cumulative, metricName: `${name}_bucket` });
    }
    values.push({ labels: { le: "+Inf" }, value: this.count, metricName: `${name}_bucket` });
    values.push({ labels: {}, value: this.sum, metricName: `${name}_sum` });
    values.push({ labels: {}, value: this.count, metricName: `${name}_count` });
    return { name, help: (this as unknown as { help: string }).help, type: "histogram" as const, values, aggregator: "sum" as const };
  }

  // The registry renders through getForPromString (text format) or get (JSON); both read the arrays.
  getForPromString() {
    return Promise.resolve(this.snapshot());
  }

  override get() {
    return Promise.resolve(this.snapshot()) as unknown as ReturnType<Histogram<never>["get"]>;
  }
}

/** Link cache lookups, read when scraped. */
export interface CacheCounts {
  hits: number;
  misses: number;
}

/** The redirector's click buffer, read when scraped. */
export interface ClickBufferView {
  readonly size: number;
  readonly dropped: number;
}

/** What a click writer (the embedded writer thread, the scale-mode consumer) lost, read when scraped. */
export interface ClickLossView {
  /** Clicks dropped because too many waited while storage could not be written. */
  readonly dropped?: number;
  /** Clicks the store refused for good (malformed): logged and skipped. */
  readonly rejected: number;
}


export class Metrics {
  readonly registry = new Registry();

  private readonly redirectCounts = new Float64Array(REDIRECT_OUTCOMES.length);
  private readonly redirectLatency: FastHistogram;
  private readonly apiRequests: Counter<"route" | "method" | "status">;
  private readonly apiLatency: Histogram<"route">;
  private readonly rateLimitRejections: Counter<"scope">;
  private readonly webhookDeliveries: Counter<"result">;
  private readonly written: Counter;
  private readonly clickLag: Gauge;
  private cacheSources: CacheCounts[] = [];
  private bufferSources: ClickBufferView[] = [];
  private lossSources: ClickLossView[] = [];
  private auditWrites: { readonly failed: number } | null = null;
  private queue: ClickIntake | null = null;

  constructor(readonly role: ProcessRole, opts: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    const counts = this.redirectCounts;
    if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });

    new Gauge({
      name: "clink_info",
      help: "Always 1; labels say which role this process runs",
      labelNames: ["role"],
      registers,
    }).set({ role }, 1);

    new Counter({
      name: "clink_redirects_total",
      help: "Short-address requests answered, by HTTP status (302 redirect, 404 unknown, 410 gone, 425 too early, 401 password, 429 too many password attempts, 200 preview card)",
      labelNames: ["outcome"],
      registers,
      collect() {
        this.reset();
        for (let i = 0; i < REDIRECT_OUTCOMES.length; i++) this.inc({ outcome: REDIRECT_OUTCOMES[i]! }, counts[i]!);
      },
    });
    this.redirectLatency = new FastHistogram(
      "clink_redirect_duration_seconds",
      "Time from receiving a short-address request to its response being ready",
      REDIRECT_LATENCY_BUCKETS,
      this.registry,
    );

    this.apiRequests = new Counter({
      name: "clink_api_requests_total",
      help: "Control-plane requests (REST, MCP, dashboard) by route template, method and status",
      labelNames: ["route", "method", "status"],
      registers,
    });
    this.apiLatency = new Histogram({
      name: "clink_api_request_duration_seconds",
      help: "Control-plane request duration by route template",
      labelNames: ["route"],
      buckets: API_LATENCY_BUCKETS,
      registers,
    });
    this.rateLimitRejections = new Counter({
      name: "clink_rate_limit_rejections_total",
      help: "Requests refused with 429: scope api (per-key API budget) or password (password attempts per client and link)",
      labelNames: ["scope"],
      registers,
    });
    for (const scope of ["api", "password"]) this.rateLimitRejections.inc({ scope }, 0);

    this.webhookDeliveries = new Counter({
      name: "clink_webhook_deliveries_total",
      help: "Click webhook deliveries by result (delivered: 2xx; failed: error, timeout or non-2xx; refused: SSRF guard; dropped: oldest of a full queue; backed_off: its link's endpoint backing off or paused)",
      labelNames: ["result"],
      registers,
    });
    for (const result of WEBHOOK_RESULTS) this.webhookDeliveries.inc({ result }, 0);

    this.written = new Counter({
      name: "clink_clicks_written_total",
      help: "Clicks the consumer wrote to storage (raw click plus hourly rollup) and acknowledged",
      registers,
    });
    this.clickLag = new Gauge({
      name: "clink_click_lag_seconds",
      help: "Age of the oldest click in the last batch written to storage: how far stats trail the redirects",
      registers,
    });

    const self = this;
    new Gauge({
      name: "clink_click_queue_depth",
      help: "Clicks queued in hot state and not yet written to storage",
      registers,
      async collect() {
        if (!self.queue) return;
        try {
          // A scrape must not hang on a dead Redis.
          this.set(await withTimeout(self.queue.queueDepth(), 1_000));
        } catch {
          // Hot state unreachable: keep the last value; /readyz says what is down.
        }
      },
    });
    new Gauge({
      name: "clink_click_buffer_size",
      help: "Clicks held in this process, waiting to be handed to the queue",
      registers,
      collect() {
        this.set(self.bufferSources.reduce((n, b) => n + b.size, 0));
      },
    });
    new Counter({
      name: "clink_clicks_dropped_total",
      help: "Clicks dropped because a buffer overflowed: a redirector's while the queue was unreachable, the embedded writer thread's while SQLite could not be written",
      registers,
      collect() {
        this.reset();
        const buffered = self.bufferSources.reduce((n, b) => n + b.dropped, 0);
        this.inc(buffered + self.lossSources.reduce((n, w) => n + (w.dropped ?? 0), 0));
      },
    });
    new Counter({
      name: "clink_audit_write_failures_total",
      help: "Audit-log entries that could not be written (the operation they record went on; each is also logged)",
      registers,
      collect() {
        this.reset();
        this.inc(self.auditWrites?.failed ?? 0);
      },
    });
    new Counter({
      name: "clink_clicks_refused_total",
      help: "Clicks the store refused for good (malformed data): logged and skipped, never retried",
      registers,
      collect() {
        this.reset();
        this.inc(self.lossSources.reduce((n, w) => n + w.rejected, 0));
      },
    });
    new Counter({
      name: "clink_link_cache_lookups_total",
      help: "In-process link cache lookups by result (hit, miss)",
      labelNames: ["result"],
      registers,
      collect() {
        this.reset();
        const { hits, misses } = self.cacheCounts();
        this.inc({ result: "hit" }, hits);
        this.inc({ result: "miss" }, misses);
      },
    });
    new Gauge({
      name: "clink_link_cache_hit_ratio",
      help: "Share of link cache lookups answered from the in-process cache since start (0-1)",
      registers,
      collect() {
        const { hits, misses } = self.cacheCounts();
        this.set(hits + misses === 0 ? 0 : hits / (hits + misses));
      },
    });
  }

  // --- hot path --------------------------------------------------------------------------------------------

  /** One short-address answer: its status and how long it took (seconds). */
  redirect(status: number, seconds: number): void {
    this.redirectCounts[status < 600 ? OUTCOME_INDEX[status]! : OTHER]!++;
    this.redirectLatency.record(seconds);
  }

  // --- everything else -------------------------------------------------------------------------------------

  apiRequest(route: string, method: string, status: number, seconds: number): void {
    this.apiRequests.inc({ route, method, status: String(status) });
    this.apiLatency.observe({ route }, seconds);
  }

  rateLimited(scope: "api" | "password"): void {
    this.rateLimitRejections.inc({ scope });
  }

  /** For createWebhookSender({ onResult }). */
  readonly webhookResult = (result: WebhookResult): void => {
    this.webhookDeliveries.inc({ result });
  };

  /** Clicks committed, after each write of the click drain or the writer thread. */
  readonly clicksWritten = (n: number): void => {
    this.written.inc(n);
  };

  clickLagSeconds(seconds: number): void {
    this.clickLag.set(Math.max(0, seconds));
  }

  /** Reports the click queue's depth when scraped. */
  watchQueue(queue: ClickIntake): void {
    this.queue = queue;
  }

  watchCache(counts: CacheCounts): void {
    this.cacheSources.push(counts);
  }

  watchClickBuffer(buffer: ClickBufferView): void {
    this.bufferSources.push(buffer);
  }

  watchClickWriter(writer: ClickLossView): void {
    this.lossSources.push(writer);
  }

  /** The control plane's count of audit entries not written (control/audit/service.ts). */
  watchAuditWrites(writes: { readonly failed: number }): void {
    this.auditWrites = writes;
  }

  private cacheCounts(): CacheCounts {
    let hits = 0;
    let misses = 0;
    for (const c of this.cacheSources) {
      hits += c.hits;
      misses += c.misses;
    }
    return { hits, misses };
  }

  /** The exposition (Prometheus text format). */
  async render(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}

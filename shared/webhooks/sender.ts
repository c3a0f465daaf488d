/**
 * Click webhooks, sent off the hot path (design §2 step 6, §4): fire-and-forget, a bounded queue, bounded
 * concurrency, a short timeout, no redirects, and the SSRF guard applied to every delivery.
 *
 * No account can hold up another's webhooks: deliveries wait in one queue per account, served in turn, with at
 * most 2 in flight per account and 4 per destination host besides the global 8 (fair-queue.ts). A link whose
 * endpoint fails or hangs is backed off and, when it keeps failing, paused (endpoint-health.ts); `onPause`
 * stores that on the link, so every process stops sending and the owner sees why. These are per process: in
 * scale mode each redirector is fair among the clicks it serves; the pause is stored and seen by all.
 *
 * DNS rebinding: the target is resolved and checked when its delivery starts, and the request then goes to the
 * checked address itself, never to the name (which could resolve differently a moment later):
 * - http: `http://<address>:<port><path>` with the original `Host` header;
 * - https: `https://<address>:<port><path>` with the original `Host` header and TLS `serverName` set to the
 *   original host name, so SNI and certificate verification still use the name (Bun's fetch `tls.serverName`).
 * Residual risk: if HTTP(S)_PROXY is set in the environment, Bun's fetch sends through that proxy, which connects
 * to the address we pinned; the proxy itself is trusted by the operator.
 */
import { randomUUID } from "node:crypto";
import { EndpointHealth, DEFAULT_HEALTH_POLICY, type HealthPolicy } from "./endpoint-health.ts";
import { FairQueue } from "./fair-queue.ts";
import { checkWebhookTarget, type ResolveHost } from "./ssrf.ts";
import { signWebhook } from "./sign.ts";

/** Every outcome a job can have (metrics label values). */
export const WEBHOOK_RESULTS = ["delivered", "failed", "refused", "dropped", "backed_off"] as const;
/**
 * delivered: 2xx; failed: error, timeout or non-2xx; refused: by the SSRF guard; dropped: the oldest waiting
 * delivery of a full queue; backed_off: not sent because its link's endpoint is backing off or paused.
 */
export type WebhookResult = (typeof WEBHOOK_RESULTS)[number];

export interface WebhookJob {
  url: string;
  /** The link's `whsec_…` secret. */
  secret: string;
  /** Serialised as the JSON body when its delivery starts (off the caller's path). */
  payload: object;
  /** `webhook-id`; pass a stable id (e.g. the click id) so receivers can de-duplicate. Default: a fresh one. */
  id?: string;
  /** The link's owner: whose queue the delivery waits in. */
  accountId: string;
  /** The link: failures are counted, backed off and paused per link. */
  linkId: string;
  /** The link's version (its updatedAt): a newer one starts the link's failure count afresh. */
  linkVersion: number;
}

/** A link whose endpoint kept failing: to be stored on the link, so no process sends for it until the owner acts. */
export interface WebhookPause {
  linkId: string;
  /** The webhookUrl that failed: a link whose URL has changed since is not paused. */
  url: string;
  /** In words, for the owner. */
  reason: string;
  /** When (the sender's clock), ms. */
  at: number;
}

export interface WebhookSenderOptions {
  /** WEBHOOK_ALLOW_PRIVATE: let targets resolve to loopback/private addresses (metadata addresses stay refused). */
  allowPrivate: boolean;
  /** Deliveries in flight at once. Default 8. */
  concurrency?: number;
  /** Deliveries in flight at once for one account. Default 2. */
  perAccount?: number;
  /** Deliveries in flight at once to one host (name and port). Default 4. */
  perHost?: number;
  /** Whole-delivery budget (DNS + connect + response headers), ms. Default 5000 (design §4: at most 5 s). */
  timeoutMs?: number;
  /** Deliveries waiting, in all; beyond it the oldest of the fullest account queue is dropped. Default 10000. */
  maxQueue?: number;
  /** Deliveries waiting for one account; beyond it that account's oldest is dropped. Default 1000. */
  maxQueuePerAccount?: number;
  /** Backoff and pause thresholds (endpoint-health.ts). */
  health?: HealthPolicy;
  /** Clock for backoff and pauses; default Date.now. */
  now?: () => number;
  /** Called once per job with its outcome (metrics, tests). */
  onResult?: (result: WebhookResult) => void;
  /** Called once when a link's endpoint is paused; may return a promise (its failure is ignored: deliveries stay paused here). */
  onPause?: (pause: WebhookPause) => unknown;
  /** Host resolver for the SSRF check; default: the system resolver. */
  resolve?: ResolveHost;
  /** PEM CA certificate(s) trusted for https targets instead of the default roots (private PKI, tests). */
  tlsCa?: string;
}

export interface WebhookSender {
  /** Queues a delivery. Never throws, never waits. */
  send(job: WebhookJob): void;
  /** Resolves when nothing is queued or in flight (shutdown, tests). */
  drain(): Promise<void>;
  /** Deliveries queued or in flight. */
  pending(): number;
}

export type Outcome = { result: "delivered" } | { result: "failed" | "refused"; failure: string };

const USER_AGENT = "clink-webhooks/1";

/**
 * `host:port` of an absolute URL, by slicing: the fair queue asks for it for every account it tries in turn, the
 * redirector for every request. "" for a URL that is not absolute: Bun's req.url is the bare request target when the
 * Host header is empty or not a host, and a target such as `//go.example.com/spring` must not name a host.
 */
export function hostOf(url: string): string {
  const from = authorityStart(url);
  if (from < 0) return "";
  const authority = url.slice(from, authorityEnd(url, from));
  return authority.slice(authority.lastIndexOf("@") + 1).toLowerCase();
}

/** Where the authority of an absolute URL starts, or -1 when it is not absolute (see hostOf). */
export function authorityStart(url: string): number {
  return url.startsWith("http") ? url.indexOf("//") + 2 : -1;
}

/** Where the authority starting at `from` ends: at the path, query or fragment, or the URL's end. */
export function authorityEnd(url: string, from: number): number {
  let end = from;
  while (end < url.length) {
    const c = url.charCodeAt(end);
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */) break;
    end++;
  }
  return end;
}

/** Rejects with the signal's reason when it aborts first (DNS lookups cannot be aborted, only abandoned). */
function beforeDeadline<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

/** A failed request in words for the link's owner: an error code at most, never an address or a message. */
function failureOf(e: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (signal.aborted) return `no answer within ${timeoutMs / 1000} s`;
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[A-Za-z0-9_]{1,64}$/.test(code) ? `could not connect (${code})` : "could not connect";
}

export async function deliver(job: WebhookJob, body: string, opts: WebhookSenderOptions, timeoutMs: number): Promise<Outcome> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const check = await beforeDeadline(checkWebhookTarget(job.url, opts.allowPrivate, opts.resolve), signal);
    if (!check.ok) return { result: "refused", failure: `refused: ${check.reason}` };

    const target = new URL(job.url);
    const hostHeader = target.host;
    const name = target.hostname;
    const isName = !name.startsWith("[") && !/^[\d.]+$/.test(name);
    target.hostname = check.address.includes(":") ? `[${check.address}]` : check.address;

    const id = job.id ?? `msg_${randomUUID()}`;
    const timestamp = Math.floor(Date.now() / 1000);
    const init: BunFetchRequestInit = {
      method: "POST",
      redirect: "manual",
      signal,
      body,
      headers: {
        host: hostHeader,
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signWebhook(job.secret, id, timestamp, body),
      },
    };
    if (target.protocol === "https:") {
      init.tls = {};
      if (isName) init.tls.serverName = name;
      if (opts.tlsCa) init.tls.ca = opts.tlsCa;
    }
    const res = await fetch(target, init);
    // The answer's body is of no interest; release the connection.
    await res.body?.cancel().catch(() => {});
    return res.status >= 200 && res.status < 300 ? { result: "delivered" } : { result: "failed", failure: `answered HTTP ${res.status}` };
  } catch (e) {
    return { result: "failed", failure: failureOf(e, signal, timeoutMs) };
  }
}

export function createWebhookSender(opts: WebhookSenderOptions): WebhookSender {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const now = opts.now ?? Date.now;
  const queue = new FairQueue<WebhookJob>(
    {
      concurrency: Math.max(1, opts.concurrency ?? 8),
      perAccount: Math.max(1, opts.perAccount ?? 2),
      perHost: Math.max(1, opts.perHost ?? 4),
      accountQueue: Math.max(1, opts.maxQueuePerAccount ?? 1000),
      totalQueue: Math.max(1, opts.maxQueue ?? 10_000),
    },
    (job) => hostOf(job.url),
  );
  const health = new EndpointHealth(opts.health ?? DEFAULT_HEALTH_POLICY);
  let pumpScheduled = false;
  let idleWaiters: (() => void)[] = [];

  function report(result: WebhookResult): void {
    try {
      opts.onResult?.(result);
    } catch {
      // A metrics callback must not break delivery.
    }
  }

  function pause(job: WebhookJob, reason: string): void {
    try {
      void Promise.resolve(opts.onPause?.({ linkId: job.linkId, url: job.url, reason, at: now() })).catch(() => {});
    } catch {
      // Stays paused in this process; the next process to reach the threshold stores it.
    }
  }

  function settle(): void {
    if (queue.inFlight === 0 && queue.queued === 0 && idleWaiters.length) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  function finished(job: WebhookJob, outcome: Outcome): void {
    queue.finish(job);
    if (outcome.result === "delivered") health.succeeded(job.linkId);
    else {
      const paused = health.failed(job.linkId, job.linkVersion, now(), outcome.failure);
      if (paused !== null) pause(job, paused);
    }
    report(outcome.result);
    pump();
    settle();
  }

  /** Starts a delivery, or drops it: queued before its link backed off, or a payload that does not serialise. */
  function start(job: WebhookJob): void {
    if (!health.allows(job.linkId, job.linkVersion, now())) return drop(job, "backed_off");
    let body: string;
    try {
      body = JSON.stringify(job.payload);
    } catch {
      return drop(job, "failed"); // not the endpoint's failure: its health is left alone
    }
    void deliver(job, body, opts, timeoutMs).then((outcome) => finished(job, outcome));
  }

  function drop(job: WebhookJob, result: WebhookResult): void {
    queue.finish(job);
    report(result);
  }

  function pump(): void {
    pumpScheduled = false;
    for (let job = queue.take(); job !== undefined; job = queue.take()) start(job);
    settle();
  }

  return {
    send(job) {
      if (!health.allows(job.linkId, job.linkVersion, now())) return report("backed_off");
      // The job itself waits: serialising and signing happen when it starts, off the caller's path.
      if (queue.push(job) !== undefined) report("dropped");
      // Start deliveries on a later tick, so send() costs the caller (the redirect) only a push.
      if (!pumpScheduled) {
        pumpScheduled = true;
        setImmediate(pump);
      }
    },
    drain() {
      if (queue.inFlight === 0 && queue.queued === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
    pending() {
      return queue.queued + queue.inFlight;
    },
  };
}

/**
 * Click webhooks, sent off the hot path (design §2 step 6, §4): fire-and-forget, a bounded queue, bounded
 * concurrency, a short timeout, no redirects, and the SSRF guard applied to every delivery.
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
import { checkWebhookTarget, type ResolveHost } from "./ssrf.ts";
import { signWebhook } from "./sign.ts";

export type WebhookResult = "delivered" | "failed" | "refused" | "dropped";

export interface WebhookJob {
  url: string;
  /** The link's `whsec_…` secret. */
  secret: string;
  /** Serialised as the JSON body at send() time. */
  payload: object;
  /** `webhook-id`; pass a stable id (e.g. the click id) so receivers can de-duplicate. Default: a fresh one. */
  id?: string;
}

export interface WebhookSenderOptions {
  /** WEBHOOK_ALLOW_PRIVATE: let targets resolve to loopback/private addresses (metadata addresses stay refused). */
  allowPrivate: boolean;
  /** Deliveries in flight at once. Default 8. */
  concurrency?: number;
  /** Whole-delivery budget (DNS + connect + response headers), ms. Default 5000 (design §4: at most 5 s). */
  timeoutMs?: number;
  /** Deliveries waiting beyond the in-flight ones; more are dropped. Default 10000. */
  maxQueue?: number;
  /** Called once per job with its outcome (metrics, tests). */
  onResult?: (result: WebhookResult) => void;
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

interface Delivery {
  url: string;
  secret: string;
  body: string;
  id: string;
}

const USER_AGENT = "clink-webhooks/1";

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

export function createWebhookSender(opts: WebhookSenderOptions): WebhookSender {
  const concurrency = Math.max(1, opts.concurrency ?? 8);
  const timeoutMs = opts.timeoutMs ?? 5000;
  const maxQueue = opts.maxQueue ?? 10_000;

  let queue: (Delivery | undefined)[] = [];
  let head = 0; // index of the next delivery; avoids O(n) shift()
  let active = 0;
  let pumpScheduled = false;
  let idleWaiters: (() => void)[] = [];

  const queued = () => queue.length - head;

  function report(result: WebhookResult): void {
    try {
      opts.onResult?.(result);
    } catch {
      // A metrics callback must not break delivery.
    }
  }

  async function deliver(d: Delivery): Promise<WebhookResult> {
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const check = await beforeDeadline(checkWebhookTarget(d.url, opts.allowPrivate, opts.resolve), signal);
      if (!check.ok) return "refused";

      const target = new URL(d.url);
      const hostHeader = target.host;
      const name = target.hostname;
      const isName = !name.startsWith("[") && !/^[\d.]+$/.test(name);
      target.hostname = check.address.includes(":") ? `[${check.address}]` : check.address;

      const timestamp = Math.floor(Date.now() / 1000);
      const init: BunFetchRequestInit = {
        method: "POST",
        redirect: "manual",
        signal,
        body: d.body,
        headers: {
          host: hostHeader,
          "content-type": "application/json",
          "user-agent": USER_AGENT,
          "webhook-id": d.id,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": signWebhook(d.secret, d.id, timestamp, d.body),
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
      return res.status >= 200 && res.status < 300 ? "delivered" : "failed";
    } catch {
      return "failed";
    }
  }

  function settle(): void {
    if (active === 0 && queued() === 0 && idleWaiters.length) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  function pump(): void {
    pumpScheduled = false;
    while (active < concurrency && head < queue.length) {
      const d = queue[head]!;
      queue[head++] = undefined;
      if (head === queue.length) {
        queue = [];
        head = 0;
      } else if (head >= 1024 && head * 2 >= queue.length) {
        queue = queue.slice(head);
        head = 0;
      }
      active++;
      void deliver(d).then((result) => {
        active--;
        report(result);
        pump();
        settle();
      });
    }
  }

  return {
    send(job) {
      let d: Delivery;
      try {
        if (queued() >= maxQueue) return report("dropped");
        d = { url: job.url, secret: job.secret, body: JSON.stringify(job.payload), id: job.id ?? `msg_${randomUUID()}` };
      } catch {
        return report("failed"); // an unserialisable payload
      }
      queue.push(d);
      // Start deliveries on a later tick, so send() costs the caller (the redirect) only a push.
      if (!pumpScheduled && active < concurrency) {
        pumpScheduled = true;
        setImmediate(pump);
      }
    },
    drain() {
      if (active === 0 && queued() === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
    pending() {
      return queued() + active;
    },
  };
}

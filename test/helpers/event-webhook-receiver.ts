/**
 * A webhook receiver on 127.0.0.1 for the event-webhook tests: answers 204, 500 or never (until the sender gives
 * up) as told, records what came, and checks signatures as the Standard Webhooks spec describes (written here
 * from the spec, not with the product's own verifier): HMAC-SHA256 over "{webhook-id}.{webhook-timestamp}.{body}",
 * keyed by the base64 after "whsec_", compared with each "v1," signature, timestamp within 5 minutes; and with the
 * reference library, `standardwebhooks` (a devDependency), which must agree.
 */
import type { Server } from "bun";
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";

export type ReceiverMode = "ok" | "fail" | "hang";

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  type: string;
  answered: number | "hung";
}

export interface Receiver {
  url: string;
  mode: ReceiverMode;
  received: Received[];
  /** Bodies answered 2xx, by webhook-id. */
  delivered(): Map<string, Received>;
  /** Resolves once `check` holds for what came, polling what is recorded; fails after `ms`. */
  until(check: (r: Received[]) => boolean, ms?: number): Promise<void>;
  stop(): void;
}

export function standardWebhooksValid(secret: string, r: Pick<Received, "id" | "timestamp" | "signature" | "body">): boolean {
  if (!secret.startsWith("whsec_") || !/^\d+$/.test(r.timestamp)) return false;
  if (Math.abs(Date.now() / 1000 - Number(r.timestamp)) > 300) return false;
  const expected = createHmac("sha256", Buffer.from(secret.slice(6), "base64")).update(`${r.id}.${r.timestamp}.${r.body}`).digest("base64");
  return r.signature.split(" ").some((s) => s === `v1,${expected}`);
}

/** The reference library's verdict (it throws on a bad signature or a stale timestamp). */
export function referenceLibraryVerifies(secret: string, r: Pick<Received, "id" | "timestamp" | "signature" | "body">): boolean {
  try {
    new Webhook(secret).verify(r.body, { "webhook-id": r.id, "webhook-timestamp": r.timestamp, "webhook-signature": r.signature });
    return true;
  } catch {
    return false;
  }
}

export async function until(check: () => boolean | Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

export function startReceiver(): Receiver {
  const r: Receiver = {
    url: "",
    mode: "ok",
    received: [],
    delivered: () => new Map(r.received.filter((x) => x.answered === 204).map((x) => [x.id, x])),
    until: (check, ms) => until(() => check(r.received), "the receiver", ms),
    stop: () => server.stop(true),
  };
  const server: Server<unknown> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(req) {
      const body = await req.text();
      const h = (n: string) => req.headers.get(n) ?? "";
      const got: Received = { id: h("webhook-id"), timestamp: h("webhook-timestamp"), signature: h("webhook-signature"), body, type: JSON.parse(body).type, answered: 204 };
      r.received.push(got);
      if (r.mode === "fail") return new Response("down", { status: (got.answered = 500) });
      if (r.mode === "hang") {
        got.answered = "hung";
        await new Promise<void>((resolve) => req.signal.addEventListener("abort", () => resolve(), { once: true }));
        return new Response(null, { status: 204 });
      }
      return new Response(null, { status: 204 });
    },
  });
  r.url = `http://127.0.0.1:${server.port}/hook`;
  return r;
}

/**
 * A link whose webhook endpoint keeps failing is paused, stored on the link and shown to its owner: the control
 * plane of test/helpers/in-process.ts (SQLite, memory HotState, test clock), a redirector and the real webhook
 * sender on the same store and clock, wired as control/main.ts wires them, and a receiver on 127.0.0.1 that
 * answers 500 on /down and 204 on /up.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { createRedirector, type Redirector } from "../../redirector/handler.ts";
import { pauseLinkWebhook } from "../../shared/webhooks/pause-link.ts";
import { createWebhookSender, type WebhookResult, type WebhookSender } from "../../shared/webhooks/sender.ts";
import { Visitor } from "../helpers/dashboard-visitor.ts";
import { BASE_URL, jsonOf, passwordOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";
import { socketFrom, UA } from "./redirector-harness.ts";

const MINUTE = 60_000;
const EMAIL = "paused@example.com";

let cp: InProcessControlPlane;
let key: string;
let receiver: Server<unknown>;
const arrived: string[] = [];

/** A process serving redirects: its own redirector and webhook sender over the shared store and HotState. */
interface Process {
  redirector: Redirector;
  sender: WebhookSender;
  results: WebhookResult[];
}

function startProcess(): Process {
  const { config, store, hot } = cp.deps;
  const results: WebhookResult[] = [];
  const sender = createWebhookSender({
    allowPrivate: true,
    now: cp.clock.now,
    onResult: (r) => void results.push(r),
    onPause: (pause) => pauseLinkWebhook(store, hot, pause),
  });
  const redirector = createRedirector({ config, hot, store, now: cp.clock.now, countryLookup: null, webhooks: sender });
  return { redirector, sender, results };
}

/** One click on `slug`, its webhook delivered or given up on. */
async function click(p: Process, slug: string): Promise<void> {
  const req = new Request(`${BASE_URL}/${slug}`, { headers: { "user-agent": UA.desktop }, redirect: "manual" });
  expect((await p.redirector.fetch(req, socketFrom("127.0.0.1"))).status).toBe(302);
  await p.sender.drain();
}

const api = (method: string, path: string, json?: unknown) => cp.request(method, path, { key, json }).then(jsonOf);
const hook = (path: string) => `http://127.0.0.1:${receiver.port}${path}`;

/** Waits for the pause that onPause stores without the sender waiting for it. */
async function pausedLink(slug: string) {
  for (let i = 0; i < 100; i++) {
    const link = await api("GET", `/api/v1/links/${slug}`);
    if (link.webhookPausedAt !== null) return link;
    await Bun.sleep(10);
  }
  throw new Error(`${slug} was not paused`);
}

beforeAll(async () => {
  receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      arrived.push(path);
      return new Response(null, { status: path === "/up" ? 204 : 500 });
    },
  });
  cp = await startControlPlane({ env: { WEBHOOK_ALLOW_PRIVATE: "true", RATE_LIMIT_PER_MINUTE: "100000" } });
  key = (await cp.createKey(EMAIL)).key;
});
afterAll(async () => {
  await cp?.close();
  receiver?.stop(true);
});

describe("a webhook endpoint that keeps failing", () => {
  test("is paused after 20 failures over 10 minutes: the API shows when and why, no process sends for it any more", async () => {
    const created = await api("POST", "/api/v1/links", { url: "https://example.com/", slug: "hook-down", webhookUrl: hook("/down") });
    expect([created.webhookPausedAt, created.webhookPausedReason]).toEqual([null, null]);
    const p = startProcess();
    const before = arrived.length;
    for (let i = 0; i < 20; i++, cp.clock.advance(MINUTE)) await click(p, "hook-down");
    expect(arrived.length - before).toBe(20);

    const link = await pausedLink("hook-down");
    expect(link.webhookPausedAt).toBe(new Date(cp.clock.now() - MINUTE).toISOString()); // at the 20th failure
    expect(link.webhookPausedReason).toBe(
      "20 deliveries in a row failed over 19 minutes; the last: answered HTTP 500. Set the webhook URL again to resume.",
    );
    expect([link.webhookUrl, link.state]).toEqual([hook("/down"), "live"]); // the link itself still redirects

    // Another process that never saw a failure reads the stored pause: its clicks queue no webhook at all.
    const other = startProcess();
    for (let i = 0; i < 3; i++) await click(other, "hook-down");
    await click(p, "hook-down");
    expect(arrived.length - before).toBe(20);
    expect([other.results, p.results.filter((r) => r !== "failed")]).toEqual([[], []]);
  });

  test("the link's page in the dashboard says the webhook is paused and why", async () => {
    const v = new Visitor(BASE_URL, cp.handle);
    await v.submit("/dashboard/signin", "/dashboard/signin", { email: EMAIL, password: passwordOf(EMAIL) });
    const page = await v.get("/dashboard/links/hook-down/stats");
    expect(page.status).toBe(200);
    expect(page.html).toContain("webhook paused ");
    expect(page.html).toContain("20 deliveries in a row failed over 19 minutes; the last: answered HTTP 500.");
  });

  test("changing other fields keeps the pause; setting webhookUrl again resumes deliveries", async () => {
    const tagged = await api("PATCH", "/api/v1/links/hook-down", { tags: ["still-paused"] });
    expect(tagged.webhookPausedAt).not.toBeNull();

    const resumed = await api("PATCH", "/api/v1/links/hook-down", { webhookUrl: hook("/up") });
    expect([resumed.webhookPausedAt, resumed.webhookPausedReason]).toEqual([null, null]);
    const p = startProcess();
    const before = arrived.length;
    await click(p, "hook-down");
    expect(arrived.slice(before)).toEqual(["/up"]);
    expect(p.results).toEqual(["delivered"]);
  });

  test("an endpoint failing for a shorter time is only backed off, never paused", async () => {
    await api("POST", "/api/v1/links", { url: "https://example.com/", slug: "hook-flaky", webhookUrl: hook("/down") });
    const p = startProcess();
    for (let i = 0; i < 30; i++, cp.clock.advance(15_000)) await click(p, "hook-flaky"); // 7.5 minutes
    expect(p.results.filter((r) => r === "failed").length).toBeLessThan(30);
    expect(p.results.filter((r) => r === "backed_off").length).toBeGreaterThan(0);
    await Bun.sleep(50);
    expect((await api("GET", "/api/v1/links/hook-flaky")).webhookPausedAt).toBeNull();
  });

  test("the dashboard's Resume webhook button sets the same address again, which resumes deliveries", async () => {
    await api("POST", "/api/v1/links", { url: "https://example.com/", slug: "hook-resume", webhookUrl: hook("/down") });
    const p = startProcess();
    for (let i = 0; i < 20; i++, cp.clock.advance(MINUTE)) await click(p, "hook-resume");
    await pausedLink("hook-resume");
    const v = new Visitor(BASE_URL, cp.handle);
    await v.submit("/dashboard/signin", "/dashboard/signin", { email: EMAIL, password: passwordOf(EMAIL) });
    expect((await v.get("/dashboard/links/hook-resume/stats")).html).toContain("Resume webhook");
    const done = await v.submit("/dashboard/links/hook-resume/stats", "/dashboard/links/hook-resume/webhook/resume", {});
    expect([done.status, done.headers.get("location")]).toEqual([303, "/dashboard/links/hook-resume/stats?flash=webhook-resumed"]);
    const link = await api("GET", "/api/v1/links/hook-resume");
    expect([link.webhookUrl, link.webhookPausedAt, link.webhookPausedReason]).toEqual([hook("/down"), null, null]);
    expect((await v.get("/dashboard/links/hook-resume/stats")).html).not.toContain("Resume webhook");
  });
});

/**
 * The dashboard's Webhooks page in process: create with the secret shown once after the POST-redirect-GET, the
 * list, an endpoint's delivery log with "send again", pause and delete; another account's endpoint is a 404.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { DEFAULT_EVENT_WEBHOOK_SETTINGS } from "../../control/webhooks/settings.ts";
import { startEventWebhookWorker, type EventWebhookWorker } from "../../control/webhooks/worker.ts";
import { csrfOf, Visitor, signedInVisitor } from "../helpers/dashboard-visitor.ts";
import { startReceiver, standardWebhooksValid, until, type Receiver } from "../helpers/event-webhook-receiver.ts";
import { BASE_URL, passwordOf, startControlPlane, type InProcessControlPlane } from "../helpers/in-process.ts";

let cp: InProcessControlPlane;
let receiver: Receiver;
let worker: EventWebhookWorker;

beforeAll(async () => {
  cp = await startControlPlane({ env: { WEBHOOK_ALLOW_PRIVATE: "true", RATE_LIMIT_PER_MINUTE: "100000" } });
  receiver = startReceiver();
  worker = startEventWebhookWorker({ store: cp.deps.store, allowPrivate: true, now: cp.clock.now, base: cp.deps.config, settings: { ...DEFAULT_EVENT_WEBHOOK_SETTINGS, pollMs: 20 } });
});

afterAll(async () => {
  await worker.stop();
  receiver.stop();
  await cp.close();
});

const signedIn = (email: string, plane = cp): Promise<Visitor> => signedInVisitor(plane, BASE_URL, email, passwordOf(email));

test("create shows the secret once, the log lists deliveries, send again sends one more, pause and delete work", async () => {
  const v = await signedIn("hooks@example.com");
  expect((await v.get("/dashboard/keys")).html).toContain('href="/dashboard/webhooks"');
  const posted = await v.submit("/dashboard/webhooks", "/dashboard/webhooks", { url: receiver.url, events: ["link.created", "link.deleted"] });
  expect([posted.status, posted.headers.get("location")]).toEqual([303, "/dashboard/webhooks"]);
  const page = await v.get("/dashboard/webhooks");
  const secret = /value="(whsec_[^"]+)"/.exec(page.html)?.[1];
  expect(secret).toBeDefined();
  expect(page.html).toContain(receiver.url);
  const again = await v.get("/dashboard/webhooks");
  expect(again.html).not.toContain(secret!);
  const endpointPath = /href="(\/dashboard\/webhooks\/we_[^"]+)"/.exec(again.html)![1]!;

  const link = await v.submit("/dashboard/links/new", "/dashboard/links", { url: "https://example.com/dash", slug: "dash-hook" });
  expect(link.status).toBe(303);
  await receiver.until((r) => r.some((x) => x.type === "link.created" && x.answered === 204));
  const got = receiver.received.find((x) => x.type === "link.created")!;
  expect(standardWebhooksValid(secret!, got)).toBe(true);
  // The receiver answers before the worker records the attempt: wait for the log to say so.
  let log = await v.get(endpointPath);
  await until(async () => />delivered</.test((log = await v.get(endpointPath)).html), "the delivery recorded as delivered");
  expect(log.status).toBe(200);
  expect(log.html).toContain("link.created");

  const retry = /action="([^"]+\/retry)"/.exec(log.html)![1]!;
  const sent = await v.post(retry, { _csrf: csrfOf(log.html) });
  expect([sent.status, sent.headers.get("location")]).toEqual([303, endpointPath]);
  await until(() => receiver.received.filter((x) => x.id === got.id).length === 2, "the delivery sent again");

  const paused = await v.post(`${endpointPath}/active`, { _csrf: csrfOf(log.html), active: "false" });
  expect(paused.status).toBe(303);
  expect((await v.get(endpointPath)).html).toContain("paused");

  const other = await signedIn("other-hooks@example.com");
  expect((await other.get(endpointPath)).status).toBe(404);
  expect((await other.post(`${endpointPath}/delete`, { _csrf: csrfOf((await other.get("/dashboard/webhooks")).html) })).status).toBe(404);

  const deleted = await v.post(`${endpointPath}/delete`, { _csrf: csrfOf(log.html) });
  expect([deleted.status, deleted.headers.get("location")]).toEqual([303, "/dashboard/webhooks"]);
  expect((await v.get("/dashboard/webhooks")).html).toContain("No webhook endpoints yet.");
});

test("a URL the SSRF guard refuses comes back on the form with its problem, nothing created", async () => {
  const strict = await startControlPlane({ env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  try {
    const v = await signedIn("strict@example.com", strict);
    const res = await v.submit("/dashboard/webhooks", "/dashboard/webhooks", { url: "http://127.0.0.1:9/x", events: ["link.created"] });
    expect(res.status).toBe(400);
    expect(res.html).toContain("is not a public address");
    expect((await v.get("/dashboard/webhooks")).html).toContain("No webhook endpoints yet.");
  } finally {
    await strict.close();
  }
});

/**
 * Event webhooks survive a crash (issue #25): real spawned servers, a real receiver on 127.0.0.1. The receiver
 * fails, then hangs with attempts in flight, and the control process is killed (SIGKILL, no grace) right then;
 * once the receiver is back and a control process runs again, every event arrives. Embedded (SQLite outbox) and
 * scale mode (Postgres outbox, two control processes sharing the work). Short backoff, lease and poll via the
 * EVENT_WEBHOOK_* variables; every wait is for an order of events, never a duration.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { startReceiver, type Receiver } from "../helpers/event-webhook-receiver.ts";
import { startDeployment, type Deployment } from "../helpers/scale.ts";
import { api, createKey, startServer, type TestServer } from "../helpers/server.ts";

const FAST = {
  WEBHOOK_ALLOW_PRIVATE: "true",
  RATE_LIMIT_PER_MINUTE: "100000",
  EVENT_WEBHOOK_POLL_MS: "50",
  EVENT_WEBHOOK_RETRY_BASE_MS: "200",
  EVENT_WEBHOOK_RETRY_MAX_MS: "400",
  EVENT_WEBHOOK_TIMEOUT_MS: "500",
  EVENT_WEBHOOK_LEASE_MS: "1000",
  EVENT_WEBHOOK_ENDPOINT_BACKOFF_MS: "50",
  EVENT_WEBHOOK_ENDPOINT_BACKOFF_MAX_MS: "200",
};
const SLUGS = ["crash-1", "crash-2", "crash-3", "crash-4", "crash-5"];

const receivers: Receiver[] = [];
afterAll(() => receivers.forEach((r) => r.stop()));

/**
 * Creates an endpoint and five links while the receiver fails, then hangs it with an attempt in flight. Waits for
 * what the worker guarantees, not for each event's first attempt: after a failure the endpoint's other deliveries
 * are given back unattempted while it backs off (control/webhooks/endpoint-backoff.ts), so which events are tried
 * before the receiver hangs depends on the clock (waiting for five distinct 500s timed out under load). The crash
 * finds the events in whatever states the clock left them (failed and due again, postponed, never tried), one of
 * them claimed with its attempt hung.
 */
async function eventsWhileReceiverIsDown(control: { url: string }, key: string, receiver: Receiver): Promise<void> {
  const client = api(control, key);
  const created = await client.post("/api/v1/webhooks", { url: receiver.url, events: ["link.created"] });
  expect(created.status).toBe(201);
  receiver.mode = "fail";
  for (const slug of SLUGS) expect((await client.post("/api/v1/links", { url: `https://example.com/${slug}`, slug })).status).toBe(201);
  await receiver.until((r) => r.some((x) => x.answered === 500), 20_000);
  receiver.mode = "hang";
  await receiver.until((r) => r.some((x) => x.answered === "hung"), 20_000);
}

/** Every link's event answered 204 once the receiver is back. */
async function everyEventArrives(receiver: Receiver): Promise<void> {
  receiver.mode = "ok";
  await receiver.until((r) => new Set(r.filter((x) => x.answered === 204).map((x) => JSON.parse(x.body).data.slug)).size === SLUGS.length, 30_000);
  const slugs = [...receiver.delivered().values()].map((x) => JSON.parse(x.body).data.slug).sort();
  expect(slugs).toEqual(SLUGS);
}

describe("event webhooks across a crash", () => {
  let server: TestServer | undefined;
  let deployment: Deployment | undefined;
  afterAll(async () => {
    await server?.stop();
    await deployment?.stop();
  });

  test("embedded: a control process killed mid-retry loses nothing (SQLite outbox)", async () => {
    const receiver = startReceiver();
    receivers.push(receiver);
    server = await startServer({ env: FAST });
    const key = await createKey(server, "crash@example.com");
    await eventsWhileReceiverIsDown(server, key, receiver);
    await server.kill();
    await everyEventArrivesAfter(() => server!.restart(), receiver);
  }, 90_000);

  test("scale mode: two control processes both killed mid-retry, one started again: nothing lost (Postgres outbox)", async () => {
    const receiver = startReceiver();
    receivers.push(receiver);
    deployment = await startDeployment({ controls: 2, redirectors: 0, env: FAST });
    const key = await deployment.createKey("crash-scale@example.com");
    await eventsWhileReceiverIsDown(deployment.control, key, receiver);
    await Promise.all(deployment.controls.map((c) => c.kill()));
    await everyEventArrivesAfter(() => deployment!.controls[1]!.restart(), receiver);
  }, 90_000);
});

/** Starts the process again with the receiver back, and waits for every event. */
async function everyEventArrivesAfter(restart: () => Promise<unknown>, receiver: Receiver): Promise<void> {
  receiver.mode = "ok";
  await restart();
  await everyEventArrives(receiver);
}

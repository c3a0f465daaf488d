/**
 * link.clicked for account endpoints, end to end: real redirects on spawned servers, the click drain writing the
 * events (withClickEvents: the embedded writer thread's and the scale-mode consumer's), the worker delivering them to
 * a receiver on 127.0.0.1, one event per click, signed.
 */
import { afterAll, expect, test } from "bun:test";
import { startReceiver, standardWebhooksValid, type Receiver } from "../helpers/event-webhook-receiver.ts";
import { startDeployment, visit, type Deployment } from "../helpers/scale.ts";
import { api, createKey, startServer } from "../helpers/server.ts";

const ENV = { WEBHOOK_ALLOW_PRIVATE: "true", RATE_LIMIT_PER_MINUTE: "100000", EVENT_WEBHOOK_POLL_MS: "50" };

let deployment: Deployment | undefined;
const receiver: Receiver = startReceiver();
afterAll(async () => {
  receiver.stop();
  await deployment?.stop();
});

async function clicksArrive(control: { url: string }, redirector: { url: string }, key: string, slug: string): Promise<void> {
  const client = api(control, key);
  const endpoint = await client.post("/api/v1/webhooks", { url: receiver.url, events: ["link.clicked"] });
  expect(endpoint.status).toBe(201);
  const link = await client.post("/api/v1/links", { url: "https://example.com/clicked", slug });
  expect(link.status).toBe(201);
  for (let i = 0; i < 3; i++) expect((await visit(redirector, slug)).status).toBe(302);
  const mine = (r: Receiver["received"]) => r.filter((x) => x.type === "link.clicked" && JSON.parse(x.body).data.slug === slug);
  await receiver.until((r) => mine(r).length >= 3, 30_000);
  const got = mine(receiver.received);
  expect(new Set(got.map((x) => x.id)).size).toBe(3);
  for (const x of got) expect(standardWebhooksValid(endpoint.body.secret, x)).toBe(true);
  // The link's shortUrl as the API gave it: the worker of the control process completes the click's payload.
  expect(JSON.parse(got[0]!.body).data).toMatchObject({ slug, shortUrl: link.body.shortUrl, domain: link.body.domain, browser: "Chrome", device: "desktop", bot: false });
}

test("scale mode: each click of a link reaches the owner's link.clicked endpoint", async () => {
  deployment = await startDeployment({ redirectors: 1, env: ENV });
  const key = await deployment.createKey("clicks@example.com");
  await clicksArrive(deployment.control, deployment.redirectors[0]!, key, "clicked-scale");
}, 90_000);

test("embedded: each click of a link reaches the owner's link.clicked endpoint (the writer thread writes the events)", async () => {
  const server = await startServer({ env: ENV });
  try {
    const key = await createKey(server, "clicks-embedded@example.com");
    await clicksArrive(server, server, key, "clicked-embedded");
  } finally {
    await server.stop();
  }
}, 90_000);

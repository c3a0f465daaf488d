/** Scale-mode redirector process (`npm run start:redirector`): stateless, any number of them. */
import { ConfigError, loadConfig } from "../shared/config.ts";
import { openStorage } from "../shared/adapters/open.ts";
import { openCountryLookup } from "../shared/facts/geo.ts";
import { createWebhookSender } from "../shared/webhooks/sender.ts";
import { createRedirector } from "./handler.ts";

let config;
try {
  config = loadConfig();
  if (config.mode !== "scale") throw new ConfigError("DATABASE_URL", "and REDIS_URL must be set to run a separate redirector (scale mode); use `npm start` otherwise");
} catch (e) {
  if (e instanceof ConfigError) {
    console.error(e.message);
    process.exit(2);
  }
  throw e;
}

const countryLookup = await openCountryLookup(config.geoipDb);
const { store, hot, description } = await openStorage(config);
const webhooks = createWebhookSender({ allowPrivate: config.webhookAllowPrivate });
const redirector = createRedirector({ config, hot, store, now: Date.now, countryLookup, webhooks });

const server = Bun.serve({
  port: config.port,
  hostname: "0.0.0.0",
  maxRequestBodySize: 64 * 1024,
  fetch(req, srv) {
    if (req.url.endsWith("/healthz")) return Response.json({ status: "ok" });
    return redirector.fetch(req, srv);
  },
  error() {
    return new Response("Internal error", { status: 500 });
  },
});
console.log(`clink redirector listening on port ${server.port}; data: ${description}`);

let stopping = false;
async function shutdown() {
  if (stopping) return;
  stopping = true;
  await server.stop();
  await redirector.flush();
  await webhooks.drain();
  await hot.close();
  await store.close();
  process.exit(0);
}
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);

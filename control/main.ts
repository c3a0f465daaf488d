/**
 * Entry point. `--embedded` (npm start): redirector, control plane and click consumer in one process on
 * one port, SQLite + memory. `--control` (scale mode): control plane and click consumer only.
 */
import { ConfigError, loadConfig, type Config } from "../shared/config.ts";
import { openStorage } from "../shared/adapters/open.ts";
import { openCountryLookup } from "../shared/facts/geo.ts";
import { createWebhookSender } from "../shared/webhooks/sender.ts";
import { createRedirector } from "../redirector/handler.ts";
import { buildControlPlane } from "./app.ts";
import { ClickConsumer } from "./clicks/consumer.ts";
import type { Deps } from "./deps.ts";

const CONTROL_SEGMENTS = new Set(["", "api", "mcp", "dashboard", "healthz", "readyz", "metrics", "static", "favicon.ico", "robots.txt"]);

/** Paths the control plane answers (by first path segment); everything else is a short address. */
export function isControlPath(url: string): boolean {
  const p = url.indexOf("/", url.indexOf("//") + 2);
  if (p < 0) return true;
  let end = p + 1;
  while (end < url.length) {
    const c = url.charCodeAt(end);
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */) break;
    end++;
  }
  return CONTROL_SEGMENTS.has(url.slice(p + 1, end));
}

function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(2);
    }
    throw e;
  }
}

async function main() {
  const role = process.argv.includes("--control") ? "control" : "embedded";
  const config = loadConfigOrExit();
  if (role === "embedded" && config.mode === "scale") {
    console.error("DATABASE_URL and REDIS_URL are set: run `npm run start:control` and `npm run start:redirector` for scale mode.");
  }
  let countryLookup;
  try {
    countryLookup = await openCountryLookup(config.geoipDb);
  } catch (e) {
    console.error((e as Error).message);
    process.exit(2);
  }
  const { store, hot, description } = await openStorage(config);
  await store.migrate();
  const deps: Deps = { config, store, hot, now: Date.now };
  const control = buildControlPlane(deps);
  const consumer = new ClickConsumer(hot, store, { consumerName: `control-${process.pid}`, countryLookup });
  consumer.start();

  const webhooks = createWebhookSender({ allowPrivate: config.webhookAllowPrivate });
  const redirector = role === "embedded" ? createRedirector({ config, hot, store, now: Date.now, countryLookup, webhooks }) : null;
  const handleControl = (req: Request) => control.app.handle(req);

  const server = Bun.serve({
    port: config.port,
    hostname: "0.0.0.0",
    // Our own 1 MiB check answers with problem+json; Bun's limit only stops absurd bodies.
    maxRequestBodySize: 8 * 1024 * 1024,
    fetch(req, srv) {
      if (redirector === null || isControlPath(req.url)) return handleControl(req);
      return redirector.fetch(req, srv);
    },
    error() {
      return new Response("Internal error", { status: 500 });
    },
  });

  console.log(`clink ${role} listening on ${config.baseUrl} (port ${server.port}); data: ${description}`);
  if (role === "embedded") console.log(`Create your first API key: npm run create-key -- --email you@example.com`);

  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    await server.stop();
    await redirector?.flush();
    await consumer.stop();
    await webhooks.drain();
    await hot.close();
    await store.close();
    process.exit(0);
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
}

await main();

/**
 * The yardstick every redirect figure is divided by: the fastest HTTP redirect Bun can serve, a bare
 * `Bun.serve` answering every request with one fixed 302 (no routing, no lookup, no click). It runs as its
 * own process, started by bench/run.ts with PORT set, exactly like the servers it is compared with.
 */
const port = Number(process.env.PORT ?? 0);
// One finished Response, cloned per request: the cheapest way Bun has to send a fixed answer (about 7% more
// requests/s here than `new Response(...)` per request), the same technique clink's redirector uses.
const REDIRECT = new Response(null, { status: 302, headers: { location: "https://example.com/" } });

const server = Bun.serve({
  port,
  hostname: "127.0.0.1",
  fetch: () => REDIRECT.clone(),
});
console.log(`baseline listening on port ${server.port}`);
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});

/**
 * The floor under a recorded redirect: a `Bun.serve` doing only the work no implementation of the embedded
 * default can skip, and nothing of clink's own code. Per request it finds the link by slug (one Map lookup),
 * reads what a click keeps (User-Agent, Referer, the time), asks for the visitor's address (the country comes
 * from it: `server.requestIP`, a getpeername(2) system call per request in Bun), buffers the click and answers
 * with a finished 302 carrying the design's `Cache-Control`. Every 1,024 clicks go to a worker thread as one
 * packed string, the cheapest hand-off clink has found (shared/clicks/columns.ts); the worker drops them, so
 * the floor leaves out writing clicks, which clink does on another thread.
 *
 * Every redirect case measures it in the same rounds as clink and the bare 302 (bench/cases/shared.ts,
 * measureWithFloor), and is judged against it (design §7, restated by issue #20): it shows how much of the gap
 * between clink and the bare baseline is the price of recording a click at all. FLOOR_SLUGS (comma-separated)
 * names the links it knows, the case's own slugs, so it serves the same paths as clink.
 */
const port = Number(process.env.PORT ?? 0);
const BATCH = 1024;

const redirect = new Response(null, {
  status: 302,
  headers: { location: "https://example.com/landing", "cache-control": "private, max-age=0" },
});
const slugs = (process.env.FLOOR_SLUGS ?? "bench-plain").split(",");
const links = new Map<string, Response>(slugs.map((slug) => [slug, redirect]));
const notFound = new Response("Not found", { status: 404 });

const sink = new Worker(URL.createObjectURL(new Blob(["self.onmessage = () => {};"], { type: "application/javascript" })));
let texts: string[] = [];
let times: number[] = [];
let seq = 0;

const server = Bun.serve({
  port,
  hostname: "127.0.0.1",
  fetch(req, srv) {
    const url = req.url;
    const res = links.get(url.slice(url.indexOf("/", url.indexOf("//") + 2) + 1));
    if (res === undefined) return notFound.clone();
    const ua = req.headers.get("user-agent") ?? "";
    const referrer = req.headers.get("referer") ?? "";
    const ip = srv.requestIP(req)?.address ?? "";
    texts.push(`${seq++}`, ua, referrer, ip);
    times.push(Date.now());
    if (times.length >= BATCH) {
      const ts = new Float64Array(times);
      sink.postMessage({ text: texts.join("\u0000"), ts }, [ts.buffer]);
      texts = [];
      times = [];
    }
    return res.clone();
  },
});
console.log(`floor listening on port ${server.port}`);
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});

export {}; // a module, not a global script (bench/baseline.ts declares the same names)

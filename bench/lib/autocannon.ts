/**
 * autocannon's programmatic API, run inside the benchmark process. It serves the API-level cases, where the
 * server (auth, rate limit, JSON, storage) is far slower than autocannon's own ceiling (~92k requests/s on
 * these machines), and stands in for wrk when wrk cannot be installed. Its CPU is the runner's own.
 */
import autocannon from "autocannon";
import { CpuWindow } from "./procfs.ts";
import type { LoadResult, LoadSpec } from "./load.ts";

export async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const cpu = new CpuWindow(spec.serverPids);
  const before = process.cpuUsage();
  const single = spec.variants.length === 1;
  const r = await autocannon({
    url: spec.baseUrl + spec.variants[0].path,
    connections: spec.connections,
    duration: spec.durationS,
    timeout: 5,
    ...(single
      ? { headers: spec.variants[0].headers ?? {} }
      : { requests: spec.variants.map((v) => ({ method: "GET", path: v.path, headers: v.headers ?? {} })) }),
  });
  const own = process.cpuUsage(before);
  const used = cpu.stop();
  const requests = r.requests.total;
  const expected = spec.expect === "3xx" ? r["3xx"] : spec.expect === "2xx" ? r["2xx"] : r["4xx"];
  return {
    generator: "autocannon",
    requests,
    durationS: r.duration,
    rps: requests / r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    maxMs: r.latency.max,
    errors: r.errors + r.timeouts,
    unexpected: Math.max(0, requests - expected),
    generatorCores: (own.user + own.system) / 1e6 / used.seconds,
    serverCores: [...used.perPid.values()].reduce((a, b) => a + b, 0),
    machineCores: used.machineBusyCores,
    serverCpuUsPerRequest: ([...used.perPid.values()].reduce((a, b) => a + b, 0) * used.seconds * 1e6) / Math.max(1, requests),
  };
}

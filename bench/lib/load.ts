/**
 * What a load run is asked to do and what it reports, whichever generator makes the load (wrk or autocannon).
 * Besides requests/s and latency, every run reports the CPU each side used, so the report can show that the
 * generator, not only the server, was measured below its own limit.
 */
export type Generator = "wrk" | "autocannon";

/** One request shape; a run with several cycles through them in order. */
export interface RequestVariant {
  path: string;
  headers?: Record<string, string>;
}

/** Which answers count as expected: a redirect (3xx), a success (2xx) or 404. */
export type Expect = "3xx" | "2xx" | "404";

export interface LoadSpec {
  /** http://127.0.0.1:<port>, no trailing slash. */
  baseUrl: string;
  variants: RequestVariant[];
  expect: Expect;
  durationS: number;
  connections: number;
  /** Processes serving the load, whose CPU is reported beside the generator's. */
  serverPids: number[];
}

export interface LoadResult {
  generator: Generator;
  requests: number;
  durationS: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Socket errors and timeouts. */
  errors: number;
  /** Answers outside the expected class (wrk can only tell 2xx/3xx from the rest). */
  unexpected: number;
  /** Average cores used during the run: generator, the serving processes together, the whole machine. */
  generatorCores: number;
  serverCores: number;
  machineCores: number;
  /** Server CPU time per answered request, in µs: unlike requests/s, barely moved by other load on the machine. */
  serverCpuUsPerRequest: number;
}

/** A generator counts as saturated above this share of the cores it can use (wrk -t1 and autocannon: one). */
export const GENERATOR_SATURATION = 0.9;

/** CPU the rest of the machine used during a run (kernel networking is part of it), in cores. */
export const otherCores = (r: LoadResult) => Math.max(0, r.machineCores - r.generatorCores - r.serverCores);

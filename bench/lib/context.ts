/** What every case gets from the runner: options, the running baseline, the chosen generator and a logger. */
import type { Generator, LoadResult, LoadSpec } from "./load.ts";
import type { Options } from "./options.ts";
import type { ServerProcess } from "./proc.ts";

export interface ScaleServices {
  /** The user's DATABASE_URL and REDIS_URL; the bench works in its own schema and key prefix there. */
  databaseUrl: string;
  redisUrl: string;
}

export interface Ctx {
  opts: Options;
  log(message: string): void;
  /** Generator for redirect throughput: wrk unless it is missing or another was forced. */
  redirectGenerator: Generator;
  /** The bare Bun.serve 302, running for the whole benchmark. */
  baseline: ServerProcess;
  /** Scale-mode services, or why the Redis-mode figures are skipped. */
  scale: ScaleServices | { skipped: string };
  /** Runs one load with the given generator. */
  load(spec: LoadSpec, generator: Generator): Promise<LoadResult>;
  /** Versions of things the cases touched (Postgres, Redis), added to the report's machine section. */
  versions: Record<string, string>;
  /** "pids:generator" of long-lived servers already warmed up (the baseline). */
  warmed: Set<string>;
  /** What is left of the time the whole run may spend waiting for other work on the machine to stop (ms). */
  quietBudgetMs: number;
}

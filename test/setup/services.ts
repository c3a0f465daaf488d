/**
 * Preload of every `bun test` run (bunfig.toml), so the tests need nothing but the machine's Postgres and Redis:
 * it makes sure what the run's test files use beyond those two is there (test/setup/provide.ts).
 *
 * - DATABASE_URL_TEST and REDIS_URL_TEST, when not set, are DATABASE_URL and REDIS_URL, or the local services
 *   (postgres://postgres@127.0.0.1:5432/test, redis://127.0.0.1:6379), as the test helpers always read them.
 * - Contract and end-to-end tests get a Redis Cluster in REDIS_CLUSTER_NODES_TEST: the one named there when it is
 *   healthy, otherwise a private one started here (test/setup/redis-cluster.ts) and torn down when the run ends.
 * - Browser tests (and the MCP clients' OAuth sign-in) get Chromium, the custom-domains HTTPS test Caddy, installed
 *   with apt-get when missing (test/setup/apt.ts), while the cluster forms.
 *
 * `npm test` (test/setup/run-suite.ts) provides both once before its parallel workers start, for the files it was
 * asked to run, and names them in the environment; its workers' preloads leave it at that. A plain `bun test` run
 * provides them here, once, and stops them when it ends. A worker of a `bun test --parallel` started by hand cannot
 * tell which files it will get: it provides both, and its cluster stops when the worker exits (the preload's
 * afterAll would run after its first file).
 *
 * A service that cannot be provided is named in one line at the start of the output, and the tests that need it
 * fail with that reason: never skipped. Which test files a run has is read from its command line (bun gives a
 * preload no list); when that cannot be told, every file is assumed.
 */
import { afterAll } from "bun:test";
import { readFileSync } from "node:fs";
import { allTestFiles, provideServices, RUNNER_VAR } from "./provide.ts";
import { selectTestFiles } from "./select.ts";

/** This process's command line, or null when it cannot be read. */
function commandLine(): string[] | null {
  try {
    return readFileSync("/proc/self/cmdline", "utf8").split("\0").filter(Boolean);
  } catch {
    return null;
  }
}

const argv = commandLine();
if (argv?.includes("--test-worker")) {
  // npm test's runner provided what the run's files need before it started the workers; a worker without it does.
  // Kept referenced until the worker exits: the cluster's nodes stop when their pipe closes with the process.
  if (!process.env[RUNNER_VAR]) (globalThis as { clinkTestServices?: unknown }).clinkTestServices ??= await provideServices(allTestFiles(), "this worker");
} else {
  const at = argv?.indexOf("test") ?? -1;
  const files = !argv || at < 0 ? allTestFiles() : selectTestFiles(argv.slice(at + 1), allTestFiles(), process.cwd());
  afterAll(await provideServices(files, "this run"));
}

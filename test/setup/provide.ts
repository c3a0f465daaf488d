/**
 * What a set of test files needs beyond the machine's Postgres and Redis, provided once for all of them and side
 * by side (the cluster forms while apt-get installs): a Redis Cluster for contract and end-to-end files, Chromium
 * for browser files and the MCP clients' OAuth browser step, Caddy for the custom-domains HTTPS test. Used by the
 * suite's runner
 * (run-suite.ts), which provides them before its parallel `bun test` starts, and by the preload (services.ts),
 * which finds them in the environment then, or provides them itself to a `bun test` started by hand.
 *
 * Everything is told through the environment, which the runner passes on to its `bun test` and that to its
 * workers: REDIS_CLUSTER_NODES_TEST names the cluster; a service that could not be provided leaves its reason in
 * CLUSTER_PROBLEM_VAR or the Chromium one, so the tests that need it fail with that reason (never skip) and no
 * later file tries again.
 */
import { resolve } from "node:path";
import { ensureCaddy } from "./caddy.ts";
import { ensureChromium } from "./chromium.ts";
import { CLUSTER_PROBLEM_VAR, clusterProblem, startTestCluster } from "./redis-cluster.ts";
import { inTestDirs } from "./select.ts";

export const TEST_ROOT = resolve(import.meta.dir, "..");
const TEST_FILE = /(\.|_)(test|spec)\.(c|m)?[jt]sx?$/;
/** Test files under these folders of test/ may talk to a Redis Cluster; those under browser/ drive Chromium. */
const CLUSTER_DIRS = ["contract", "e2e"];
const BROWSER_DIRS = ["browser"];
/** Files elsewhere that drive Chromium (the MCP clients' OAuth sign-in), or run Caddy. */
const CHROMIUM_FILES = /\/e2e\/mcp-clients[^/]*\.test\.ts$/;
const CADDY_FILES = /\/e2e\/domains-caddy\.test\.ts$/;

export const note = (line: string) => console.error(`test setup: ${line}`);
/** Set by the suite's runner for its workers: what the run's files need is provided already (or said why not). */
export const RUNNER_VAR = "CLINK_TEST_RUNNER";

/** Every test file under test/, as `bun test` finds them. */
export function allTestFiles(): string[] {
  return [...new Bun.Glob("**/*").scanSync({ cwd: TEST_ROOT, absolute: true })].filter((f) => TEST_FILE.test(f));
}

/** DATABASE_URL_TEST and REDIS_URL_TEST, when not set: DATABASE_URL and REDIS_URL, or the local services. */
export function defaultServiceUrls(env: NodeJS.ProcessEnv = process.env): void {
  env.DATABASE_URL_TEST ||= env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
  env.REDIS_URL_TEST ||= env.REDIS_URL || "redis://127.0.0.1:6379";
}

/**
 * A usable Redis Cluster in REDIS_CLUSTER_NODES_TEST: the one named there when it is healthy, otherwise a private
 * one started now. Returns what stops the private one (null when none was started).
 */
async function provideCluster(scope: string): Promise<(() => Promise<void>) | null> {
  if (process.env[CLUSTER_PROBLEM_VAR]) return null; // the runner tried already and said why
  const named = process.env.REDIS_CLUSTER_NODES_TEST;
  if (named) {
    const problem = await clusterProblem(named);
    if (problem === null) return null;
    note(`REDIS_CLUSTER_NODES_TEST=${named} is not a healthy cluster (${problem}); starting a private one`);
  }
  try {
    const cluster = await startTestCluster();
    process.env.REDIS_CLUSTER_NODES_TEST = cluster.nodes;
    note(`Redis Cluster ${cluster.nodes} for ${scope} (stopped when it ends)`);
    return cluster.stop;
  } catch (err) {
    const problem = `no Redis Cluster for the tests: ${(err as Error).message}`;
    process.env[CLUSTER_PROBLEM_VAR] = problem;
    note(problem);
    return null;
  }
}

/**
 * Provides what `files` need (see the top of this file) into process.env; `scope` names who it is for in the
 * messages ("this run"). Returns what stops what was started here.
 */
export async function provideServices(files: string[], scope: string): Promise<() => Promise<void>> {
  defaultServiceUrls();
  const reported = (problem: string | null) => void (problem && note(problem));
  const [stopCluster] = await Promise.all([
    inTestDirs(files, CLUSTER_DIRS, TEST_ROOT) ? provideCluster(scope) : null,
    inTestDirs(files, BROWSER_DIRS, TEST_ROOT) || files.some((f) => CHROMIUM_FILES.test(f)) ? ensureChromium().then(reported) : null,
    files.some((f) => CADDY_FILES.test(f)) ? ensureCaddy().then(reported) : null,
  ]);
  return async () => {
    await stopCluster?.();
  };
}

/**
 * Preload of every `bun test` run (bunfig.toml), so `npm test` needs nothing but the machine's Postgres and Redis:
 * it provides, once per run and only when the run's test files need them, what the suite uses beyond those two.
 *
 * - DATABASE_URL_TEST and REDIS_URL_TEST, when not set, are DATABASE_URL and REDIS_URL, or the local services
 *   (postgres://postgres@127.0.0.1:5432/test, redis://127.0.0.1:6379), as the test helpers always read them.
 * - Contract and end-to-end tests get a Redis Cluster in REDIS_CLUSTER_NODES_TEST: the one named there when it is
 *   healthy, otherwise a private one started here (test/setup/redis-cluster.ts) and torn down when the run ends.
 * - Browser tests get Chromium, installed with apt-get when missing (test/setup/chromium.ts).
 *
 * A service that cannot be provided is named in one line at the start of the output, and the tests that need it
 * fail with that reason: never skipped. Which test files a run has is read from its command line (bun gives a
 * preload no list); when that cannot be told, every file is assumed.
 */
import { afterAll } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { ensureChromium } from "./chromium.ts";
import { CLUSTER_PROBLEM_VAR, clusterProblem, startTestCluster } from "./redis-cluster.ts";
import { inTestDirs, selectTestFiles } from "./select.ts";

const TEST_ROOT = resolve(import.meta.dir, "..");
const TEST_FILE = /(\.|_)(test|spec)\.(c|m)?[jt]sx?$/;
/** Test files under these folders of test/ may talk to a Redis Cluster; those under browser/ drive Chromium. */
const CLUSTER_DIRS = ["contract", "e2e"];
const BROWSER_DIRS = ["browser"];

const note = (line: string) => console.error(`test setup: ${line}`);

/** The arguments after `test` on this process's command line, or null when they cannot be read. */
function bunTestArgs(): string[] | null {
  try {
    const argv = readFileSync("/proc/self/cmdline", "utf8").split("\0").filter(Boolean);
    const at = argv.indexOf("test");
    return at < 0 ? null : argv.slice(at + 1);
  } catch {
    return null;
  }
}

async function provideCluster(): Promise<void> {
  const named = process.env.REDIS_CLUSTER_NODES_TEST;
  if (named) {
    const problem = await clusterProblem(named);
    if (problem === null) return;
    note(`REDIS_CLUSTER_NODES_TEST=${named} is not a healthy cluster (${problem}); starting a private one`);
  }
  try {
    const cluster = await startTestCluster();
    process.env.REDIS_CLUSTER_NODES_TEST = cluster.nodes;
    afterAll(() => cluster.stop());
    note(`Redis Cluster ${cluster.nodes} for this run (stopped when it ends)`);
  } catch (err) {
    const problem = `no Redis Cluster for the tests: ${(err as Error).message}`;
    process.env[CLUSTER_PROBLEM_VAR] = problem;
    note(problem);
  }
}

process.env.DATABASE_URL_TEST ||= process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
process.env.REDIS_URL_TEST ||= process.env.REDIS_URL || "redis://127.0.0.1:6379";

const allTestFiles = [...new Bun.Glob("**/*").scanSync({ cwd: TEST_ROOT, absolute: true })].filter((f) => TEST_FILE.test(f));
const args = bunTestArgs();
const files = args === null ? allTestFiles : selectTestFiles(args, allTestFiles, process.cwd());

if (inTestDirs(files, CLUSTER_DIRS, TEST_ROOT)) await provideCluster();
if (inTestDirs(files, BROWSER_DIRS, TEST_ROOT)) {
  const problem = ensureChromium();
  if (problem) note(problem);
}

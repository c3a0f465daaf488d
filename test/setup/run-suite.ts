/**
 * `npm test`: the whole suite (or the files its arguments name) in parallel `bun test` workers, so the files that
 * mostly wait on the processes they start wait side by side.
 *
 *   npm test                              # every file, WORKERS at a time, slowest first (timings.json)
 *   npm test -- test/unit --parallel=1    # any `bun test` argument passes through; given ones win
 *   npm test -- --update-timings          # also rewrites timings.json with this run's durations
 *
 * Each `--parallel` worker runs the preload itself (per file with --isolate), so what the files share is provided
 * here once, before the workers start, and named to them in the environment (test/setup/provide.ts): the Redis
 * Cluster, Chromium. The output is `bun test`'s own: each file's results together, one summary, one JUnit report
 * (--reporter=junit). Nothing outlives the run: `bun test` gets --no-orphans (it ends when this process does,
 * however that happens), and the cluster's nodes stop when this process's end of their pipe closes.
 */
import { availableParallelism } from "node:os";
import { join, relative } from "node:path";
import { allTestFiles, note, provideServices, RUNNER_VAR, TEST_ROOT } from "./provide.ts";
import { selectTestFiles } from "./select.ts";

/**
 * Files at a time: three per core. Run one at a time, the files kept a 2-core machine about half as busy as one core
 * (they wait on the servers, browsers and timers they start). Measured on a quiet 2-core machine with the whole
 * suite (2,491 tests): 4 workers took 178 s with the cores partly idle; 6 took 143–149 s with them busy 294 of 298
 * CPU-seconds, every test passing in each run. More workers cannot help once the cores are full.
 */
export const WORKERS = 3 * availableParallelism();
/** Per-file durations measured on this machine: the slowest files start first, so no worker ends long after. */
export const TIMINGS = join(TEST_ROOT, "setup/timings.json");

/**
 * The `bun test` arguments of a run given `args`: theirs, plus the runner's defaults they do not override.
 * `--no-isolate`: a worker loads a module once for all its files, as a plain `bun test` does for the whole run (a
 * fresh global per file loads the control plane again for each: a quarter more CPU for the in-process tests).
 */
export function bunTestArgs(args: string[]): string[] {
  const given = (flag: string) => args.some((a) => a === flag || a.startsWith(`${flag}=`));
  return [
    ...(given("--parallel") ? [] : [`--parallel=${WORKERS}`]),
    ...(given("--timings") ? [] : [`--timings=${relative(process.cwd(), TIMINGS)}`]),
    ...(given("--isolate") || given("--no-isolate") ? [] : ["--no-isolate"]),
    ...(given("--no-orphans") ? [] : ["--no-orphans"]),
    ...args,
  ];
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const stop = await provideServices(selectTestFiles(args, allTestFiles(), process.cwd()), "this run");
  process.env[RUNNER_VAR] = "1";
  const testArgs = bunTestArgs(args);
  note(`bun test ${testArgs.join(" ")}`);
  const proc = Bun.spawn([process.execPath, "test", ...testArgs], { env: process.env, stdio: ["inherit", "inherit", "inherit"] });
  const code = await proc.exited;
  await stop();
  process.exit(proc.signalCode ? 1 : code);
}

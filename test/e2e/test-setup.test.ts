/**
 * The test setup that `npm test` relies on (test/setup/services.ts, preloaded into every `bun test` run): a run
 * whose tests need a Redis Cluster and names none gets a private one on free ports, and nothing of it (no
 * redis-server, no temp dir) is left once the run ends: not when its tests fail, not when the runner is killed.
 * A healthy cluster named in REDIS_CLUSTER_NODES_TEST is used as is. Browser tests fail, not skip, with the
 * setup's reason when there is no Chromium. Plus the setup's decisions: which files a run has, the slots, apt-get.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../helpers/server.ts";
import { waitFor } from "../helpers/scale.ts";
import { aptFailure, aptRunner } from "../setup/apt.ts";
import { clusterProblem, slotRanges } from "../setup/redis-cluster.ts";
import { bunTestArgs, WORKERS } from "../setup/run-suite.ts";
import { inTestDirs, selectTestFiles } from "../setup/select.ts";

const PROBE = "./test/e2e/fixtures/cluster-probe.ts";

/** Probe runs of the current test: one a failed expectation left running is killed (its cluster goes with it). */
const probes: Array<ReturnType<typeof Bun.spawn>> = [];
afterEach(() => {
  for (const proc of probes.splice(0)) proc.kill("SIGKILL");
});

interface ProbeRun {
  proc: ReturnType<typeof Bun.spawn>;
  /** The probe's line: the cluster it was given, its state and the first node's dir. */
  cluster: Promise<{ nodes: string; state: string; dir: string }>;
  output: Promise<string>;
}

/** `bun test` of the probe file, with `env` over this runner's environment (a key set to undefined is removed). */
function runProbe(end: "pass" | "fail" | "hang", env: Record<string, string | undefined> = {}): ProbeRun {
  const merged: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, PROBE_END: end, ...env })) if (v !== undefined) merged[k] = v;
  const proc = Bun.spawn([process.execPath, "test", PROBE], { cwd: REPO_ROOT, env: merged, stdout: "pipe", stderr: "pipe" });
  probes.push(proc);
  let text = "";
  let found: (line: string) => void;
  const line = new Promise<string>((resolve) => (found = resolve));
  const read = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    const reader = stream.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      text += decoder.decode(chunk.value, { stream: true });
      const json = text.split("\n").find((l) => l.startsWith('{"nodes"'));
      if (json) found(json);
    }
  };
  const output = Promise.all([read(proc.stdout), read(proc.stderr)]).then(() => text);
  const cluster = Promise.race([line, output.then((o) => Promise.reject(new Error(`the probe printed no cluster\n${o}`)))]).then((l) => JSON.parse(l));
  return { proc, cluster, output };
}

/** redis-server processes serving any of `nodes`' ports. */
function redisServersOf(nodes: string): string[] {
  const ports = nodes.split(",").map((n) => n.split(":")[1]);
  const processes = Bun.spawnSync(["ps", "-e", "-o", "args="]).stdout.toString().split("\n");
  return processes.filter((p) => p.startsWith("redis-server") && ports.some((port) => p.includes(`:${port} `) || p.endsWith(`:${port}`)));
}

describe("the Redis Cluster of a run", () => {
  test("none named: a private one on free ports, gone with its dir when the run ends with a failed test", async () => {
    const run = runProbe("fail", { REDIS_CLUSTER_NODES_TEST: undefined });
    const cluster = await run.cluster;
    expect(cluster.state).toBe("ok");
    expect(cluster.nodes).toMatch(/^127\.0\.0\.1:\d+,127\.0\.0\.1:\d+,127\.0\.0\.1:\d+$/);
    expect(await run.proc.exited).toBe(1);
    expect(await run.output).toContain("failed on purpose");
    expect(redisServersOf(cluster.nodes)).toEqual([]);
    expect(existsSync(cluster.dir)).toBe(false);
  }, 30_000);

  test("none named: gone with its dir when the runner is killed (SIGKILL) mid-run", async () => {
    const run = runProbe("hang", { REDIS_CLUSTER_NODES_TEST: undefined });
    const cluster = await run.cluster;
    expect(redisServersOf(cluster.nodes)).toHaveLength(3);
    run.proc.kill("SIGKILL");
    await run.proc.exited;
    await waitFor("the killed run's redis-servers and dir gone", () => redisServersOf(cluster.nodes).length === 0 && !existsSync(cluster.dir), 5_000);
  }, 30_000);

  test("a healthy one named in REDIS_CLUSTER_NODES_TEST is used, and left running", async () => {
    const named = process.env.REDIS_CLUSTER_NODES_TEST!;
    expect(await clusterProblem(named)).toBeNull(); // this runner's own, from the same setup
    const run = runProbe("pass");
    expect((await run.cluster).nodes).toBe(named);
    expect(await run.proc.exited).toBe(0);
    expect(await clusterProblem(named)).toBeNull();
  }, 30_000);

  test("the slots are split over the masters without gap or overlap", () => {
    expect(slotRanges(3)).toEqual([[0, 5460], [5461, 10921], [10922, 16383]]);
  });
});

test("browser tests fail, not skip, with the setup's reason when there is no Chromium", async () => {
  const proc = Bun.spawn([process.execPath, "test", "./test/browser/"], {
    cwd: REPO_ROOT,
    env: { ...process.env, CHROMIUM_PATH: "/nonexistent/chromium" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const output = stdout + stderr;
  expect(code).toBe(1);
  expect(output).toContain("error: Chromium for the browser tests is missing at /nonexistent/chromium: CHROMIUM_PATH names a file");
  expect(output).toMatch(/^ 0 pass$/m);
  expect(output).not.toMatch(/^ [1-9]\d* skip$/m);
}, 30_000);

describe("npm test's runner (test/setup/run-suite.ts)", () => {
  test("its parallel workers use the one cluster it started, gone with its dir when the run ends", async () => {
    const { REDIS_CLUSTER_NODES_TEST: _, ...env } = process.env;
    const proc = Bun.spawn([process.execPath, "test/setup/run-suite.ts", PROBE], { cwd: REPO_ROOT, env: { ...env, PROBE_END: "pass" }, stdout: "pipe", stderr: "pipe" });
    probes.push(proc);
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    const output = stdout + stderr;
    expect([code, output]).toEqual([0, expect.stringContaining(" 1 pass")]);
    const started = [...output.matchAll(/test setup: Redis Cluster (\S+) for (.+) \(/g)].map((m) => [m[1], m[2]]);
    const probed = JSON.parse(output.split("\n").find((l) => l.startsWith('{"nodes"'))!);
    expect(started).toEqual([[probed.nodes, "this run"]]);
    expect(redisServersOf(probed.nodes)).toEqual([]);
    expect(existsSync(probed.dir)).toBe(false);
  }, 30_000);

  test("a run of files that need no cluster starts none, in the runner or its workers", async () => {
    const { REDIS_CLUSTER_NODES_TEST: _, ...env } = process.env;
    const proc = Bun.spawn([process.execPath, "test/setup/run-suite.ts", "test/unit/slug-of.test.ts"], { cwd: REPO_ROOT, env, stdout: "pipe", stderr: "pipe" });
    probes.push(proc);
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect([code, stdout + stderr]).toEqual([0, expect.not.stringContaining("Redis Cluster")]);
  }, 30_000);

  test("adds its workers, timings, --no-isolate and --no-orphans to bun test's arguments unless they are given", () => {
    const defaults = [`--parallel=${WORKERS}`, "--timings=test/setup/timings.json", "--no-isolate", "--no-orphans"];
    expect(bunTestArgs(["--timeout", "60000"])).toEqual([...defaults, "--timeout", "60000"]);
    const ci = ["--no-orphans", "--reporter=junit", "--reporter-outfile=.tmp/junit.xml"];
    expect(bunTestArgs(ci)).toEqual([...defaults.slice(0, 3), ...ci]);
    const own = ["--parallel=1", "--timings=t.json", "--isolate", "test/unit"];
    expect(bunTestArgs(own)).toEqual(["--no-orphans", ...own]);
  });
});

describe("which test files a run has", () => {
  const root = "/repo";
  const files = ["/repo/test/unit/a.test.ts", "/repo/test/e2e/b.test.ts", "/repo/test/browser/c.browser.test.ts"];
  const noScript = () => false;

  test("no file named: all of them, flags and their values naming none", () => {
    expect(selectTestFiles([], files, root, noScript)).toEqual(files);
    expect(selectTestFiles(["--timeout", "60000", "--reporter=junit", "--reporter-outfile=.tmp/junit.xml"], files, root, noScript)).toEqual(files);
  });

  test("a folder, a file or a part of a path picks those files", () => {
    expect(selectTestFiles(["test/unit"], files, root, noScript)).toEqual([files[0]]);
    expect(selectTestFiles(["--timeout", "60000", "./test/e2e/b.test.ts"], files, root, noScript)).toEqual([files[1]]);
    expect(selectTestFiles(["browser", "a.test"], files, root, noScript)).toEqual([files[2], files[0]]);
  });

  test("a script named by path that is not a known test file is in the run", () => {
    const isScript = (p: string) => p === "/repo/test/e2e/fixtures/probe.ts";
    expect(selectTestFiles(["./test/e2e/fixtures/probe.ts"], files, root, isScript)).toEqual(["/repo/test/e2e/fixtures/probe.ts"]);
  });

  test("the services follow the folders: contract and e2e get the cluster, browser Chromium", () => {
    const testRoot = join(root, "test");
    expect(inTestDirs([files[0]!], ["contract", "e2e"], testRoot)).toBe(false);
    expect(inTestDirs(files, ["contract", "e2e"], testRoot)).toBe(true);
    expect(inTestDirs([files[1]!], ["browser"], testRoot)).toBe(false);
  });
});

describe("installing Chromium with apt-get", () => {
  test("as root directly, otherwise through passwordless sudo, otherwise not, with the reason", () => {
    expect(aptRunner(0, true, false)).toEqual({ prefix: [] });
    expect(aptRunner(1000, true, true)).toEqual({ prefix: ["sudo", "-n"] });
    expect(aptRunner(1000, true, false)).toEqual({ problem: "not root and no passwordless sudo" });
    expect(aptRunner(0, false, false)).toEqual({ problem: "apt-get not found (not a Debian-like system)" });
  });

  test("a failure is told in one line from apt-get's output", () => {
    // What apt-get prints in a network namespace without a network.
    const offline = [
      "W: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  Temporary failure resolving 'deb.debian.org'",
      "E: Unable to fetch some archives, maybe run apt-get update or try with --fix-missing?",
    ].join("\n");
    expect(aptFailure(offline)).toBe("no network: apt-get could not reach the package mirrors");
    expect(aptFailure("E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 7 (apt-get)")).toBe("another apt-get holds the package lock");
    expect(aptFailure("E: Unable to locate package chromium")).toContain("knows no package `chromium`");
    expect(aptFailure("Reading package lists...\nE: Sub-process /usr/bin/dpkg returned an error code (1)")).toBe("E: Sub-process /usr/bin/dpkg returned an error code (1)");
  });
});

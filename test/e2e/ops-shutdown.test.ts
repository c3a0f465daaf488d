/**
 * Graceful shutdown under load (design §8: no click lost on SIGTERM), however the process is started: Bun run
 * directly (as the Docker image and a systemd unit run it), and the README's npm scripts with the signal sent to
 * the npm process itself (`npm start`, `npm run start:redirector`, `npm run start:control`). While clients keep
 * requesting a short address, SIGTERM stops the server; it exits 0 after finishing the requests in flight and
 * flushing its clicks, npm exits 0 with it, the port is closed and no process of the run is left. Afterwards the
 * link's stats hold every redirect a client received.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { api, createKey, freePort, makeTempDir, REPO_ROOT, startServer, type ApiClient } from "../helpers/server.ts";
import { requirePostgres, requireRedis, startDeployment, waitFor, type Deployment } from "../helpers/scale.ts";

const CLIENTS = 24;
/** Redirects served before the signal: the server really is under load, with CLIENTS requests in flight. */
const LOAD_REDIRECTS = 500;
const LOAD_MAX_MS = 10_000;
const NPM_READY_MS = 20_000;

/**
 * Keeps CLIENTS clients requesting `url` and sends the signal once they have received LOAD_REDIRECTS redirects
 * (or after LOAD_MAX_MS); resolves once the process has exited, to its exit code and the number of redirects the
 * clients received.
 */
async function sigtermUnderLoad(url: string, sendSigterm: () => void, exited: Promise<number>): Promise<{ served: number; code: number }> {
  let served = 0;
  let gone = false;
  void exited.then(() => (gone = true));
  const client = async () => {
    while (!gone) {
      try {
        const res = await fetch(url, { redirect: "manual" });
        await res.arrayBuffer();
        if (res.status === 302) served++;
      } catch {
        // Refused or reset once the server stops accepting: that request was not served.
        await Bun.sleep(5);
      }
    }
  };
  const clients = Array.from({ length: CLIENTS }, client);
  const deadline = Date.now() + LOAD_MAX_MS;
  while (served < LOAD_REDIRECTS && !gone && Date.now() < deadline) await Bun.sleep(10);
  const servedBeforeSignal = served;
  sendSigterm();
  const code = await exited;
  await Promise.all(clients);
  expect(servedBeforeSignal).toBeGreaterThanOrEqual(LOAD_REDIRECTS); // it really was under load
  return { served, code };
}

/**
 * A response can be written and the connection cut before the client reads it: recorded may exceed served by the
 * requests in flight (at most one per client), never fall short of it.
 */
function expectEveryRedirectRecorded(recorded: number, served: number): void {
  expect(recorded).toBeGreaterThanOrEqual(served);
  expect(recorded).toBeLessThanOrEqual(served + CLIENTS);
}

// --- npm scripts -------------------------------------------------------------------------------------------------

interface NpmRun {
  readonly url: string;
  /** The environment npm was started with (PORT and BASE_URL included), for the create-key CLI. */
  readonly env: Record<string, string>;
  /** The npm process: the one a service manager or a terminal would signal. */
  readonly npm: ReturnType<typeof Bun.spawn>;
  /** npm's descendants while the server was up (Bun, and a shell if one stood between them). */
  readonly descendants: number[];
  /** Everything npm and the server wrote, once npm has exited. */
  readonly output: Promise<string>;
}

/** Every process below `pid`, from `ps`. */
function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const line of Bun.spawnSync(["ps", "-e", "-o", "pid=,ppid="]).stdout.toString().trim().split("\n")) {
    const [child, parent] = line.trim().split(/\s+/).map(Number);
    children.set(parent!, [...(children.get(parent!) ?? []), child!]);
  }
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0; ) {
    const kids = children.get(queue.shift()!) ?? [];
    found.push(...kids);
    queue.push(...kids);
  }
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * `npm run <script>` from the repository root on a free port, once its /healthz answers 200. BASE_URL is the
 * server's own address unless `base` names one.
 */
async function startNpmScript(script: string, base: Record<string, string | undefined>): Promise<NpmRun> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) if (value !== undefined) env[name] = value;
  Object.assign(env, { PORT: String(port), BASE_URL: env.BASE_URL || url, LOG_LEVEL: "warn" });
  const npm = Bun.spawn(["npm", "run", "--silent", script], {
    cwd: REPO_ROOT,
    env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const text = Promise.all([new Response(npm.stdout).text(), new Response(npm.stderr).text()]).then((o) => o.join(""));
  // A process npm leaves behind keeps the pipes open: then the output is cut a second after npm's exit.
  const output = npm.exited.then(() => Promise.race([text, Bun.sleep(1_000).then(() => "(output held open by a process left running)")]));
  const deadline = Date.now() + NPM_READY_MS;
  for (;;) {
    if (npm.exitCode !== null) throw new Error(`npm run ${script} exited with ${npm.exitCode} before answering\n${await output}`);
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) }).catch(() => null);
    if (res?.status === 200) break;
    if (Date.now() > deadline) {
      npm.kill("SIGKILL");
      throw new Error(`npm run ${script}: no 200 from /healthz within ${NPM_READY_MS} ms\n${await output}`);
    }
    await Bun.sleep(50);
  }
  return { url, env, npm, descendants: descendantsOf(npm.pid), output };
}

/** After npm has exited: its port is closed and none of its processes is left (any that is, is killed). */
async function expectNothingLeft(run: NpmRun): Promise<void> {
  const answering = await fetch(`${run.url}/healthz`, { signal: AbortSignal.timeout(1_000) }).then(() => true, () => false);
  const left = run.descendants.filter(alive);
  for (const pid of left) process.kill(pid, "SIGKILL");
  expect(run.descendants.length).toBeGreaterThan(0);
  expect({ answering, left }).toEqual({ answering: false, left: [] });
}

// --- tests -------------------------------------------------------------------------------------------------------

const dataDirs: string[] = [];
afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

test("SIGTERM under load: exit 0, and every redirect served is a recorded click", async () => {
  const dataDir = makeTempDir("shutdown");
  dataDirs.push(dataDir);
  const server = await startServer({ dataDir });
  const key = await createKey(server, "shutdown@example.com");
  expect((await api(server, key).post("/api/v1/links", { url: "https://example.com/busy", slug: "busy" })).status).toBe(201);

  const { served, code } = await sigtermUnderLoad(`${server.url}/busy`, () => server.proc.kill("SIGTERM"), server.proc.exited);
  expect(code).toBe(0);

  // Same port, so the same BASE_URL and therefore the same link domain.
  const again = await startServer({ dataDir, port: server.port });
  try {
    const stats = await api(again, key).get("/api/v1/links/busy/stats");
    expect(stats.status).toBe(200);
    const link = await api(again, key).get("/api/v1/links/busy");
    console.log(`SIGTERM under load: ${served} redirects received by clients, ${stats.body.totalClicks} clicks recorded`);
    expectEveryRedirectRecorded(stats.body.totalClicks, served);
    expect(link.body.hits).toBe(stats.body.totalClicks);
  } finally {
    await again.stop();
  }
}, 30_000);

test("npm start, SIGTERM to npm under load: npm and Bun exit 0, nothing left running, every redirect recorded", async () => {
  const dataDir = makeTempDir("npm-start");
  dataDirs.push(dataDir);
  // Variables from the shell that would switch `npm start` to scale mode or another address are blanked.
  const blank = { DATABASE_URL: "", REDIS_URL: "", REDIS_CLUSTER_NODES: "", BASE_URL: "" };
  const run = await startNpmScript("start", { ...process.env, ...blank, DATA_DIR: dataDir });
  const key = await createKey(run, "npm-start@example.com");
  expect((await api(run, key).post("/api/v1/links", { url: "https://example.com/npm", slug: "npm" })).status).toBe(201);

  const { served, code } = await sigtermUnderLoad(`${run.url}/npm`, () => run.npm.kill("SIGTERM"), run.npm.exited);
  await expectNothingLeft(run);
  expect({ code, output: await run.output }).toMatchObject({ code: 0 });

  // Same port, so the same BASE_URL and therefore the same link domain.
  const again = await startServer({ dataDir, port: Number(run.env.PORT) });
  try {
    const stats = await api(again, key).get("/api/v1/links/npm/stats");
    console.log(`npm start, SIGTERM to npm under load: ${served} redirects received, ${stats.body.totalClicks} clicks recorded`);
    expectEveryRedirectRecorded(stats.body.totalClicks, served);
  } finally {
    await again.stop();
  }
}, 40_000);

describe("scale mode through npm: SIGTERM to npm", () => {
  let d: Deployment;
  let c: ApiClient;

  beforeAll(async () => {
    await requirePostgres();
    await requireRedis();
    d = await startDeployment({ redirectors: 0 });
    c = api(d.control, await d.createKey("npm-scale@example.com"));
  }, 30_000);
  afterAll(async () => {
    await d?.stop();
  });

  test("npm run start:redirector under load: npm and Bun exit 0, nothing left, every redirect reaches the stats", async () => {
    expect((await c.post("/api/v1/links", { url: "https://example.com/queued", slug: "queued" })).status).toBe(201);
    const run = await startNpmScript("start:redirector", d.control.env);
    const { served, code } = await sigtermUnderLoad(`${run.url}/queued`, () => run.npm.kill("SIGTERM"), run.npm.exited);
    await expectNothingLeft(run);
    expect({ code, output: await run.output }).toMatchObject({ code: 0 });

    const total = async () => (await c.get("/api/v1/links/queued/stats")).body.totalClicks as number;
    await waitFor(`${served} clicks in the stats`, async () => (await total()) >= served, 15_000);
    console.log(`npm run start:redirector, SIGTERM to npm under load: ${served} redirects received, ${await total()} clicks recorded`);
    expectEveryRedirectRecorded(await total(), served);
  }, 40_000);

  test("npm run start:control: npm and Bun exit 0, nothing left", async () => {
    const run = await startNpmScript("start:control", d.control.env);
    run.npm.kill("SIGTERM");
    const code = await run.npm.exited;
    await expectNothingLeft(run);
    expect({ code, output: await run.output }).toMatchObject({ code: 0 });
  }, 30_000);
});

/**
 * End-to-end harness: runs the real server as a child process (the way users run it) and talks to it over HTTP.
 *
 *   const server = await startServer();                 // embedded mode, fresh temp DATA_DIR, free port
 *   const key = await createKey(server, "a@example.com");
 *   const res = await api(server, key).post("/api/v1/links", { url: "https://example.com" });
 *   await server.stop();                                 // SIGTERM, resolves to the exit code
 *
 * Children are started with Bun's `--no-orphans`, so a server a test forgot to stop dies with the test runner
 * (bun test runs no `process.on("exit")` hooks, so the harness cannot rely on one). Temp dirs of runners that
 * are gone are swept when this module loads.
 */
import type { Subprocess } from "bun";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** Repository root: entries and the create-key CLI are resolved from here, and children run with it as cwd. */
export const REPO_ROOT = resolve(import.meta.dir, "../..");

export const DEFAULT_ENTRY = "control/main.ts";
const CREATE_KEY_CLI = "control/keys/create-key-cli.ts";

const READY_TIMEOUT_MS = 15_000;
const READY_POLL_MS = 50;
const STOP_GRACE_MS = 10_000;
const CLI_TIMEOUT_MS = 30_000;

/**
 * Every variable shared/config.ts reads. The harness removes them from the inherited environment so a developer's
 * shell (say, DATABASE_URL exported for the Postgres contract tests) cannot silently switch a test to another mode.
 */
export const CONFIG_VARS = [
  "PORT",
  "BASE_URL",
  "DATA_DIR",
  "DATABASE_URL",
  "REDIS_URL",
  "REDIS_CLUSTER_NODES",
  "COUNTRY_HEADER",
  "GEOIP_DB",
  "TRUSTED_PROXIES",
  "WEBHOOK_ALLOW_PRIVATE",
  "SIGNUP",
  "RATE_LIMIT_PER_MINUTE",
  "LOG_LEVEL",
  "METRICS_TOKEN",
  "DATABASE_SCHEMA",
  "REDIS_PREFIX",
  "OWN_HOSTS",
  "CLICK_RETENTION_DAYS",
];

export interface StartServerOptions {
  /** Extra environment, applied last (wins over the harness defaults, e.g. LOG_LEVEL or BASE_URL). */
  env?: Record<string, string>;
  /** Arguments after the entry. Default: `["--embedded"]` for control/main.ts, `[]` for any other entry. */
  args?: string[];
  /** Script to run, relative to the repo root or absolute. Default: control/main.ts. */
  entry?: string;
  /** Use this DATA_DIR instead of a fresh temp dir. The caller owns it: stop() leaves it in place. */
  dataDir?: string;
  /** Listen on this port instead of a free one (e.g. to start a second process on a known port). */
  port?: number;
}

export interface TestServer {
  /** `http://127.0.0.1:<port>`; also passed as BASE_URL unless opts.env overrides it. */
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** The full environment the process was started with (createKey reuses it). */
  readonly env: Record<string, string>;
  /** The current child process (a new one after restart()). */
  readonly proc: Subprocess<"ignore", "pipe", "pipe">;
  /** True until the current process has exited. */
  readonly running: boolean;
  /** Everything the current process wrote so far. */
  readonly stdout: string;
  readonly stderr: string;
  /**
   * Sends `signal` (default SIGTERM), waits for the exit (SIGKILL after 10 s) and resolves to the exit code
   * (128 + signal number when the process died of a signal). Removes the temp DATA_DIR the harness created.
   * Safe to call more than once and after kill().
   */
  stop(signal?: NodeJS.Signals): Promise<number>;
  /** SIGKILL, no grace. Keeps DATA_DIR so restart() can check what survived; call stop() afterwards to clean up. */
  kill(): Promise<number>;
  /**
   * Graceful stop (if still running), then a new process on the same port and DATA_DIR, waiting for /healthz.
   * `env` overrides are merged into the stored environment for this and later starts.
   */
  restart(env?: Record<string, string>): Promise<TestServer>;
}

// --- temp dirs ---------------------------------------------------------------------------------------------------

/** All temp dirs of one runner live under `<tmp>/clink-e2e/<runner pid>-…`, so leftovers can be attributed. */
const TEMP_ROOT = join(tmpdir(), "clink-e2e");

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes temp dirs left by runners that no longer exist (killed runs, tests that never called stop()). */
function sweepStaleTempDirs(): void {
  let entries: string[];
  try {
    entries = readdirSync(TEMP_ROOT);
  } catch {
    return;
  }
  for (const name of entries) {
    const pid = Number(name.split("-")[0]);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !processAlive(pid)) {
      rmSync(join(TEMP_ROOT, name), { recursive: true, force: true });
    }
  }
}

sweepStaleTempDirs();

/** A fresh, empty directory owned by this runner; `label` only makes it recognisable. */
export function makeTempDir(label = "data"): string {
  mkdirSync(TEMP_ROOT, { recursive: true });
  return mkdtempSync(join(TEMP_ROOT, `${process.pid}-${label}-`));
}

// --- ports and processes -----------------------------------------------------------------------------------------

/** Asks the OS for a free TCP port on 127.0.0.1 (bind to 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => (port ? resolvePort(port) : reject(new Error("could not obtain a free port"))));
    });
  });
}

/** The runner's environment without any config variable (see CONFIG_VARS). */
export function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !CONFIG_VARS.includes(name)) env[name] = value;
  }
  return env;
}

/** Collects a child's output stream into a string as it arrives. */
function collect(stream: ReadableStream<Uint8Array>, append: (text: string) => void): void {
  const decoder = new TextDecoder();
  const reader = stream.getReader();
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        append(decoder.decode(value, { stream: true }));
      }
    } catch {
      // The stream errors only when the process is gone; what was read is kept.
    }
  })();
}

interface Running {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  out: { stdout: string; stderr: string };
  exitCode: number | null;
}

function spawnProcess(cmd: string[], env: Record<string, string>): Running {
  const proc = Bun.spawn(cmd, { cwd: REPO_ROOT, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const running: Running = { proc, out: { stdout: "", stderr: "" }, exitCode: null };
  collect(proc.stdout, (t) => (running.out.stdout += t));
  collect(proc.stderr, (t) => (running.out.stderr += t));
  void proc.exited.then((code) => (running.exitCode = code));
  return running;
}

function describeOutput(r: Running): string {
  const tail = (s: string) => s.trim().split("\n").slice(-40).join("\n");
  return `--- stderr ---\n${tail(r.out.stderr) || "(empty)"}\n--- stdout ---\n${tail(r.out.stdout) || "(empty)"}`;
}

/** Resolves once GET /healthz answers 200; rejects if the process exits first or 15 s pass. */
async function waitHealthy(r: Running, url: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (r.exitCode !== null) {
      // Give the output collectors a moment to read the last bytes (the error message we want to show).
      await Bun.sleep(50);
      throw new Error(`server exited with code ${r.exitCode} before becoming healthy\n${describeOutput(r)}`);
    }
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await Bun.sleep(READY_POLL_MS);
  }
  r.proc.kill("SIGKILL");
  await r.proc.exited;
  throw new Error(`server did not answer GET /healthz with 200 within ${READY_TIMEOUT_MS} ms\n${describeOutput(r)}`);
}

async function waitExit(r: Running, signal: NodeJS.Signals): Promise<number> {
  if (r.exitCode !== null) return r.exitCode;
  r.proc.kill(signal);
  const timer = setTimeout(() => r.proc.kill("SIGKILL"), STOP_GRACE_MS);
  try {
    return await r.proc.exited;
  } finally {
    clearTimeout(timer);
  }
}

const ADDRESS_IN_USE = /EADDRINUSE|address already in use|port .* in use/i;

// --- startServer -------------------------------------------------------------------------------------------------

/**
 * Starts `bun --no-orphans run <entry> <args>` from the repo root and waits until GET /healthz answers 200.
 * Environment: the runner's, minus every config variable, plus PORT, BASE_URL, DATA_DIR, LOG_LEVEL=warn, then
 * opts.env. For scale mode pass DATABASE_URL and REDIS_URL (or REDIS_CLUSTER_NODES) in opts.env.
 */
export async function startServer(opts: StartServerOptions = {}): Promise<TestServer> {
  const entry = opts.entry ?? DEFAULT_ENTRY;
  const args = opts.args ?? (entry === DEFAULT_ENTRY ? ["--embedded"] : []);
  const ownsDataDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? makeTempDir();
  const cmd = [process.execPath, "--no-orphans", "run", entry, ...args];

  const envFor = (port: number): Record<string, string> => ({
    ...baseEnv(),
    PORT: String(port),
    BASE_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
    ...opts.env,
  });

  // A free port can be taken by someone else between our probe and the server's bind: retry with a new one.
  let port = 0;
  let env: Record<string, string> = {};
  let current: Running | undefined;
  for (let attempt = 1; ; attempt++) {
    port = opts.port ?? (await freePort());
    env = envFor(port);
    current = spawnProcess(cmd, env);
    try {
      await waitHealthy(current, `http://127.0.0.1:${port}`);
      break;
    } catch (err) {
      const retryable = opts.port === undefined && attempt < 3 && ADDRESS_IN_USE.test(current.out.stderr + current.out.stdout);
      if (!retryable) {
        if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true });
        throw err;
      }
    }
  }

  let running: Running = current;
  let removed = false;
  const url = `http://127.0.0.1:${port}`;

  const server: TestServer = {
    url,
    port,
    dataDir,
    get env() {
      return env;
    },
    get proc() {
      return running.proc;
    },
    get running() {
      return running.exitCode === null;
    },
    get stdout() {
      return running.out.stdout;
    },
    get stderr() {
      return running.out.stderr;
    },
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      const code = await waitExit(running, signal);
      if (ownsDataDir && !removed) {
        removed = true;
        rmSync(dataDir, { recursive: true, force: true });
      }
      return code;
    },
    async kill() {
      return waitExit(running, "SIGKILL");
    },
    async restart(overrides?: Record<string, string>) {
      if (removed) throw new Error("restart() after stop(): the temp DATA_DIR is gone; pass opts.dataDir to keep it");
      await waitExit(running, "SIGTERM");
      if (overrides) env = { ...env, ...overrides };
      running = spawnProcess(cmd, env);
      await waitHealthy(running, url);
      return server;
    },
  };
  return server;
}

// --- accounts and keys ------------------------------------------------------------------------------------------

/**
 * What `npm run create-key -- --email EMAIL [--name NAME]` does with the server's environment (same DATA_DIR, and
 * DATABASE_URL/REDIS_URL in scale mode), done in this process: the CLI's steps (control/keys/create-key-cli.ts:
 * loadConfig, openStorage, migrate, the account when new, createApiKey) with the same service functions, without a
 * Bun start per key (about half a second of CPU; the suite makes some sixty). Returns the key and, for a new
 * account, its password. The CLI itself is run by createKeyWithCli (the harness test) and the create-key tests.
 */
export async function createAccountAndKey(
  server: { env: Record<string, string> },
  email: string,
  name = "cli",
): Promise<{ key: string; password: string | null }> {
  const [{ loadConfig }, { openStorage }, { newId, newToken }, accounts, { createApiKey }] = await Promise.all([
    import("../../shared/config.ts"),
    import("../../shared/adapters/open.ts"),
    import("../../shared/ids.ts"),
    import("../../control/accounts/service.ts"),
    import("../../control/keys/service.ts"),
  ]);
  const config = loadConfig(server.env);
  const { store, hot } = await openStorage(config);
  try {
    await store.migrate();
    const deps = { config, store, hot, now: Date.now };
    let account = await store.getAccountByEmail(accounts.normaliseEmail(email));
    let password: string | null = null;
    if (!account) {
      password = newToken().slice(0, 20);
      // As createAccount stores it, but Argon2id at its lowest cost (a valid hash that signs in the same way): at
      // the product's cost each of the suite's ~100 accounts took about 100 ms of CPU. The CLI's own path is run
      // by createKeyWithCli's tests; createAccount's by test/service.
      const made = { id: newId(), email: accounts.normaliseEmail(email), createdAt: Date.now(), passwordHash: await Bun.password.hash(password, { algorithm: "argon2id", memoryCost: 64, timeCost: 1 }) };
      if (!(await store.createAccount(made))) throw new Error(`createAccountAndKey: ${email} was registered meanwhile`);
      account = made;
    }
    return { key: (await createApiKey(deps, account.id, name)).key, password };
  } finally {
    await hot.close();
    await store.close();
  }
}

/** An API key for EMAIL (the account made when new), as `npm run create-key` makes it: see createAccountAndKey. */
export async function createKey(server: { env: Record<string, string> }, email: string, name?: string): Promise<string> {
  return (await createAccountAndKey(server, email, name)).key;
}

/**
 * Runs `npm run create-key -- --email EMAIL [--name NAME]`'s script with the server's environment (same DATA_DIR,
 * and DATABASE_URL/REDIS_URL in scale mode) and returns the key it prints alone on its last line.
 */
export async function createKeyWithCli(server: { env: Record<string, string> }, email: string, name?: string): Promise<string> {
  const cmd = [process.execPath, "run", CREATE_KEY_CLI, "--email", email, ...(name === undefined ? [] : ["--name", name])];
  const proc = Bun.spawn(cmd, { cwd: REPO_ROOT, env: server.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), CLI_TIMEOUT_MS);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]).finally(() => clearTimeout(timer));
  if (code !== 0) throw new Error(`create-key exited with code ${code}\n--- stderr ---\n${stderr}\n--- stdout ---\n${stdout}`);
  const lines = stdout.split("\n").map((l) => l.trim()).filter(Boolean);
  const key = lines[lines.length - 1] ?? "";
  if (!key.startsWith("ck_")) throw new Error(`create-key did not print a ck_ key on its last line\n--- stdout ---\n${stdout}`);
  return key;
}

// --- HTTP --------------------------------------------------------------------------------------------------------

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  /** Parsed JSON when the response is JSON (incl. problem+json), the text otherwise, null when empty. */
  body: T;
}

export interface ApiClient {
  get<T = any>(path: string, init?: RequestInit): Promise<ApiResponse<T>>;
  post<T = any>(path: string, body?: unknown, init?: RequestInit): Promise<ApiResponse<T>>;
  patch<T = any>(path: string, body?: unknown, init?: RequestInit): Promise<ApiResponse<T>>;
  del<T = any>(path: string, init?: RequestInit): Promise<ApiResponse<T>>;
  /** Any request as given (body untouched); the Bearer key is added unless init sets Authorization. */
  raw<T = any>(path: string, init?: RequestInit): Promise<ApiResponse<T>>;
}

async function readBody(res: Response): Promise<any> {
  const text = await res.text();
  if (text === "") return null;
  if ((res.headers.get("content-type") ?? "").includes("json")) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

/**
 * A small fetch wrapper for the REST API (and any other path): `path` is relative to the server's url (or a full
 * URL). Redirects are never followed, so a short address answers with its own status and Location.
 */
export function api(server: { url: string }, key?: string): ApiClient {
  const request = async (path: string, init: RequestInit = {}): Promise<ApiResponse> => {
    const headers = new Headers(init.headers);
    if (key !== undefined && !headers.has("authorization")) headers.set("authorization", `Bearer ${key}`);
    const target = /^https?:\/\//.test(path) ? path : `${server.url}${path}`;
    const res = await fetch(target, { redirect: "manual", ...init, headers });
    return { status: res.status, headers: res.headers, body: await readBody(res) };
  };
  const withJson = (method: string, body: unknown, init: RequestInit = {}): RequestInit => {
    const headers = new Headers(init.headers);
    if (body !== undefined && !headers.has("content-type")) headers.set("content-type", "application/json");
    return { ...init, method, headers, body: body === undefined ? undefined : JSON.stringify(body) };
  };
  return {
    get: (path, init) => request(path, { ...init, method: "GET" }),
    post: (path, body, init) => request(path, withJson("POST", body, init)),
    patch: (path, body, init) => request(path, withJson("PATCH", body, init)),
    del: (path, init) => request(path, { ...init, method: "DELETE" }),
    raw: (path, init) => request(path, init),
  };
}

/**
 * Start-up refuses bad configuration, end to end: each entry point (embedded, control, redirector) run with a
 * bad variable exits with a non-zero code before listening, and its stderr names the variable without ever
 * printing a secret taken from a URL. The embedded default says where its data lives and how to make a key.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { REPO_ROOT, makeTempDir, startServer } from "../helpers/server.ts";

const CONFIG_VARS = [
  "PORT", "BASE_URL", "DATA_DIR", "DATABASE_URL", "DATABASE_SCHEMA", "REDIS_URL", "REDIS_PREFIX", "REDIS_CLUSTER_NODES",
  "COUNTRY_HEADER", "GEOIP_DB", "TRUSTED_PROXIES", "WEBHOOK_ALLOW_PRIVATE", "SIGNUP", "RATE_LIMIT_PER_MINUTE", "LOG_LEVEL",
  "METRICS_TOKEN",
];
const SECRET = "Sup3r-Secret-Pw";
const dataDir = makeTempDir("config");

const ENTRIES = {
  embedded: ["control/main.ts", "--embedded"],
  control: ["control/main.ts", "--control"],
  redirector: ["redirector/main.ts"],
} as const;

/** Runs an entry with `env` on top of a clean environment; it must exit by itself within 10 s. */
async function runWith(entry: keyof typeof ENTRIES, env: Record<string, string>) {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !CONFIG_VARS.includes(k)) base[k] = v;
  const proc = Bun.spawn([process.execPath, "--no-orphans", "run", ...ENTRIES[entry]], {
    cwd: REPO_ROOT,
    env: { ...base, DATA_DIR: dataDir, LOG_LEVEL: "info", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

const CASES: { name: string; env: Record<string, string>; variable: string; entries?: (keyof typeof ENTRIES)[] }[] = [
  { name: "PORT that is not a number", env: { PORT: "eighty" }, variable: "PORT" },
  { name: "PORT out of range", env: { PORT: "70000" }, variable: "PORT", entries: ["embedded"] },
  { name: "BASE_URL that is not a URL", env: { BASE_URL: "not a url" }, variable: "BASE_URL", entries: ["embedded"] },
  { name: "BASE_URL with another scheme and a password", env: { BASE_URL: `ftp://admin:${SECRET}@files.example.com/` }, variable: "BASE_URL" },
  { name: "DATABASE_URL without REDIS_URL", env: { DATABASE_URL: `postgres://clink:${SECRET}@127.0.0.1:5432/clink` }, variable: "REDIS_URL" },
  { name: "REDIS_URL without DATABASE_URL", env: { REDIS_URL: `redis://:${SECRET}@127.0.0.1:6379` }, variable: "DATABASE_URL" },
  {
    name: "DATABASE_URL of another database",
    env: { DATABASE_URL: `mysql://clink:${SECRET}@127.0.0.1/clink`, REDIS_URL: `redis://:${SECRET}@127.0.0.1:6379` },
    variable: "DATABASE_URL",
  },
  { name: "SIGNUP neither open nor closed", env: { SIGNUP: "sometimes" }, variable: "SIGNUP", entries: ["embedded"] },
  { name: "LOG_LEVEL unknown", env: { LOG_LEVEL: "chatty" }, variable: "LOG_LEVEL", entries: ["embedded"] },
  // Shaped like an address but not one: these got past the check and crashed later with a stack trace.
  { name: "TRUSTED_PROXIES of hex letters", env: { TRUSTED_PROXIES: "cafe" }, variable: "TRUSTED_PROXIES", entries: ["embedded", "redirector"] },
  { name: "TRUSTED_PROXIES with a prefix over 32", env: { TRUSTED_PROXIES: "10.0.0.0/8, 10.0.0.0/99" }, variable: "TRUSTED_PROXIES", entries: ["embedded"] },
];

describe("bad configuration stops start-up with a message naming the variable", () => {
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  for (const c of CASES) {
    for (const entry of c.entries ?? (["embedded", "control", "redirector"] as const)) {
      test(`${entry}: ${c.name} → exit ≠ 0, stderr names ${c.variable}, no secret printed`, async () => {
        const r = await runWith(entry, c.env);
        expect(r.code).not.toBe(0);
        expect(r.stderr).toContain(`Invalid configuration: ${c.variable}`);
        expect(r.stdout).not.toContain("listening");
        expect(r.stdout + r.stderr).not.toContain(SECRET);
      });
    }
  }

  test("control and redirector refuse to start without scale-mode storage", async () => {
    for (const entry of ["control", "redirector"] as const) {
      const r = await runWith(entry, {});
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain("DATABASE_URL");
    }
  });
});

test("the embedded default prints where its data lives and how to create the first key", async () => {
  const server = await startServer();
  try {
    expect(server.stdout).toContain(`data: SQLite at ${server.dataDir}/clink.sqlite`);
    expect(server.stdout).toContain("npm run create-key -- --email");
  } finally {
    await server.stop();
  }
});

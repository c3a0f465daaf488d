/**
 * Start-up refuses bad configuration: each bad variable is refused by the configuration every entry point loads
 * (shared/config.ts's loadConfig, in process here) with a message naming the variable and never a secret taken
 * from a URL; and each entry point (embedded, control, redirector), run with a bad variable, exits with a
 * non-zero code before listening and prints that message, secret-free. The embedded default says where its data
 * lives and how to make a key.
 * The Docker files, read as files (no Docker daemon here): base images pinned, Bun the version package-lock.json
 * installs, and every variable of the configuration table (docs/configuration.md) passed through docker-compose.yml.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, makeTempDir, startServer } from "../helpers/server.ts";
import { runToExit } from "../helpers/run-to-exit.ts";
import { DEFAULT_EVENT_WEBHOOK_SETTINGS, EVENT_WEBHOOK_ENV } from "../../control/webhooks/settings.ts";
import { ConfigError, loadConfig } from "../../shared/config.ts";

const SECRET = "Sup3r-Secret-Pw";
const dataDir = makeTempDir("config");

const ENTRIES = {
  embedded: ["control/main.ts", "--embedded"],
  control: ["control/main.ts", "--control"],
  redirector: ["redirector/main.ts"],
} as const;

/** Runs an entry with `env` on top of a clean environment; it must exit by itself within 10 s. */
const runWith = (entry: keyof typeof ENTRIES, env: Record<string, string>) =>
  runToExit([...ENTRIES[entry]], { env: { DATA_DIR: dataDir, LOG_LEVEL: "info", ...env } });

const CASES: { name: string; env: Record<string, string>; variable: string }[] = [
  { name: "PORT that is not a number", env: { PORT: "eighty" }, variable: "PORT" },
  { name: "PORT out of range", env: { PORT: "70000" }, variable: "PORT" },
  { name: "BASE_URL that is not a URL", env: { BASE_URL: "not a url" }, variable: "BASE_URL" },
  { name: "BASE_URL with another scheme and a password", env: { BASE_URL: `ftp://admin:${SECRET}@files.example.com/` }, variable: "BASE_URL" },
  { name: "DATABASE_URL without REDIS_URL", env: { DATABASE_URL: `postgres://clink:${SECRET}@127.0.0.1:5432/clink` }, variable: "REDIS_URL" },
  { name: "REDIS_URL without DATABASE_URL", env: { REDIS_URL: `redis://:${SECRET}@127.0.0.1:6379` }, variable: "DATABASE_URL" },
  {
    name: "DATABASE_URL of another database",
    env: { DATABASE_URL: `mysql://clink:${SECRET}@127.0.0.1/clink`, REDIS_URL: `redis://:${SECRET}@127.0.0.1:6379` },
    variable: "DATABASE_URL",
  },
  { name: "SIGNUP neither open nor closed", env: { SIGNUP: "sometimes" }, variable: "SIGNUP" },
  { name: "LOG_LEVEL unknown", env: { LOG_LEVEL: "chatty" }, variable: "LOG_LEVEL" },
  // Shaped like an address but not one: these got past the check and crashed later with a stack trace.
  { name: "TRUSTED_PROXIES of hex letters", env: { TRUSTED_PROXIES: "cafe" }, variable: "TRUSTED_PROXIES" },
  { name: "TRUSTED_PROXIES with a prefix over 32", env: { TRUSTED_PROXIES: "10.0.0.0/8, 10.0.0.0/99" }, variable: "TRUSTED_PROXIES" },
];

/** The configuration's refusal of `env`: the line an entry point prints before it exits. */
function refusal(env: Record<string, string>): string {
  try {
    loadConfig({ DATA_DIR: dataDir, ...env });
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error(`accepted: ${JSON.stringify(env)}`);
}

describe("bad configuration is refused with a message naming the variable, never a secret", () => {
  for (const c of CASES) {
    test(`${c.name} → names ${c.variable}`, () => {
      const message = refusal(c.env);
      expect(message).toStartWith(`Invalid configuration: ${c.variable}`);
      expect(message).not.toContain(SECRET);
    });
  }
});

/**
 * Each entry point stops on that refusal before listening, prints it and nothing secret: one bad variable each (the
 * configuration they load is one function, whose refusals the tests above go through), with a password in it.
 */
const ENTRY_CASES: { entry: keyof typeof ENTRIES; case: string }[] = [
  { entry: "embedded", case: "BASE_URL with another scheme and a password" },
  { entry: "control", case: "DATABASE_URL of another database" },
  { entry: "redirector", case: "DATABASE_URL without REDIS_URL" },
];

describe("bad configuration stops start-up with a message naming the variable", () => {
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  for (const { entry, case: name } of ENTRY_CASES) {
    const c = CASES.find((x) => x.name === name)!;
    test(`${entry}: ${c.name} → exit ≠ 0, stderr names ${c.variable}, no secret printed`, async () => {
      const r = await runWith(entry, c.env);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(`Invalid configuration: ${c.variable}`);
      expect(r.stdout).not.toContain("listening");
      expect(r.stdout + r.stderr).not.toContain(SECRET);
    });
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

describe("Docker files (read as files)", () => {
  const read = (path: string) => readFileSync(join(REPO_ROOT, path), "utf8");
  const compose = Bun.YAML.parse(read("docker-compose.yml")) as {
    services: Record<string, { image?: string; environment?: Record<string, string> }>;
  };

  /** Every `NAME` row of the configuration table (docs/configuration.md; the README shows the most used). */
  function documentedVariables(): string[] {
    const doc = read("docs/configuration.md");
    const start = doc.indexOf("\n## Variables\n");
    const section = doc.slice(start, doc.indexOf("\n## ", start + 1));
    return [...section.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]);
  }

  test("the Dockerfile's base images are exact versions, and its Bun is the one package-lock.json installs", () => {
    const froms = [...read("Dockerfile").matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    const lock = JSON.parse(read("package-lock.json"));
    const bun = lock.packages["node_modules/bun"].version as string;
    const range = JSON.parse(read("package.json")).dependencies.bun as string;
    expect(Bun.semver.satisfies(bun, range)).toBe(true);
    expect(froms).toContain(`oven/bun:${bun}`);
    expect(froms.find((f) => f.startsWith("node:"))).toMatch(/^node:20\.\d+\.\d+-bookworm-slim$/);
  });

  test("compose pins every image it pulls to a version (no bare major, no latest)", () => {
    const pulled = Object.values(compose.services).map((s) => s.image!).filter((i) => i !== "clink:latest");
    expect(pulled.map((i) => i.split(":")[0]).sort()).toEqual(["caddy", "postgres", "redis"]);
    for (const image of pulled) expect(image).toMatch(/^[a-z/]+:\d+\.\d+(\.\d+)?$/);
  });

  test("the configuration table lists every EVENT_WEBHOOK_* setting with its default", () => {
    const doc = read("docs/configuration.md");
    for (const [key, name] of Object.entries(EVENT_WEBHOOK_ENV)) {
      const row = doc.match(new RegExp(`^\\| \`${name}\` \\| ([^|]+) \\|`, "m"));
      expect(row?.[1] ?? `${name} missing`).toBe(`\`${DEFAULT_EVENT_WEBHOOK_SETTINGS[key as keyof typeof EVENT_WEBHOOK_ENV]}\``);
    }
    expect(documentedVariables()).toEqual(expect.arrayContaining(Object.values(EVENT_WEBHOOK_ENV)));
  });

  test("compose passes every documented variable through to the processes that read it", () => {
    const documented = documentedVariables();
    expect(documented).toContain("METRICS_TOKEN");
    expect(documented.length).toBeGreaterThanOrEqual(16);
    // Not passed: DATA_DIR is the embedded default's SQLite directory; scale mode keeps no file.
    // Fixed, not passed: PORT is 3000 inside the network (Caddy and the health checks use it; CLINK_HTTP_PORT publishes).
    // Accounts, the API budget, raw-click and audit-log retention: the redirector has none of them.
    // Event webhooks: the control processes deliver them.
    const controlOnly = ["SIGNUP", "RATE_LIMIT_PER_MINUTE", "CLICK_RETENTION_DAYS", "AUDIT_RETENTION_DAYS", ...Object.values(EVENT_WEBHOOK_ENV)];
    const { control, redirector } = compose.services;
    for (const name of documented.filter((n) => n !== "DATA_DIR")) {
      const services = controlOnly.includes(name) ? { control } : { control, redirector };
      for (const [service, s] of Object.entries(services)) {
        const value = s.environment?.[name];
        expect(value === undefined ? `${service} lacks ${name}` : "").toBe("");
        if (name === "PORT") expect(value).toBe("3000");
        else expect(value).toStartWith(`\${${name}:-`);
      }
    }
  });
});

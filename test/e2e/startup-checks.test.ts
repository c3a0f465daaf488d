/**
 * Start-up checks, for real: a port held by a listener this test opens, a DATABASE_URL naming a database or a
 * role the local Postgres does not have, a Redis nothing answers for. Each entry point refuses with one
 * `Cannot start:` line naming the variable and the fix, exit code 1, no stack trace. Links made under one address
 * and a server started under another give one warning and the server keeps serving; the first-key hint goes once
 * an account exists; create-key explains itself and will not start a database the server would not use.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, api, createKey, freePort, makeTempDir, startServer } from "../helpers/server.ts";
import { PG_URL, REDIS_URL, requirePostgres, requireRedis, startDeployment, waitFor } from "../helpers/scale.ts";
import { runToExit, type Exited } from "../helpers/run-to-exit.ts";

const ENTRIES = {
  embedded: ["control/main.ts", "--embedded"],
  control: ["control/main.ts", "--control"],
  redirector: ["redirector/main.ts"],
} as const;
const dataDir = makeTempDir("startup");
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const rand = () => crypto.randomUUID().replace(/-/g, "").slice(0, 10);
/** PG_URL with another database or user. */
function pgUrlWith(change: (u: URL) => void): string {
  const u = new URL(PG_URL);
  change(u);
  return u.toString();
}

/** The process's output so far once it holds `text`: it is written before /healthz answers, but read through another pipe. */
const outputWith = (server: { stdout: string; stderr: string }, stream: "stdout" | "stderr", text: string) =>
  waitFor(`${stream} containing ${text}`, () => (server[stream].includes(text) ? server[stream] : null), 5_000);

function run(entry: keyof typeof ENTRIES, env: Record<string, string>): Promise<Exited> {
  return runToExit([...ENTRIES[entry]], { env: { DATA_DIR: dataDir, LOG_LEVEL: "info", ...env } });
}

/** Exit 1 before listening, a `Cannot start:` line with every `says`, no stack trace, and nothing else (`alone`). */
function expectRefusal(r: Exited, says: string[], alone = true) {
  const lines = r.stderr.trim().split("\n");
  expect(r.code).toBe(1);
  expect(r.stdout).not.toContain("listening");
  expect(r.stderr).not.toMatch(/^\s+at /m);
  const refusal = lines.filter((l) => l.startsWith("Cannot start: "));
  expect(refusal).toHaveLength(1);
  for (const s of says) expect(refusal[0]).toContain(s);
  if (alone) expect(lines).toHaveLength(1);
}

describe("refused starts: one line naming the variable and the fix", () => {
  test("a port in use (held by a listener opened here): embedded and redirector say which port and PORT", async () => {
    await requirePostgres();
    await requireRedis();
    const holder = Bun.listen({ hostname: "0.0.0.0", port: 0, socket: { data() {} } });
    try {
      const port = String(holder.port);
      expectRefusal(await run("embedded", { PORT: port }), [`port ${port} (PORT) is already in use`, "set PORT to a free port"]);
      // A schema that does not exist: the redirector's start-up read finds no links table, which is no problem.
      const scale = { DATABASE_URL: PG_URL, DATABASE_SCHEMA: `none_${rand()}`, REDIS_URL, REDIS_PREFIX: `e2e-${rand()}` };
      expectRefusal(await run("redirector", { PORT: port, ...scale }), [`port ${port} (PORT) is already in use`]);
    } finally {
      holder.stop(true);
    }
  });

  test("a DATABASE_URL naming a database the local Postgres does not have: control and redirector", async () => {
    await requirePostgres();
    await requireRedis();
    const name = `clink_missing_${rand()}`;
    const env = { PORT: String(await freePort()), DATABASE_URL: pgUrlWith((u) => (u.pathname = `/${name}`)), REDIS_URL };
    for (const entry of ["control", "redirector"] as const) {
      expectRefusal(await run(entry, env), [`database "${name}" does not exist`, "(DATABASE_URL)", `CREATE DATABASE "${name}"`]);
    }
  });

  test("a DATABASE_URL naming a role the local Postgres does not have", async () => {
    await requirePostgres();
    await requireRedis();
    const role = `clink_nobody_${rand()}`;
    const env = { PORT: String(await freePort()), DATABASE_URL: pgUrlWith((u) => (u.username = role)), REDIS_URL };
    expectRefusal(await run("control", env), [`role "${role}" does not exist`, "(DATABASE_URL)", `CREATE ROLE "${role}" LOGIN`]);
  });

  test("a REDIS_URL nothing answers at: control refuses (the Redis client's own warning may come first)", async () => {
    await requirePostgres();
    const redisPort = await freePort();
    const env = { PORT: String(await freePort()), DATABASE_URL: PG_URL, DATABASE_SCHEMA: `none_${rand()}`, REDIS_URL: `redis://127.0.0.1:${redisPort}` };
    expectRefusal(await run("control", env), [`no Redis answers at 127.0.0.1:${redisPort} (REDIS_URL)`, "start Redis, or fix REDIS_URL"], false);
  });

  test("a redirector whose Postgres is down starts anyway, with a warning saying so", async () => {
    await requireRedis();
    const pgPort = await freePort();
    const r = await startServer({
      entry: "redirector/main.ts",
      env: { DATABASE_URL: `postgres://postgres@127.0.0.1:${pgPort}/clink`, REDIS_URL, REDIS_PREFIX: `e2e-${rand()}`, LOG_LEVEL: "info" },
    });
    try {
      await outputWith(r, "stderr", `Warning: no Postgres answers at 127.0.0.1:${pgPort} (DATABASE_URL: ECONNREFUSED); starting anyway`);
    } finally {
      await r.stop();
    }
  });
});

describe("links made under another address", () => {
  test("PORT changed while BASE_URL is unset: one warning naming the old host and the BASE_URL to set; serving goes on", async () => {
    const dir = makeTempDir("moved");
    try {
      // BASE_URL empty = unset: it follows PORT (http://localhost:PORT).
      const first = await startServer({ dataDir: dir, env: { BASE_URL: "", LOG_LEVEL: "info" } });
      await outputWith(first, "stdout", "Create your first API key");
      const key = await createKey(first, "mover@example.com");
      expect((await api(first, key).post("/api/v1/links", { url: "https://example.com/a", slug: "kept" })).status).toBe(201);
      const oldHost = `localhost:${first.port}`;
      await first.stop();

      const moved = await startServer({ dataDir: dir, env: { BASE_URL: "", LOG_LEVEL: "info" } });
      try {
        const stderr = await outputWith(moved, "stderr", "Serving anyway.");
        const warning = stderr.split("\n").filter((l) => l.startsWith("Warning:"));
        expect(warning).toHaveLength(1);
        expect(warning[0]).toContain(`links are on ${oldHost}, none on localhost:${moved.port}`);
        expect(warning[0]).toContain(`set BASE_URL=http://${oldHost} `);
        expect(moved.stdout).not.toContain("Create your first API key"); // an account exists now
        expect((await api(moved).get("/kept")).status).toBe(404);
        expect((await api(moved).get("/healthz")).status).toBe(200);

        await moved.restart({ BASE_URL: `http://${oldHost}` });
        expect(moved.stderr).not.toContain("Warning:");
        expect((await api(moved).get("/kept")).headers.get("location")).toBe("https://example.com/a");
      } finally {
        await moved.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("scale mode: a redirector started with another BASE_URL than the links' warns the same way", async () => {
    await requirePostgres();
    await requireRedis();
    const d = await startDeployment({ redirectors: 0 });
    try {
      expect((await api(d.control, await d.createKey("scale@example.com")).post("/api/v1/links", { url: "https://example.com/s" })).status).toBe(201);
      const r = await startServer({ entry: "redirector/main.ts", env: { ...d.env, BASE_URL: "https://elsewhere.test", LOG_LEVEL: "info" } });
      try {
        const stderr = await outputWith(r, "stderr", "Warning: the existing links are on clink.test, none on elsewhere.test");
        expect(stderr).toContain("set BASE_URL=https://clink.test ");
      } finally {
        await r.stop();
      }
    } finally {
      await d.stop();
    }
  });
});

describe("create-key", () => {
  const CLI = join(REPO_ROOT, "control/keys/create-key-cli.ts");

  test("--help prints the usage on stdout and exits 0", async () => {
    const r = await runToExit([CLI, "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage: npm run create-key -- --email EMAIL");
    expect(r.stdout).toContain("--create-data-dir");
    expect(r.stderr).toBe("");
  });

  test("an unknown option names it, shows the usage, exits 2 without a stack trace", async () => {
    const r = await runToExit([CLI, "--emial", "a@example.com"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--emial");
    expect(r.stderr).toContain("Usage:");
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });

  test("without DATA_DIR where ./data has no database it refuses and creates nothing; --create-data-dir makes one the server then uses", async () => {
    const cwd = makeTempDir("cwd");
    try {
      const refused = await runToExit([CLI, "--email", "first@example.com"], { cwd });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`No clink database at ${join(cwd, "data", "clink.sqlite")}`);
      expect(refused.stderr).toContain("DATA_DIR");
      expect(refused.stdout).not.toContain("ck_");
      expect(existsSync(join(cwd, "data"))).toBe(false);

      const made = await runToExit([CLI, "--email", "first@example.com", "--create-data-dir"], { cwd });
      expect(made.code).toBe(0);
      const key = made.stdout.trim().split("\n").pop()!;
      expect(key).toStartWith("ck_");
      const server = await startServer({ dataDir: join(cwd, "data") });
      try {
        expect((await api(server, key).get("/api/v1/links")).status).toBe(200);
      } finally {
        await server.stop();
      }
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});

/**
 * The start-up checks' decisions (shared/observability/startup-checks.ts): which environment failures become one
 * line naming the variable and the fix, the warning for links stranded on another host than BASE_URL's, the
 * first-key hint and create-key's refusal. Errors are the real classes (postgres.js, ioredis, Bun.serve, node:fs)
 * with the codes and messages those libraries produce; test/e2e/startup-checks.test.ts meets them for real.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { ReplyError } from "ioredis";
import { AppError } from "../../shared/errors.ts";
import {
  baseHostWarning, cannotStartLine, firstKeyHint, missingDatabaseRefusal, startupProblemOf, type StartupTarget,
} from "../../shared/observability/startup-checks.ts";

const SECRET = "Sup3r-Secret-Pw";
const target: StartupTarget = {
  port: 3000,
  baseUrl: "https://links.example.com",
  dataDir: "/srv/clink",
  databaseUrl: `postgres://clink:${SECRET}@db.internal:6543/clink`,
  redisUrl: `redis://:${SECRET}@cache.internal:6380`,
};
const pgError = (code: string, message: string) => new postgres.PostgresError({ code, message, severity: "FATAL" } as never);
/** How the adapters hand a connection failure on: AppError("unavailable") with the library's error as cause. */
function unavailable(cause?: unknown): AppError {
  const e = new AppError("unavailable", "Storage is unavailable", { retryAfter: 1 });
  if (cause !== undefined) e.cause = cause;
  return e;
}
function thrownBy(work: () => unknown): unknown {
  try {
    work();
  } catch (err) {
    return err;
  }
  throw new Error("did not throw");
}

describe("startupProblemOf: the environment's failures, one line each", () => {
  test.each([
    ["database_missing", pgError("3D000", 'database "clink" does not exist'), ['database "clink" does not exist', "db.internal:6543", 'CREATE DATABASE "clink"']],
    ["role_missing", pgError("28000", 'role "clink" does not exist'), ['role "clink" does not exist', "db.internal:6543", 'CREATE ROLE "clink" LOGIN']],
    ["database_login_refused", pgError("28P01", 'password authentication failed for user "clink"'), ["refused the login", "password"]],
    ["database_login_refused", pgError("28000", 'no pg_hba.conf entry for host "10.0.0.9", user "clink", database "clink"'), ["pg_hba.conf"]],
    ["database_permission_denied", pgError("42501", "permission denied for database clink"), ["GRANT CREATE ON DATABASE"]],
    ["database_unreachable", unavailable(Object.assign(new Error("connect ECONNREFUSED 10.0.0.5:6543"), { code: "ECONNREFUSED" })), ["no Postgres answers at db.internal:6543", "ECONNREFUSED", "start Postgres"]],
  ] as const)("database step: %s", (code, err, says) => {
    const p = startupProblemOf("database", err, target)!;
    expect(p.code).toBe(code);
    expect(p.variable).toBe("DATABASE_URL");
    expect(p.transient).toBe(code === "database_unreachable");
    const line = cannotStartLine(p);
    expect(line).toStartWith("Cannot start: ");
    expect(line).toContain("DATABASE_URL");
    for (const s of says) expect(line).toContain(s);
    expect(line).not.toContain(SECRET);
    expect(line).not.toContain("\n");
  });

  test("Redis: down names REDIS_URL's host (never its password), or the cluster's seed nodes; a refused login says so", () => {
    const down = startupProblemOf("redis", unavailable(), target)!;
    expect(down).toMatchObject({ code: "redis_unreachable", variable: "REDIS_URL", transient: true });
    expect(cannotStartLine(down)).toContain("no Redis answers at cache.internal:6380 (REDIS_URL)");
    expect(cannotStartLine(down)).not.toContain(SECRET);

    const cluster = { ...target, redisUrl: undefined, redisClusterNodes: [{ host: "10.0.0.1", port: 7000 }, { host: "10.0.0.2", port: 7000 }] };
    expect(cannotStartLine(startupProblemOf("redis", unavailable(), cluster)!)).toContain("10.0.0.1:7000, 10.0.0.2:7000 (REDIS_CLUSTER_NODES)");

    const refused = startupProblemOf("redis", new ReplyError("WRONGPASS invalid username-password pair or user is disabled."), target)!;
    expect(refused).toMatchObject({ code: "redis_login_refused", variable: "REDIS_URL", transient: false });
  });

  test("listen: a port held by another listener (the error Bun.serve throws) names PORT and the BASE_URL to keep", () => {
    const holder = Bun.serve({ port: 0, hostname: "0.0.0.0", fetch: () => new Response("") });
    try {
      const err = thrownBy(() => Bun.serve({ port: holder.port, hostname: "0.0.0.0", fetch: () => new Response("") }));
      const p = startupProblemOf("listen", err, { ...target, port: holder.port! })!;
      expect(p).toMatchObject({ code: "port_in_use", variable: "PORT" });
      expect(cannotStartLine(p)).toContain(`port ${holder.port} (PORT) is already in use`);
      expect(cannotStartLine(p)).toContain("keep BASE_URL=https://links.example.com");
    } finally {
      holder.stop(true);
    }
  });

  test("data: a DATA_DIR that cannot be created (the error mkdirSync throws) names DATA_DIR", () => {
    const file = join(tmpdir(), `clink-not-a-dir-${crypto.randomUUID()}`);
    writeFileSync(file, "");
    const err = thrownBy(() => mkdirSync(join(file, "data"), { recursive: true }));
    rmSync(file);
    const p = startupProblemOf("data", err, { ...target, dataDir: join(file, "data") })!;
    expect(p).toMatchObject({ code: "data_dir_unusable", variable: "DATA_DIR" });
    expect(cannotStartLine(p)).toContain(`DATA_DIR ${join(file, "data")} cannot hold the database (ENOTDIR`);
  });

  test("anything else is not the environment's doing: null, so it keeps its stack trace", () => {
    expect(startupProblemOf("database", pgError("42601", 'syntax error at or near "SELEC"'), target)).toBeNull();
    expect(startupProblemOf("database", new TypeError("x is undefined"), target)).toBeNull();
    expect(startupProblemOf("redis", new ReplyError("ERR unknown command 'FOO'"), target)).toBeNull();
    expect(startupProblemOf("listen", new Error("boom"), target)).toBeNull();
    expect(startupProblemOf("data", new RangeError("bad"), target)).toBeNull();
  });
});

describe("baseHostWarning: links keyed by another host than BASE_URL's", () => {
  const config = { baseUrl: "http://localhost:3001", defaultDomain: "localhost:3001" };

  test("no links, or some on BASE_URL's host: nothing to say", () => {
    expect(baseHostWarning(config, [])).toBeNull();
    expect(baseHostWarning(config, ["localhost:3000", "localhost:3001"])).toBeNull();
  });

  test("every link on one other host: names both hosts and the exact BASE_URL that serves them", () => {
    const line = baseHostWarning(config, ["localhost:3000"])!;
    expect(line).toStartWith("Warning: ");
    expect(line).toContain("links are on localhost:3000, none on localhost:3001 (the host of BASE_URL=http://localhost:3001)");
    expect(line).toContain("answer 404");
    expect(line).toContain("set BASE_URL=http://localhost:3000 ");
    expect(line).toContain("Serving anyway.");
    expect(line).not.toContain("\n");
  });

  test("several other hosts: the first three and how many more; the suggestion keeps BASE_URL's scheme and path", () => {
    const line = baseHostWarning({ baseUrl: "https://new.example/go", defaultDomain: "new.example" }, ["a.example", "b.example", "c.example", "d.example", "e.example"])!;
    expect(line).toContain("on a.example, b.example, c.example and 2 more");
    expect(line).toContain("e.g. BASE_URL=https://a.example/go ");
  });
});

describe("first-key hint and create-key's refusal", () => {
  test("the first-key hint only while no account exists", () => {
    expect(firstKeyHint(false)).toContain("npm run create-key -- --email");
    expect(firstKeyHint(true)).toBeNull();
  });

  test("create-key refuses a missing embedded database unless asked to create it; scale mode names its own database", () => {
    const embedded = { mode: "embedded" as const, dataDir: "/work/app/data" };
    const line = missingDatabaseRefusal(embedded, "/work/app/data/clink.sqlite", false, false)!;
    expect(line).toContain("No clink database at /work/app/data/clink.sqlite");
    expect(line).toContain("DATA_DIR");
    expect(line).toContain("--create-data-dir");
    expect(missingDatabaseRefusal(embedded, "/work/app/data/clink.sqlite", true, false)).toBeNull();
    expect(missingDatabaseRefusal(embedded, "/work/app/data/clink.sqlite", false, true)).toBeNull();
    expect(missingDatabaseRefusal({ mode: "scale", dataDir: "/work/app/data" }, "/work/app/data/clink.sqlite", false, false)).toBeNull();
  });
});

/**
 * Start-up checks that explain themselves: what the entry points (control/main.ts, redirector/main.ts) and
 * `npm run create-key` print when the environment is not what the configuration says, one line each, naming the
 * variable and what to do, instead of a stack trace. The decisions are pure functions of the error or the facts
 * read at start; `exitOnProblem` runs a step that must succeed and prints the line and exits when it does not.
 */
import { AppError } from "../errors.ts";
import type { Config } from "../config.ts";

/** What start-up was doing when it failed: each has its own variable and its own fixes. */
export type StartupStep = "data" | "database" | "redis" | "listen";

export type StartupProblemCode =
  | "data_dir_unusable"
  | "database_missing"
  | "role_missing"
  | "database_login_refused"
  | "database_permission_denied"
  | "database_unreachable"
  | "redis_unreachable"
  | "redis_login_refused"
  | "port_in_use"
  | "port_not_permitted";

export interface StartupProblem {
  code: StartupProblemCode;
  /** The environment variable to look at. */
  variable: string;
  /** What is wrong, e.g. `database "clink" does not exist on the Postgres server at db:5432 (DATABASE_URL)`. */
  what: string;
  /** What to do about it. */
  fix: string;
  /** A service that is down rather than misconfigured: it may answer later (a redirector starts anyway). */
  transient: boolean;
}

export type StartupTarget = Pick<Config, "port" | "baseUrl" | "dataDir" | "databaseUrl" | "redisUrl" | "redisClusterNodes">;

/** Exit code of a start-up refused by its environment (a bad variable value exits with 2, see shared/config.ts). */
export const STARTUP_PROBLEM_EXIT = 1;

/** Error codes meaning "nothing answers there (now)", from Node's sockets, DNS and postgres.js. */
const UNREACHABLE = new Set([
  "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "EPIPE",
  "CONNECT_TIMEOUT", "CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED", "57P01", "57P02", "57P03",
]);
/** File-system and SQLite errors meaning "this directory cannot hold the database". */
const DATA_DIR_ERRORS = new Set([
  "EACCES", "EPERM", "EROFS", "ENOENT", "ENOTDIR", "EEXIST", "ENOSPC", "EDQUOT", "SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_PERM",
]);

/** The error's own code, looking through the AppError("unavailable") that adapters wrap connection errors in. */
function codeOf(err: unknown): string | undefined {
  const inner = err instanceof AppError && err.cause !== undefined ? err.cause : err;
  const code = (inner as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** `host:port` of a connection URL: never its user or password. */
function hostOf(url: string | undefined, defaultPort: number): string {
  if (!url) return "(unset)";
  try {
    const u = new URL(url);
    return `${u.hostname || "localhost"}:${u.port || defaultPort}`;
  } catch {
    return "(unparsable)";
  }
}

function databaseProblem(err: unknown, t: StartupTarget): StartupProblem | null {
  const code = codeOf(err);
  const at = `the Postgres server at ${hostOf(t.databaseUrl, 5432)} (DATABASE_URL)`;
  const message = messageOf(err instanceof AppError && err.cause instanceof Error ? err.cause : err);
  const problem = (c: StartupProblemCode, what: string, fix: string, transient = false): StartupProblem => ({
    code: c, variable: "DATABASE_URL", what, fix, transient,
  });
  if (code === "3D000") {
    const name = /database "(.+)" does not exist/.exec(message)?.[1] ?? "(named in DATABASE_URL)";
    return problem("database_missing", `database "${name}" does not exist on ${at}`,
      `create it (CREATE DATABASE "${name}";) or point DATABASE_URL at an existing database`);
  }
  const role = /role "(.+)" does not exist/.exec(message)?.[1];
  if (code === "28000" && role !== undefined) {
    return problem("role_missing", `role "${role}" does not exist on ${at}`,
      `create it (CREATE ROLE "${role}" LOGIN PASSWORD '…';) or put an existing role in DATABASE_URL`);
  }
  if (code === "28000" || code === "28P01") {
    return problem("database_login_refused", `${at} refused the login: ${message}`,
      "fix the user or password in DATABASE_URL, or allow this client in the server's pg_hba.conf");
  }
  if (code === "42501") {
    return problem("database_permission_denied", `the role in DATABASE_URL may not create clink's tables on ${at}: ${message}`,
      "grant it CREATE on the database (GRANT CREATE ON DATABASE …) or use the database's owner");
  }
  if ((code !== undefined && UNREACHABLE.has(code)) || (err instanceof AppError && err.code === "unavailable")) {
    return problem("database_unreachable", `no Postgres answers at ${hostOf(t.databaseUrl, 5432)} (DATABASE_URL: ${code ?? message})`,
      "start Postgres, or fix the host and port in DATABASE_URL", true);
  }
  return null;
}

function redisProblem(err: unknown, t: StartupTarget): StartupProblem | null {
  const [variable, where] = t.redisClusterNodes
    ? ["REDIS_CLUSTER_NODES", t.redisClusterNodes.map((n) => `${n.host}:${n.port}`).join(", ")]
    : ["REDIS_URL", hostOf(t.redisUrl, 6379)];
  const message = messageOf(err);
  if (/NOAUTH|WRONGPASS|invalid password|invalid username/i.test(message)) {
    return {
      code: "redis_login_refused", variable, what: `Redis at ${where} (${variable}) refused the login: ${message}`,
      fix: `put the right user and password in ${t.redisClusterNodes ? "the cluster's configuration" : "REDIS_URL (redis://user:password@host:port)"}`,
      transient: false,
    };
  }
  const code = codeOf(err);
  if ((code !== undefined && UNREACHABLE.has(code)) || (err instanceof AppError && err.code === "unavailable")) {
    return {
      code: "redis_unreachable", variable, what: `no Redis answers at ${where} (${variable})`,
      fix: `start Redis, or fix ${variable}`, transient: true,
    };
  }
  return null;
}

function listenProblem(err: unknown, t: StartupTarget): StartupProblem | null {
  const code = codeOf(err);
  if (code === "EADDRINUSE") {
    return {
      code: "port_in_use", variable: "PORT", what: `port ${t.port} (PORT) is already in use by another process`,
      // Links are keyed by BASE_URL's host, which follows PORT when BASE_URL is unset: say so before PORT changes.
      fix: `stop that process, or set PORT to a free port and keep BASE_URL=${t.baseUrl} so existing links keep their address`,
      transient: false,
    };
  }
  if (code === "EACCES" || code === "EPERM") {
    return {
      code: "port_not_permitted", variable: "PORT", what: `this user may not listen on port ${t.port} (PORT)`,
      fix: "use a port above 1023 behind a reverse proxy, or grant Bun the capability (setcap cap_net_bind_service=+ep)",
      transient: false,
    };
  }
  return null;
}

function dataProblem(err: unknown, t: StartupTarget): StartupProblem | null {
  const code = codeOf(err);
  if (code === undefined || !DATA_DIR_ERRORS.has(code)) return null;
  const message = messageOf(err);
  const detail = message.startsWith(code) ? message : `${code}: ${message}`;
  return {
    code: "data_dir_unusable", variable: "DATA_DIR", what: `DATA_DIR ${t.dataDir} cannot hold the database (${detail})`,
    fix: "set DATA_DIR to a directory this user can write, or fix its permissions",
    transient: false,
  };
}

/**
 * What went wrong, when `err` is the environment's doing (a database or role missing, a service down, a port
 * taken, a directory not writable); null for anything else, which is a bug and keeps its stack trace.
 */
export function startupProblemOf(step: StartupStep, err: unknown, target: StartupTarget): StartupProblem | null {
  switch (step) {
    case "data":
      return dataProblem(err, target);
    case "database":
      return databaseProblem(err, target);
    case "redis":
      return redisProblem(err, target);
    case "listen":
      return listenProblem(err, target);
  }
}

/** The one line a refused start prints. */
export const cannotStartLine = (p: StartupProblem): string => `Cannot start: ${p.what}. To fix: ${p.fix}.`;

/** Replaces the host of `baseUrl`, keeping its scheme and path. */
function withHost(baseUrl: string, host: string): string {
  const u = new URL(baseUrl);
  return `${u.protocol}//${host}${u.pathname.replace(/\/+$/, "")}`;
}

/**
 * The warning for links that exist only on other hosts than BASE_URL's: links are keyed by domain, so a changed
 * BASE_URL (or a changed PORT while BASE_URL is unset, since it then follows PORT) makes every existing link
 * answer 404. Null when there is no link yet, or some are on the configured host. The process keeps serving:
 * a move to a new address with export/import, or links made under a custom domain, are legitimate.
 */
export function baseHostWarning(config: Pick<Config, "baseUrl" | "defaultDomain">, linkDomains: readonly string[]): string | null {
  if (linkDomains.length === 0 || linkDomains.includes(config.defaultDomain)) return null;
  const shown = linkDomains.slice(0, 3).join(", ") + (linkDomains.length > 3 ? ` and ${linkDomains.length - 3} more` : "");
  const suggestion = withHost(config.baseUrl, linkDomains[0]);
  const fix = linkDomains.length === 1
    ? `set BASE_URL=${suggestion}`
    : `set BASE_URL to the address visitors use, e.g. BASE_URL=${suggestion}`;
  return (
    `Warning: the existing links are on ${shown}, none on ${config.defaultDomain} (the host of BASE_URL=${config.baseUrl}), ` +
    `so they answer 404 here. If the public address has not changed, ${fix} (unset, BASE_URL follows PORT). Serving anyway.`
  );
}

/** The hint printed by the embedded default until the first account exists. */
export function firstKeyHint(hasAccounts: boolean): string | null {
  return hasAccounts ? null : "Create your first API key: npm run create-key -- --email you@example.com";
}

/**
 * create-key's refusal to start a database the server would not use: without DATA_DIR it would write ./data of
 * wherever it runs, and print a key that a server with another DATA_DIR does not know. Null when the embedded
 * database file exists, when asked to create it, or in scale mode (Postgres is named by DATABASE_URL).
 */
export function missingDatabaseRefusal(
  config: Pick<Config, "mode" | "dataDir">,
  file: string,
  fileExists: boolean,
  createDataDir: boolean,
): string | null {
  if (config.mode !== "embedded" || fileExists || createDataDir) return null;
  return (
    `No clink database at ${file}. Run create-key with the server's DATA_DIR (default ./data where the server runs; ` +
    `the server prints "data: SQLite at …" when it starts), or pass --create-data-dir to create a new database there.`
  );
}

/**
 * Runs one start-up step; when it fails for a reason `startupProblemOf` knows, prints the one line and exits
 * with STARTUP_PROBLEM_EXIT. Anything else is rethrown with its stack trace.
 */
export async function exitOnProblem<T>(step: StartupStep, target: StartupTarget, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const problem = startupProblemOf(step, err, target);
    if (problem === null) throw err;
    console.error(cannotStartLine(problem));
    process.exit(STARTUP_PROBLEM_EXIT);
  }
}

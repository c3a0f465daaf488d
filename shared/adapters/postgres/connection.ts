/**
 * The Postgres connection pool every role of the Postgres store shares (`postgres` package, postgres.js 3.4).
 * Connection failures surface as AppError "unavailable" (503) rather than as internal errors.
 */
import postgres from "postgres";
import { AppError } from "../../errors.ts";

export interface PostgresStoreOptions {
  /** Schema holding the tables; created by migrate() when missing. Default: the server's search_path. */
  schema?: string;
  /** Pool size (default 10). */
  max?: number;
}

/** Error codes meaning "the database cannot be reached right now", not "this request is wrong". */
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "EPIPE",
  "CONNECT_TIMEOUT", "CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED",
  "57P01", "57P02", "57P03", // admin shutdown, crash shutdown, cannot connect now
  "53300", // too many connections
]);

function toStorageError(err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && UNAVAILABLE_CODES.has(code)) {
    const e = new AppError("unavailable", "Storage is unavailable", { retryAfter: 1 });
    e.cause = err;
    return e;
  }
  const pg = err as { code?: unknown; constraint_name?: unknown } | null;
  if (pg?.code === "23505" && pg.constraint_name === "links_domain_slug_key") {
    return new AppError("slug_taken", "Slug already taken");
  }
  if (pg?.code === "23505" && pg.constraint_name === "links_account_external_id") {
    return new AppError("external_id_taken", "Another link of this account has this externalId");
  }
  return err;
}

/** bigint columns (epoch ms, counters) as JS numbers: all of them stay far below 2^53. */
const int8AsNumber = {
  to: 20,
  from: [20],
  serialize: (x: number) => String(x),
  parse: (x: string) => Number(x),
};

export class PostgresConnection {
  readonly sql;
  readonly schema: string | undefined;

  constructor(url: string, opts: PostgresStoreOptions = {}) {
    if (opts.schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(opts.schema)) {
      throw new Error(`Invalid Postgres schema name "${opts.schema}": use lower-case letters, digits and _`);
    }
    this.schema = opts.schema;
    this.sql = postgres(url, {
      max: opts.max ?? 10,
      connect_timeout: 5, // a database that is down fails fast instead of hanging requests
      onnotice: () => {}, // "schema already exists, skipping" and the like are not worth a log line
      types: { int8: int8AsNumber },
      // A startup parameter, so every pooled connection (also ones opened later) uses the schema.
      connection: opts.schema ? { search_path: opts.schema, application_name: "clink" } : { application_name: "clink" },
    });
  }

  /** Runs `work`, turning connection failures into AppError "unavailable". */
  async run<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      throw toStorageError(err);
    }
  }
}

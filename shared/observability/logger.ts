/**
 * Structured logs: pino, one JSON object per line on stdout, level from LOG_LEVEL (config.logLevel).
 *
 * What we log is chosen field by field (method, route, path without its query, status, duration, request id),
 * so secrets never reach a log line by construction. The redaction list is the second line of defence: should
 * an object carrying a key, password, secret, token or cookie ever be logged whole, those fields print as
 * "[redacted]".
 */
import pino, { type DestinationStream, type Logger } from "pino";
import type { Config } from "../config.ts";
import type { ProcessRole } from "./metrics.ts";

export type { Logger } from "pino";

const SECRET_FIELDS = [
  "authorization", "cookie", "password", "passwordHash", "secret", "webhookSecret", "key", "apiKey",
  "keyHash", "token", "csrfToken", "databaseUrl", "redisUrl", "metricsToken",
];

/** Every secret field at the top level, one and two levels down (pino's redaction paths take no `**`). */
export const REDACT_PATHS = [
  ...SECRET_FIELDS.flatMap((f) => [f, `*.${f}`, `*.*.${f}`]),
  '["set-cookie"]', '*["set-cookie"]', '*.*["set-cookie"]',
];

export interface LoggerOptions {
  /** Where lines go; default stdout (synchronous writes, so nothing is lost at exit). */
  destination?: DestinationStream;
}

export function createLogger(level: Config["logLevel"], role: ProcessRole, opts: LoggerOptions = {}): Logger {
  return pino(
    {
      level,
      base: { service: "clink", role, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      // "level":"info" rather than 30: readable without pino-pretty, and what most log shippers expect.
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    },
    opts.destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:@\/+=-]{1,128}$/;

/**
 * The request's id: the caller's X-Request-Id when it is a plain token (so a proxy's id can be followed
 * through our logs), otherwise a fresh one. Anything else (too long, spaces, control characters) is replaced,
 * so it can neither forge log lines nor bloat them.
 */
export function requestIdOf(req: Request): string {
  const given = req.headers.get("x-request-id");
  return given !== null && SAFE_REQUEST_ID.test(given) ? given : crypto.randomUUID();
}

/** Removes credentials from a URL-looking message (`scheme://user:password@host` → `scheme://user:***@host`). */
export function withoutCredentials(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^:@/\s]*):[^@/\s]*@/gi, "$1:***@");
}

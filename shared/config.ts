/**
 * Every environment variable the service reads, parsed and validated once (design §2 "Configuration").
 * Nothing else in the codebase reads process.env; the parsed Config is passed in.
 */
import { resolve } from "node:path";
import { parseCidr } from "./net/ip.ts";

export type Mode = "embedded" | "scale";

export interface Config {
  mode: Mode;
  port: number;
  baseUrl: string;
  /** Host of baseUrl: the default domain every link belongs to (design §9 custom domains). */
  defaultDomain: string;
  dataDir: string;
  databaseUrl?: string;
  /** Postgres schema holding the tables (DATABASE_SCHEMA); unset: the server's search_path. */
  databaseSchema?: string;
  redisUrl?: string;
  /** Namespace of every Redis key and channel (REDIS_PREFIX, default "clink"), so deployments can share a Redis. */
  redisPrefix: string;
  redisClusterNodes?: { host: string; port: number }[];
  countryHeader?: string;
  geoipDb?: string;
  trustedProxies: string[];
  webhookAllowPrivate: boolean;
  signup: "open" | "closed";
  /** API requests per minute per key (design §3.3: 120). */
  rateLimitPerMinute: number;
  /** Days raw clicks are kept (CLICK_RETENTION_DAYS, default 90); 0 keeps them for ever. Rollups are always kept. */
  clickRetentionDays: number;
  /** Days audit-log entries are kept (AUDIT_RETENTION_DAYS, default 365); 0 keeps them for ever. */
  auditRetentionDays: number;
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
  metricsToken?: string;
  /**
   * Other base addresses this server answers on (OWN_HOSTS: other DNS names, its public IP, a second port), as
   * `scheme://host[:port]`: destinations there are refused like the base's own, so no link can redirect to itself.
   */
  ownBaseUrls: string[];
}

export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`Invalid configuration: ${variable} ${message}`);
  }
}

type Env = Record<string, string | undefined>;

function nonEmpty(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v ? v : undefined;
}

/** A retention in whole days; 0 keeps `what` for ever. */
function parseDays(env: Env, name: string, fallback: number, what: string): number {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n)) throw new ConfigError(name, `must be a whole number of days (0 keeps ${what} for ever), got "${raw}"`);
  return n;
}

function parsePort(env: Env, name: string, fallback: number): number {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 0 || n > 65535) throw new ConfigError(name, `must be a port number 0-65535, got "${raw}"`);
  return n;
}

function parseBool(env: Env, name: string, fallback: boolean): boolean {
  const raw = nonEmpty(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (["true", "1", "yes", "on"].includes(raw)) return true;
  if (["false", "0", "no", "off"].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function parseUrl(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    // Never echo the value: it may hold a password.
    throw new ConfigError(name, "is not a valid URL");
  }
  if (!protocols.includes(u.protocol)) throw new ConfigError(name, `must use ${protocols.join(" or ")}`);
  return raw;
}


export function loadConfig(env: Env = process.env): Config {
  const port = parsePort(env, "PORT", 3000);
  const baseRaw = parseUrl(env, "BASE_URL", ["http:", "https:"]) ?? `http://localhost:${port}`;
  const base = new URL(baseRaw);
  const baseUrl = `${base.protocol}//${base.host}${base.pathname.replace(/\/+$/, "")}`;

  const databaseUrl = parseUrl(env, "DATABASE_URL", ["postgres:", "postgresql:"]);
  const redisUrl = parseUrl(env, "REDIS_URL", ["redis:", "rediss:"]);
  const clusterRaw = nonEmpty(env, "REDIS_CLUSTER_NODES");
  let redisClusterNodes: Config["redisClusterNodes"];
  if (clusterRaw) {
    redisClusterNodes = clusterRaw.split(",").map((s) => {
      const m = /^\s*([^:\s]+):(\d{1,5})\s*$/.exec(s);
      if (!m) throw new ConfigError("REDIS_CLUSTER_NODES", `must be comma-separated host:port, got "${s.trim()}"`);
      return { host: m[1], port: Number(m[2]) };
    });
  }
  const databaseSchema = nonEmpty(env, "DATABASE_SCHEMA");
  if (databaseSchema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(databaseSchema)) {
    throw new ConfigError("DATABASE_SCHEMA", "must be a lower-case SQL identifier (letters, digits and _, at most 63)");
  }
  const redisPrefix = nonEmpty(env, "REDIS_PREFIX") ?? "clink";
  // No braces: the adapter puts its own hash tags in key names, and a brace here would change their slot.
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(redisPrefix)) throw new ConfigError("REDIS_PREFIX", "must be 1-64 characters of A-Z a-z 0-9 _ . : -");
  const hasRedis = Boolean(redisUrl || redisClusterNodes);
  if (databaseUrl && !hasRedis) throw new ConfigError("REDIS_URL", "must be set when DATABASE_URL is set (scale mode needs both)");
  if (hasRedis && !databaseUrl) throw new ConfigError("DATABASE_URL", "must be set when REDIS_URL or REDIS_CLUSTER_NODES is set (scale mode needs both)");

  const countryHeader = nonEmpty(env, "COUNTRY_HEADER")?.toLowerCase();
  if (countryHeader && !/^[a-z0-9-]+$/.test(countryHeader)) throw new ConfigError("COUNTRY_HEADER", "must be an HTTP header name");

  const trustedProxies = (nonEmpty(env, "TRUSTED_PROXIES") ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  // The parser the client-address resolver uses, so whatever passes here is what it can use (a pattern let
  // "cafe" or "10.0.0.0/99" through to a crash at start-up).
  for (const p of trustedProxies) if (!parseCidr(p)) throw new ConfigError("TRUSTED_PROXIES", `has an invalid address or CIDR "${p}"`);

  const signup = (nonEmpty(env, "SIGNUP") ?? "open").toLowerCase();
  if (signup !== "open" && signup !== "closed") throw new ConfigError("SIGNUP", `must be "open" or "closed", got "${signup}"`);

  const rateRaw = nonEmpty(env, "RATE_LIMIT_PER_MINUTE");
  const rateLimitPerMinute = rateRaw === undefined ? 120 : Number(rateRaw);
  if (!Number.isInteger(rateLimitPerMinute) || rateLimitPerMinute < 1) throw new ConfigError("RATE_LIMIT_PER_MINUTE", "must be a positive integer");

  const clickRetentionDays = parseDays(env, "CLICK_RETENTION_DAYS", 90, "raw clicks");
  const auditRetentionDays = parseDays(env, "AUDIT_RETENTION_DAYS", 365, "audit-log entries");

  const ownBaseUrls = (nonEmpty(env, "OWN_HOSTS") ?? "").split(",").map((s) => s.trim()).filter(Boolean).map((h) => {
    const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(h) ? h : `http://${h}`;
    let u: URL;
    try {
      u = new URL(withScheme);
    } catch {
      throw new ConfigError("OWN_HOSTS", `has an invalid host "${h}" (comma-separated host, host:port or http(s)://host:port)`);
    }
    if ((u.protocol !== "http:" && u.protocol !== "https:") || !u.hostname || (u.pathname !== "/" && u.pathname !== "")) {
      throw new ConfigError("OWN_HOSTS", `has an invalid host "${h}" (comma-separated host, host:port or http(s)://host:port)`);
    }
    return `${u.protocol}//${u.host}`;
  });

  const logLevel = (nonEmpty(env, "LOG_LEVEL") ?? "info").toLowerCase();
  if (!["debug", "info", "warn", "error", "silent"].includes(logLevel)) throw new ConfigError("LOG_LEVEL", "must be debug, info, warn, error or silent");

  return {
    mode: databaseUrl ? "scale" : "embedded",
    port,
    baseUrl,
    defaultDomain: base.host.toLowerCase(),
    dataDir: resolve(nonEmpty(env, "DATA_DIR") ?? "./data"),
    databaseUrl,
    databaseSchema,
    redisUrl,
    redisPrefix,
    redisClusterNodes,
    countryHeader,
    geoipDb: nonEmpty(env, "GEOIP_DB"),
    trustedProxies,
    webhookAllowPrivate: parseBool(env, "WEBHOOK_ALLOW_PRIVATE", false),
    ownBaseUrls,
    signup,
    rateLimitPerMinute,
    clickRetentionDays,
    auditRetentionDays,
    logLevel: logLevel as Config["logLevel"],
    metricsToken: nonEmpty(env, "METRICS_TOKEN"),
  };
}

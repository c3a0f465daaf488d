/**
 * Turns validated create/update input (schemas.ts) into link fields, applying the rules of design §3.2
 * that a JSON Schema cannot express: address checks, slug rules, tag normalisation, flag coercion.
 * Pure: every check runs and all field errors are reported together.
 */
import { DEVICE_MATCHES, isOneOf } from "./enums.ts";
import { AppError, invalidInput, type FieldError } from "./errors.ts";
import { isCountryCode } from "./facts/countries.ts";
import { headerSafeUrl } from "./link.ts";
import { linkFieldEntries, type AbVariant, type InputRule, type LinkRecord, type Rule } from "./link-fields.ts";
import { MESSAGES, SLUG_PATTERN } from "./messages.ts";
import { parseIp } from "./net/ip.ts";
import { CreateLinkInput, UpdateLinkInput } from "./schemas.ts";
import { parseIsoDateTime } from "./time.ts";
import { schemaErrors } from "./validation.ts";

export const RESERVED_SLUGS = new Set([
  "api", "mcp", "dashboard", "docs", "healthz", "readyz", "metrics", "static", "assets", "login", "logout",
  "signup", "signin", "signout", "register", "admin", "favicon.ico", "robots.txt", "sitemap.xml", "well-known",
  ".well-known", "openapi", "openapi.json", "swagger", "health", "status", "settings", "account", "auth", "oauth",
  // Paths under /api/v1/links/ that are not a link (exports and bulk changes, #25).
  "export", "bulk", "bulk-delete",
]);
const SLUG = new RegExp(SLUG_PATTERN);
const CONTROL_CHARACTER = /[\x00-\x1f\x7f]/;
/** Visible ASCII but the characters that end or escape a URL path segment, so `ext_{externalId}` reads back as given. */
const EXTERNAL_ID = /^[\x21-\x7e]{1,200}$/;
const EXTERNAL_ID_EXCLUDED = /[/?#%\\]/;

/**
 * A destination must be spelled `scheme://host…`: a browser resolves `http:/x`, `http:x` or `http:\x` against the
 * short address that sent it there (`http:/abc` on http://s.test/abc is that same address), and reads `http:///x`
 * like `http://x`. Nothing but this spelling is as absolute to a browser as it is to us.
 */
const SCHEME_AND_AUTHORITY = /^https?:\/\/[^/\\]/i;
/** Browsers read a backslash before the query as `/` (in the host, the path), so the address would not say where it goes. */
const BACKSLASH_BEFORE_QUERY = /^[^?#]*\\/;

/** The service's own hosts as `hostKey` keys (normalised `host:port`); a destination there would loop. */
export type OwnHosts = ReadonlySet<string>;

export interface InputContext {
  ownHosts: OwnHosts;
}

const DEFAULT_PORT: Record<string, number> = { "http:": 80, "https:": 443 };
/** What every loopback spelling compares as: on a local base they all reach this machine. */
const LOOPBACK = "localhost";

/** Whether a URL's hostname (bracketed for IPv6, no trailing dot) names this machine's loopback. */
function isLoopbackName(host: string): boolean {
  if (host === LOOPBACK || host.endsWith(".localhost")) return true;
  const ip = parseIp(host.startsWith("[") ? host.slice(1, -1) : host);
  if (ip === null) return false;
  // 127.0.0.0/8 (and its IPv4-mapped form, which parseIp unpacks), 0.0.0.0; ::1 and ::.
  if (ip.v === 4) return ip.n >>> 24 === 127 || ip.n === 0;
  return ip.w.every((x, i) => x === 0 || (i === 7 && x === 1));
}

/**
 * The host of a parsed http(s) URL as the own-address check compares it: the URL parser has already lower-cased
 * it, decoded percent escapes, mapped it to punycode and read numeric IPv4 forms; here trailing dots go, every
 * loopback spelling becomes `localhost`, and the port is explicit (`s.test:80`).
 */
export function hostKey(u: URL): string {
  let host = u.hostname;
  while (host.endsWith(".")) host = host.slice(0, -1);
  if (isLoopbackName(host)) host = LOOPBACK;
  return `${host}:${u.port === "" ? DEFAULT_PORT[u.protocol] : u.port}`;
}

/**
 * Every address the service answers its short addresses on, from its base URLs (the default domain, custom domains
 * once they exist) and the port it listens on. A base on a default port also owns the other one (http is commonly
 * upgraded to https on the same name); a local base (localhost, a loopback address) owns every loopback name at its
 * port and at the listening port, since a visitor on this machine reaches the service through any of them.
 */
export function ownHostsOf(baseUrls: readonly string[], listenPort: number): OwnHosts {
  const own = new Set<string>();
  for (const base of baseUrls) {
    const u = new URL(base);
    const key = hostKey(u);
    own.add(key);
    const host = key.slice(0, key.lastIndexOf(":"));
    if (u.port === "") for (const port of Object.values(DEFAULT_PORT)) own.add(`${host}:${port}`);
    if (host === LOOPBACK) own.add(`${LOOPBACK}:${listenPort}`);
  }
  return own;
}

/** Whether a parsed http(s) address is one of the service's own. */
export const isOwnHost = (u: URL, own: OwnHosts): boolean => own.has(hostKey(u));

/** Fields set only by the service, never by a create or update input. */
type ServiceFields = "id" | "accountId" | "domain" | "slug" | "createdAt" | "updatedAt" | "hits" | "passwordHash" | "webhookSecret";

/** Fields a create or an update may set, already normalised. Absent keys are left unchanged. */
export type LinkChanges = Partial<Omit<LinkRecord, ServiceFields>> & {
  /** A new password in plain text (hashed by the service), or null to remove it. */
  password?: string | null;
};

class Collector {
  errors: FieldError[] = [];
  add(path: string, message: string) {
    this.errors.push({ path, message });
  }
}

export function checkAddress(value: string, path: string, ctx: InputContext, out: Collector): string | undefined {
  if (value.length > 2048) return void out.add(path, "must be at most 2048 characters");
  // A control character (NUL, line breaks…) cannot go into a redirect's Location header.
  if (CONTROL_CHARACTER.test(value)) return void out.add(path, "must not contain control characters");
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return void out.add(path, MESSAGES.address);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return void out.add(path, "must use http or https");
  if (!u.hostname || !SCHEME_AND_AUTHORITY.test(value.trimStart())) return void out.add(path, "must be an absolute http or https URL with a host (https://host/...)");
  if (BACKSLASH_BEFORE_QUERY.test(value)) return void out.add(path, "must not contain a backslash before its query (browsers read it as /)");
  if (isOwnHost(u, ctx.ownHosts)) return void out.add(path, "must not point to this service's short addresses");
  const safe = headerSafeUrl(value);
  if (safe.length > 2048) return void out.add(path, "must be at most 2048 characters once encoded");
  return safe;
}

/**
 * Where a link's changes send visitors, each with the input path it came from: the target, the rules', the A/B
 * variants' and the expired address (not the OG image or the webhook, which nobody is redirected to). For the
 * checks that need I/O, such as the custom domains this service serves (control/links/destinations.ts).
 */
export function destinationsOf(changes: LinkChanges, op: "create" | "update"): { path: string; url: string }[] {
  const out: { path: string; url: string }[] = [];
  if (changes.target) out.push({ path: op === "create" ? "/url" : "/targetUrl", url: changes.target });
  changes.rules?.forEach((r, i) => out.push({ path: `/rules/${i}/url`, url: r.url }));
  changes.abUrls?.forEach((v, i) => out.push({ path: `/abUrls/${i}/url`, url: v.url }));
  if (changes.expiredUrl) out.push({ path: "/expiredUrl", url: changes.expiredUrl });
  return out;
}

/** What is wrong with a custom slug (§3.2), if anything: a reserved word or prefix, or its characters and length. */
function slugProblem(slug: string): { code: "slug_reserved" | "invalid_input"; error: FieldError } | undefined {
  // Reserved words first: some (favicon.ico, robots.txt) are not even made of slug characters.
  if (RESERVED_SLUGS.has(slug.toLowerCase())) return { code: "slug_reserved", error: { path: "/slug", message: MESSAGES.reserved } };
  // `ext_…` names a link by its externalId in the API's paths (GET /api/v1/links/ext_{externalId}).
  if (slug.startsWith("ext_")) return { code: "slug_reserved", error: { path: "/slug", message: MESSAGES.extPrefix } };
  if (!SLUG.test(slug)) return { code: "invalid_input", error: { path: "/slug", message: MESSAGES.slug } };
  return undefined;
}

/** The error a slug problem is when it is the only one: slug_reserved keeps its own code. */
function slugError(p: NonNullable<ReturnType<typeof slugProblem>>, slug: string): AppError {
  if (p.code === "invalid_input") return invalidInput([p.error]);
  return new AppError("slug_reserved", `slug "${slug.slice(0, 60)}" ${p.error.message}`, { errors: [p.error] });
}

/** Slug rules of §3.2; throws slug_reserved or invalid_input. */
export function checkSlug(slug: string): string {
  const p = slugProblem(slug);
  if (p) throw slugError(p, slug);
  return slug;
}

function date(value: string | null, path: string, out: Collector): number | null | undefined {
  if (value === null || value === "") return null;
  const ms = parseIsoDateTime(value);
  if (ms === null) return void out.add(path, MESSAGES.date);
  return ms;
}

const text = (v: string | null) => (v === null || v.trim() === "" ? null : v.trim());

export function normaliseTags(value: string | string[] | null, out: Collector): string[] | undefined {
  if (value === null) return [];
  const raw = Array.isArray(value) ? value : value.split(",");
  const tags = [...new Set(raw.map((t) => t.trim()).filter(Boolean))];
  if (tags.length > 20) return void out.add("/tags", MESSAGES.tagCount);
  const long = tags.findIndex((t) => t.length > 40);
  if (long >= 0) return void out.add("/tags", MESSAGES.tagLength);
  return tags;
}

export function parseFlag(value: boolean | string | number): boolean {
  return value === true || value === "true" || value === 1 || value === "1" || value === "on";
}

function rules(value: Rule[] | null, ctx: InputContext, out: Collector): Rule[] | undefined {
  if (value === null) return [];
  const before = out.errors.length;
  const result = value.map((r, i) => {
    let match = r.match.trim();
    if (r.kind === "country") {
      match = match.toUpperCase();
      if (!isCountryCode(match)) out.add(`/rules/${i}/match`, MESSAGES.country);
    } else {
      match = match.toLowerCase();
      if (!isOneOf(DEVICE_MATCHES, match)) out.add(`/rules/${i}/match`, MESSAGES.device);
    }
    const url = checkAddress(r.url, `/rules/${i}/url`, ctx, out) ?? r.url;
    return { kind: r.kind, match, url };
  });
  return out.errors.length === before ? result : undefined;
}

function abUrls(value: AbVariant[] | null, ctx: InputContext, out: Collector): AbVariant[] | undefined {
  if (value === null) return [];
  const before = out.errors.length;
  const result = value.map((v, i) => {
    const url = checkAddress(v.url, `/abUrls/${i}/url`, ctx, out) ?? v.url;
    return { url, weight: v.weight };
  });
  return out.errors.length === before ? result : undefined;
}

function optionalAddress(v: string | null, path: string, ctx: InputContext, out: Collector): string | null | undefined {
  if (v === null || v.trim() === "") return null;
  return checkAddress(v.trim(), path, ctx, out);
}

function externalId(v: string | null, path: string, out: Collector): string | null | undefined {
  if (v === null || v.trim() === "") return null;
  const id = v.trim();
  if (!EXTERNAL_ID.test(id) || EXTERNAL_ID_EXCLUDED.test(id)) {
    return void out.add(path, MESSAGES.externalId);
  }
  return id;
}

type Normalise = (value: never, path: string, ctx: InputContext, out: Collector) => unknown;

/** Each input rule of the declaration (link-fields.ts), applied to a value the schema accepted. */
const NORMALISE: Record<InputRule, Normalise> = {
  address: (v: string, path, ctx, out) => checkAddress(v.trim(), path, ctx, out),
  optionalAddress: (v: string | null, path, ctx, out) => optionalAddress(v, path, ctx, out),
  text: (v: string | null) => text(v),
  date: (v: string | null, path, _ctx, out) => date(v, path, out),
  maxHits: (v: number | "" | null) => (v === "" ? null : v),
  status: (v: LinkRecord["status"]) => v,
  password: (v: string | null) => (v === null || v === "" ? null : v),
  tags: (v: string | string[] | null, _path, _ctx, out) => normaliseTags(v, out),
  flag: (v: boolean | string | number) => parseFlag(v),
  rules: (v: Rule[] | "" | null, _path, ctx, out) => rules(v === "" ? null : v, ctx, out),
  abUrls: (v: AbVariant[] | "" | null, _path, ctx, out) => abUrls(v === "" ? null : v, ctx, out),
  externalId: (v: string | null, path, _ctx, out) => externalId(v, path, out),
};

/** Normalises every declared field the input carries. Throws invalid_input with every field error. */
export function normaliseChanges(input: CreateLinkInput | UpdateLinkInput, ctx: InputContext, op: "create" | "update"): LinkChanges {
  const out = new Collector();
  const c: Record<string, unknown> = {};
  const given = input as Record<string, unknown>;
  for (const [name, f] of linkFieldEntries) {
    if (!f.input) continue;
    const as = op === "create" ? (f.input.createAs ?? name) : f.input.updateAs === false ? undefined : (f.input.updateAs ?? name);
    if (as === undefined || given[as] === undefined) continue;
    // The password is kept in plain text under its input name; the service hashes it.
    c[f.input.rule === "password" ? "password" : name] = NORMALISE[f.input.rule](given[as] as never, `/${as}`, ctx, out);
  }
  if (out.errors.length) throw invalidInput(out.errors);
  return c as LinkChanges;
}

/**
 * A create or update body checked against its schema, the field rules and (create) the slug rules in one go, so
 * one answer names every invalid field (a form need not be sent again to learn of the next): the fields the schema
 * refuses are left out, and the field rules judge the rest. A reserved slug alone keeps its own code, slug_reserved.
 */
export function validateLinkInput<I extends CreateLinkInput | UpdateLinkInput>(
  op: I extends CreateLinkInput ? "create" : "update",
  raw: unknown,
  ctx: InputContext,
): { input: I; changes: LinkChanges } {
  const schema = op === "create" ? CreateLinkInput : UpdateLinkInput;
  const given = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : undefined;
  // The slug's own rules say more than the schema's pattern (favicon.ico is reserved, not badly spelled).
  const slug = op === "create" && typeof given?.slug === "string" ? slugProblem(given.slug) : undefined;
  const errors = schemaErrors(schema, raw).filter((e) => !(slug && e.path === "/slug"));
  if (errors.length === 0 && !slug) return { input: raw as I, changes: normaliseChanges(raw as I, ctx, op) };
  if (slug) errors.push(slug.error);
  if (given) {
    const refused = new Set(errors.map((e) => e.path.split("/")[1]));
    const rest = Object.fromEntries(Object.entries(given).filter(([k]) => !refused.has(k)));
    // Only missing fields may be wrong with the rest (those refused above); anything else is no input to judge.
    if (schemaErrors(schema, rest).every((e) => refused.has(e.path.split("/")[1]))) {
      try {
        normaliseChanges(rest as I, ctx, op);
      } catch (e) {
        if (!(e instanceof AppError) || !e.errors) throw e;
        errors.push(...e.errors);
      }
    }
  }
  if (slug && errors.length === 1) throw slugError(slug, given!.slug as string);
  throw invalidInput(errors);
}

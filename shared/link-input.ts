/**
 * Turns validated create/update input (schemas.ts) into link fields, applying the rules of design §3.2
 * that a JSON Schema cannot express: address checks, slug rules, tag normalisation, flag coercion.
 * Pure: every check runs and all field errors are reported together.
 */
import type { Static } from "@sinclair/typebox";
import { AppError, invalidInput, type FieldError } from "./errors.ts";
import { isCountryCode } from "./facts/countries.ts";
import { headerSafeUrl, type AbVariant, type LinkRecord, type Rule } from "./link.ts";
import type { CreateLinkInput, UpdateLinkInput } from "./schemas.ts";
import { parseIsoDateTime } from "./time.ts";
import { schemaErrors } from "./validation.ts";

export const RESERVED_SLUGS = new Set([
  "api", "mcp", "dashboard", "docs", "healthz", "readyz", "metrics", "static", "assets", "login", "logout",
  "signup", "signin", "signout", "register", "admin", "favicon.ico", "robots.txt", "sitemap.xml", "well-known",
  ".well-known", "openapi", "openapi.json", "swagger", "health", "status", "settings", "account", "auth", "oauth",
]);
const SLUG = /^[A-Za-z0-9_-]{3,40}$/;
const DEVICE_MATCHES = new Set(["desktop", "mobile", "tablet", "ios", "android"]);
const CONTROL_CHARACTER = /[\x00-\x1f\x7f]/;

export interface InputContext {
  /** Hosts of this service's own short addresses; destinations there would loop. */
  ownHosts: string[];
}

/** Fields a create or an update may set, already normalised. Absent keys are left unchanged. */
export type LinkChanges = Partial<
  Pick<
    LinkRecord,
    | "target" | "expiresAt" | "startsAt" | "maxHits" | "status" | "tags" | "folder" | "utmSource" | "utmMedium"
    | "utmCampaign" | "rules" | "abUrls" | "webhookUrl" | "serveOg" | "ogTitle" | "ogDescription" | "ogImageUrl"
  >
> & {
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
    return void out.add(path, "must be an absolute http or https URL");
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return void out.add(path, "must use http or https");
  if (!u.hostname) return void out.add(path, "must have a host");
  if (ctx.ownHosts.includes(u.host.toLowerCase())) return void out.add(path, "must not point to this service's short addresses");
  const safe = headerSafeUrl(value);
  if (safe.length > 2048) return void out.add(path, "must be at most 2048 characters once encoded");
  return safe;
}

/** Slug rules of §3.2; throws slug_reserved or invalid_input. */
export function checkSlug(slug: string): string {
  // Reserved words first: some (favicon.ico, robots.txt) are not even made of slug characters.
  if (RESERVED_SLUGS.has(slug.toLowerCase())) throw new AppError("slug_reserved", `"${slug}" is reserved`, { errors: [{ path: "/slug", message: "is reserved" }] });
  if (!SLUG.test(slug)) {
    throw invalidInput([{ path: "/slug", message: "must be 3-40 characters of A-Z, a-z, 0-9, - and _" }], "slug is invalid");
  }
  return slug;
}

function date(value: string | null, path: string, out: Collector): number | null | undefined {
  if (value === null || value === "") return null;
  const ms = parseIsoDateTime(value);
  if (ms === null) return void out.add(path, "must be an ISO 8601 date-time that exists (e.g. 2030-01-31T12:00:00Z; without a zone it is UTC)");
  return ms;
}

const text = (v: string | null) => (v === null || v.trim() === "" ? null : v.trim());

export function normaliseTags(value: string | string[] | null, out: Collector): string[] | undefined {
  if (value === null) return [];
  const raw = Array.isArray(value) ? value : value.split(",");
  const tags = [...new Set(raw.map((t) => t.trim()).filter(Boolean))];
  if (tags.length > 20) return void out.add("/tags", "at most 20 tags");
  const long = tags.findIndex((t) => t.length > 40);
  if (long >= 0) return void out.add("/tags", "each tag must be at most 40 characters");
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
      if (!isCountryCode(match)) out.add(`/rules/${i}/match`, "must be an ISO 3166-1 alpha-2 country code (e.g. US, DE, GB)");
    } else {
      match = match.toLowerCase();
      if (!DEVICE_MATCHES.has(match)) out.add(`/rules/${i}/match`, "must be desktop, mobile, tablet, ios or android");
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

/** Normalises the fields shared by create and update. Throws invalid_input with every field error. */
export function normaliseChanges(input: CreateLinkInput | UpdateLinkInput, ctx: InputContext): LinkChanges {
  const out = new Collector();
  const c: LinkChanges = {};
  const target = "url" in input ? input.url : (input as UpdateLinkInput).targetUrl;
  const targetPath = "url" in input ? "/url" : "/targetUrl";
  if (target !== undefined) c.target = checkAddress(target.trim(), targetPath, ctx, out);
  if (input.expiresAt !== undefined) c.expiresAt = date(input.expiresAt, "/expiresAt", out);
  if (input.startsAt !== undefined) c.startsAt = date(input.startsAt, "/startsAt", out);
  if (input.maxHits !== undefined) c.maxHits = input.maxHits === "" ? null : input.maxHits;
  if (input.status !== undefined) c.status = input.status;
  if (input.password !== undefined) c.password = input.password === null || input.password === "" ? null : input.password;
  if (input.tags !== undefined) c.tags = normaliseTags(input.tags, out);
  if (input.folder !== undefined) c.folder = text(input.folder);
  if (input.utmSource !== undefined) c.utmSource = text(input.utmSource);
  if (input.utmMedium !== undefined) c.utmMedium = text(input.utmMedium);
  if (input.utmCampaign !== undefined) c.utmCampaign = text(input.utmCampaign);
  if (input.rules !== undefined) c.rules = rules(input.rules === "" ? null : input.rules, ctx, out);
  if (input.abUrls !== undefined) c.abUrls = abUrls(input.abUrls === "" ? null : input.abUrls, ctx, out);
  if (input.webhookUrl !== undefined) c.webhookUrl = optionalAddress(input.webhookUrl, "/webhookUrl", ctx, out);
  if (input.serveOg !== undefined) c.serveOg = parseFlag(input.serveOg);
  if (input.ogTitle !== undefined) c.ogTitle = text(input.ogTitle);
  if (input.ogDescription !== undefined) c.ogDescription = text(input.ogDescription);
  if (input.ogImageUrl !== undefined) c.ogImageUrl = optionalAddress(input.ogImageUrl, "/ogImageUrl", ctx, out);
  if (out.errors.length) throw invalidInput(out.errors);
  return c;
}

/**
 * A create or update body checked against its schema and the field rules in one go, so one answer names every
 * invalid field (a form need not be sent again to learn of the next): the fields the schema refuses are left
 * out, and the field rules judge the rest.
 */
export function validateLinkInput<S extends typeof CreateLinkInput | typeof UpdateLinkInput>(
  schema: S,
  raw: unknown,
  ctx: InputContext,
): { input: Static<S>; changes: LinkChanges } {
  const errors = schemaErrors(schema, raw);
  if (errors.length === 0) return { input: raw as Static<S>, changes: normaliseChanges(raw as Static<S>, ctx) };
  if (typeof raw === "object" && raw !== null && !Array.isArray(raw)) {
    const refused = new Set(errors.map((e) => e.path.split("/")[1]));
    const rest = Object.fromEntries(Object.entries(raw).filter(([k]) => !refused.has(k)));
    // Only missing fields may be wrong with the rest (those refused above); anything else is no input to judge.
    if (schemaErrors(schema, rest).every((e) => refused.has(e.path.split("/")[1]))) {
      try {
        normaliseChanges(rest as Static<S>, ctx);
      } catch (e) {
        if (!(e instanceof AppError) || !e.errors) throw e;
        errors.push(...e.errors);
      }
    }
  }
  throw invalidInput(errors);
}

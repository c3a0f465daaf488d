/**
 * Custom domains (issue #24, docs/domains.md): one function per operation, called by REST and the dashboard. A
 * domain serves nothing until its check passes (a DNS TXT record or an HTTP file holding its token); every change
 * of what redirectors serve is published on the HotState bus, so each keeps the verified domains in memory.
 */
import {
  CreateDomainInput, normaliseHostname, toDomainObject, UpdateDomainInput, type DomainObject, type DomainRecord,
} from "../../shared/domain.ts";
import { AppError, invalidInput, type FieldError } from "../../shared/errors.ts";
import { newId, newToken } from "../../shared/ids.ts";
import { FairLimiter } from "../../shared/limiter.ts";
import { linkKey, type LinkRecord } from "../../shared/link.ts";
import { checkAddress, ownHostsOf, type InputContext } from "../../shared/link-input.ts";
import { DOMAINS_CHANGED_CHANNEL, type LinkDisposal } from "../../shared/ports.ts";
import { schemaErrors } from "../../shared/validation.ts";
import { requireRole } from "../auth/roles.ts";
import type { Caller, Deps } from "../deps.ts";
import { servedAddressErrors } from "../links/destinations.ts";
import { checkDomain } from "./checks.ts";
import { recordAudit } from "../audit/service.ts";

/** Domains one account may have. */
export const MAX_DOMAINS = 50;

/** Checks reach out (DNS, HTTP) for up to 5 s each: eight at a time, shared fairly, as webhook target checks are. */
const checks = new FairLimiter(8);

/** The hostnames (no port) that are this service's own: BASE_URL's and OWN_HOSTS'. */
export function ownHostnames(deps: Deps): Set<string> {
  return new Set([deps.config.baseUrl, ...deps.config.ownBaseUrls].map((u) => new URL(u).hostname.toLowerCase()));
}

function addressContext(deps: Deps): InputContext {
  return { ownHosts: ownHostsOf([deps.config.baseUrl, ...deps.config.ownBaseUrls], deps.config.port) };
}

type Redirects = Pick<DomainRecord, "rootRedirect" | "notFoundRedirect">;

/** rootRedirect and notFoundRedirect as given, checked like link destinations; "" and null remove them. */
function redirectsOf(deps: Deps, body: Record<string, unknown>, errors: FieldError[]): Partial<Redirects> {
  const out: Partial<Redirects> = {};
  const ctx = addressContext(deps);
  const collector = { errors, add: (path: string, message: string) => void errors.push({ path, message }) };
  for (const name of ["rootRedirect", "notFoundRedirect"] as const) {
    const v = body[name];
    if (v === undefined || errors.some((e) => e.path === `/${name}`)) continue;
    if (v === null || v === "") out[name] = null;
    else {
      const checked = checkAddress(v as string, `/${name}`, ctx, collector);
      if (checked !== undefined) out[name] = checked;
    }
  }
  return out;
}

/**
 * Refuses (invalid_input) redirects to a verified custom domain or to the domain itself (verified later, it would
 * send its visitors round in a loop), as link destinations are refused (links/destinations.ts).
 */
async function refuseServedRedirects(deps: Deps, redirects: Partial<Redirects>, self: string): Promise<void> {
  const addresses = Object.entries(redirects).flatMap(([name, url]) => (url ? [{ path: `/${name}`, url }] : []));
  const errors = await servedAddressErrors(deps, addresses, undefined, self);
  if (errors.length) throw invalidInput(errors);
}

function objectOf(raw: unknown): Record<string, unknown> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw invalidInput([{ path: "/", message: "must be an object" }]);
  return raw as Record<string, unknown>;
}

/** Tells every redirector to re-read the verified domains; a lost message is caught up by their periodic re-read. */
function published(deps: Deps): Promise<void> {
  return deps.hot.publish(DOMAINS_CHANGED_CHANNEL, "changed").catch(() => {});
}

/** Times a change is applied again to a domain another request changed meanwhile. */
const CHANGE_ATTEMPTS = 5;

/**
 * Writes `change` of the caller's domain over the version it was made from (compare-and-set): when another request
 * got in first (a check and a PATCH at once), the domain is read again and the change made to that version.
 */
async function changeDomain(deps: Deps, caller: Caller, d: DomainRecord, change: (d: DomainRecord, now: number) => DomainRecord): Promise<DomainRecord> {
  for (let attempt = 1; ; attempt++) {
    const next = change(d, Math.max(deps.now(), d.updatedAt + 1));
    if (await deps.store.updateDomain(next, d.updatedAt)) return next;
    if (attempt === CHANGE_ATTEMPTS) throw new AppError("unavailable", "The domain is being changed by other requests; try again", { retryAfter: 1 });
    d = await ownDomain(deps, caller, d.id);
  }
}

/** The caller's domain, or not_found (also for another account's: no existence leaks). */
async function ownDomain(deps: Deps, caller: Caller, id: string): Promise<DomainRecord> {
  const d = typeof id === "string" && id.length <= 100 ? await deps.store.getDomain(id) : null;
  if (!d || d.accountId !== caller.workspaceId) throw new AppError("not_found", `No domain "${String(id).slice(0, 100)}"`);
  return d;
}

export async function createDomain(deps: Deps, caller: Caller, raw: unknown): Promise<DomainObject> {
  requireRole(caller, "admin", "Adding a domain");
  const body = objectOf(raw);
  const errors = schemaErrors(CreateDomainInput, body);
  let hostname: string | undefined;
  if (typeof body.hostname === "string" && !errors.some((e) => e.path === "/hostname")) {
    const n = normaliseHostname(body.hostname);
    if (!n.ok) errors.push({ path: "/hostname", message: n.message });
    else if (ownHostnames(deps).has(n.hostname)) errors.push({ path: "/hostname", message: "is this service's own host (BASE_URL or OWN_HOSTS)" });
    else hostname = n.hostname;
  }
  const redirects = redirectsOf(deps, body, errors);
  if (errors.length) throw invalidInput(errors);
  await refuseServedRedirects(deps, redirects, hostname!);
  if ((await deps.store.listDomains(caller.workspaceId)).length >= MAX_DOMAINS) {
    throw invalidInput([{ path: "/", message: `a workspace can have at most ${MAX_DOMAINS} domains` }], `A workspace can have at most ${MAX_DOMAINS} domains; delete one first`);
  }
  const now = deps.now();
  const d: DomainRecord = {
    id: `dom_${newId()}`, accountId: caller.workspaceId, hostname: hostname!, method: (body.method as DomainRecord["method"]) ?? "dns",
    token: `clink-verify-${newToken()}`, state: "pending", checkedAt: null, checkOk: null, checkResult: null, verifiedAt: null,
    rootRedirect: redirects.rootRedirect ?? null, notFoundRedirect: redirects.notFoundRedirect ?? null, createdAt: now, updatedAt: now,
  };
  if (!(await deps.store.createDomain(d))) throw new AppError("domain_taken", `${d.hostname} has already been added`);
  await recordAudit(deps, caller, "domain.created", { type: "domain", id: d.id }, { hostname: d.hostname, method: d.method });
  return toDomainObject(d);
}

export async function listDomains(deps: Deps, caller: Caller): Promise<{ domains: DomainObject[] }> {
  return { domains: (await deps.store.listDomains(caller.workspaceId)).map(toDomainObject) };
}

export async function getDomain(deps: Deps, caller: Caller, id: string): Promise<DomainObject> {
  return toDomainObject(await ownDomain(deps, caller, id));
}

/** Changes the method (a new check is needed: the domain is pending again) or the redirects. */
export async function updateDomain(deps: Deps, caller: Caller, id: string, raw: unknown): Promise<DomainObject> {
  requireRole(caller, "admin", "Changing a domain");
  const body = objectOf(raw);
  const errors = schemaErrors(UpdateDomainInput, body);
  const redirects = redirectsOf(deps, body, errors);
  if (errors.length) throw invalidInput(errors);
  const method = body.method as DomainRecord["method"] | undefined;
  const current = await ownDomain(deps, caller, id);
  await refuseServedRedirects(deps, redirects, current.hostname);
  const next = await changeDomain(deps, caller, current, (d, now) => ({
    ...d, ...redirects, updatedAt: now, ...(method !== undefined && method !== d.method ? { method, state: "pending" as const, verifiedAt: null } : {}),
  }));
  await published(deps);
  await recordAudit(deps, caller, "domain.updated", { type: "domain", id: next.id }, { hostname: next.hostname, fields: Object.keys(body).sort() });
  return toDomainObject(next);
}

/**
 * Runs the domain's check now and records it: verified when it passes, pending when it does not (a domain whose
 * record or file is gone stops serving at its next check).
 */
export async function verifyDomain(deps: Deps, caller: Caller, id: string): Promise<DomainObject> {
  requireRole(caller, "admin", "Checking a domain");
  const d = await ownDomain(deps, caller, id);
  const check = await checks.run(caller.workspaceId, () => checkDomain(d, deps.domainChecks ?? {}, deps.config.webhookAllowPrivate, deps.resolveHost));
  // A check of another method or token (changed while it ran) says nothing about the domain now: left as it is.
  const next = await changeDomain(deps, caller, d, (current, now) => current.method !== d.method || current.token !== d.token ? current : ({
    ...current, checkedAt: now, checkOk: check.ok, checkResult: check.result, updatedAt: now,
    state: check.ok ? "verified" : "pending", verifiedAt: check.ok ? (current.state === "verified" ? current.verifiedAt : now) : null,
  }));
  if (next.state !== d.state) await published(deps);
  if (next.state === "verified" && d.state !== "verified") {
    await recordAudit(deps, caller, "domain.verified", { type: "domain", id: d.id }, { hostname: d.hostname, method: next.method });
  }
  return toDomainObject(next);
}

export interface DeleteQuery {
  /** "delete": the domain's links go with it. */
  links?: string;
  /** A verified domain of the caller's, or "base": the domain's links move there, keeping their slugs. */
  moveTo?: string;
}

async function disposalOf(deps: Deps, caller: Caller, d: DomainRecord, q: DeleteQuery): Promise<LinkDisposal> {
  if (q.links !== undefined && q.moveTo !== undefined) throw invalidInput([{ path: "/links", message: "give links=delete or moveTo, not both" }]);
  if (q.links !== undefined) {
    if (q.links !== "delete") throw new AppError("invalid_parameter", "links must be \"delete\"", { errors: [{ path: "/links", message: "must be delete" }] });
    return { kind: "delete" };
  }
  if (q.moveTo === undefined) return { kind: "refuse" };
  const toDomain = q.moveTo === "base" ? deps.config.defaultDomain : await linkDomainOf(deps, caller, q.moveTo, "/moveTo");
  if (toDomain === d.hostname) throw invalidInput([{ path: "/moveTo", message: "is the domain being deleted" }]);
  return { kind: "move", toDomain };
}

/**
 * Deletes the domain. One with links is refused (domain_has_links) unless the same call says what happens to them:
 * `links=delete`, or `moveTo` another domain (refused with domain_slug_conflict when a slug is taken there).
 */
export async function deleteDomain(deps: Deps, caller: Caller, id: string, q: DeleteQuery): Promise<void> {
  requireRole(caller, "admin", "Deleting a domain");
  const d = await ownDomain(deps, caller, id);
  const disposal = await disposalOf(deps, caller, d, q);
  const r = await deps.store.deleteDomain(d.id, disposal);
  if (!r.ok && r.reason === "has_links") {
    throw new AppError("domain_has_links", `${d.hostname} has ${r.count} link${r.count === 1 ? "" : "s"}: delete with ?links=delete, or move them with ?moveTo=<domain> (or base)`);
  }
  if (!r.ok) throw new AppError("domain_slug_conflict", `${r.count} of the slugs on ${d.hostname} are taken on the target domain; nothing was changed`);
  await published(deps);
  const links = disposal.kind === "move" ? { linksMovedTo: disposal.toDomain } : { linksDeleted: disposal.kind === "delete" };
  await recordAudit(deps, caller, "domain.deleted", { type: "domain", id: d.id }, { hostname: d.hostname, links: r.links.length, ...links });
  // Redirectors drop their copies at the old keys (and forget "unknown" at the new ones); counters of deleted links go.
  for (const l of r.links) {
    await deps.hot.invalidateLink(linkKey(d.hostname, l.slug)).catch(() => {});
    if (disposal.kind === "move") await deps.hot.invalidateLink(linkKey(disposal.toDomain, l.slug)).catch(() => {});
    else await deps.hot.resetHits(l.id).catch(() => {});
  }
}

/**
 * A workspace's default domain while it is one of its own verified domains; null (the base domain) when none is set,
 * or the one set was deleted, fell back to pending or went to another workspace since: a stale value is ignored
 * here rather than cleared by every change of a domain, so nothing else has to keep it in step.
 */
export async function liveDefaultDomain(deps: Deps, w: { id: string; defaultDomain: string | null }): Promise<string | null> {
  if (w.defaultDomain === null) return null;
  const d = await deps.store.getDomainByHostname(w.defaultDomain);
  return d && d.accountId === w.id && d.state === "verified" ? d.hostname : null;
}

/** The domain a link made without one goes on: the workspace's live default domain, else the base one. */
export async function defaultLinkDomain(deps: Deps, caller: Caller): Promise<string> {
  const w = await deps.store.getWorkspace(caller.workspaceId);
  return (w && (await liveDefaultDomain(deps, w))) ?? deps.config.defaultDomain;
}

/**
 * The domain a link goes on: when none is given, `fallback` (defaultLinkDomain, read once by a bulk call) or the
 * workspace's default; the base one when BASE_URL's host is given, else a verified domain of the caller's workspace;
 * anything else is invalid_input at `path`, whether it is unknown, pending or another workspace's (no existence leaks).
 */
export async function linkDomainOf(deps: Deps, caller: Caller, given: unknown, path = "/domain", fallback?: string): Promise<string> {
  if (given === undefined || given === null || given === "") return fallback ?? defaultLinkDomain(deps, caller);
  // The base host as written in BASE_URL (with its port, or a single label such as localhost) names the base domain too.
  const spelled = typeof given === "string" ? given.trim().toLowerCase().replace(/\.$/, "") : "";
  if (spelled === deps.config.defaultDomain || ownHostnames(deps).has(spelled)) return deps.config.defaultDomain;
  const n = typeof given === "string" ? normaliseHostname(given) : null;
  const d = n?.ok ? await deps.store.getDomainByHostname(n.hostname) : null;
  if (!d || d.accountId !== caller.workspaceId || d.state !== "verified") {
    throw invalidInput([{ path, message: "must be a verified domain of your account (or left out for the base domain)" }]);
  }
  return d.hostname;
}

/**
 * Caddy's on-demand TLS `ask` (docs/domains.md): whether a certificate may be obtained for `host`. Only the base
 * host, OWN_HOSTS and verified domains: an unknown or pending host gets none, so nobody can make the server
 * request certificates for names that point at it.
 */
export async function mayHaveCertificate(deps: Deps, host: unknown): Promise<boolean> {
  if (typeof host !== "string") return false;
  const own = ownHostnames(deps);
  if (own.has(host.toLowerCase().replace(/\.$/, ""))) return true;
  const n = normaliseHostname(host);
  if (!n.ok) return false;
  if (own.has(n.hostname)) return true;
  return (await deps.store.getDomainByHostname(n.hostname))?.state === "verified";
}

/**
 * A link of the caller's by slug on a custom domain, when the base domain has none of theirs: their verified domains
 * are looked at oldest first (the API's /links/{slug} names one slug; the same slug on two domains finds the older's).
 */
export async function findOnOwnDomains(deps: Deps, caller: Caller, slug: string): Promise<LinkRecord | null> {
  for (const d of await deps.store.listDomains(caller.workspaceId)) {
    const link = await deps.store.getLink(d.hostname, slug);
    if (link && link.accountId === caller.workspaceId) return link;
  }
  return null;
}

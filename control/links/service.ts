/**
 * One function per link operation. REST, MCP and the dashboard all call these; they take a validated
 * input shape, do the I/O through the ports and return API objects or throw AppError.
 */
import { shortUrlOf } from "../../shared/domain.ts";
import { AppError, invalidInput, toAppError, type FieldError } from "../../shared/errors.ts";
import { randomSlug, newId } from "../../shared/ids.ts";
import { FairLimiter } from "../../shared/limiter.ts";
import { hashPassword } from "../../shared/passwords.ts";
import { LINK_STATES, LINK_STATUSES, isOneOf, listed } from "../../shared/enums.ts";
import { compileLink, linkKey, newLinkRecord, toLinkObject, type LinkRecord } from "../../shared/link.ts";
import { checkSlug, destinationsOf, ownHostsOf, validateLinkInput, type InputContext, type LinkChanges } from "../../shared/link-input.ts";
import { BulkCreateInput, type CreateLinkInput, type LinkObject, type UpdateLinkInput } from "../../shared/schemas.ts";
import { validate } from "../../shared/validation.ts";
import { generateWebhookSecret } from "../../shared/webhooks/sign.ts";
import { checkWebhookTarget } from "../../shared/webhooks/ssrf.ts";
import type { LinkFilter } from "../../shared/ports.ts";
import type { Caller, Deps } from "../deps.ts";
import { eventsWritten, linkEventsFor } from "../webhooks/events.ts";
import { defaultLinkDomain, findOnOwnDomains, linkDomainOf } from "../domains/service.ts";
import { refuseServedDomains, servedAddressErrorsOfRows } from "./destinations.ts";
import { auditBulk, auditLink } from "../audit/service.ts";

export const BULK_MAX = 500;

/**
 * A bulk's new links are put into HotState this many at a time, one batch (a Redis pipeline) after the other. All
 * 500 at once, a command each, queued some 1,500 commands on the process's one Redis connection, and another
 * account's request waited behind that queue at each of its own (1 ms -> 48 ms); now it waits behind one batch at
 * most. 32 links a batch took 16 round trips for 500, 100 a batch 5: the publication of 500 links on Postgres +
 * Redis, in process, 52 -> 35 ms (load 6-7).
 */
const BULK_PUBLISH_AT_ONCE = 100;

/** One per configuration: the own hosts are worked out once, not per request. */
const inputContexts = new WeakMap<Deps["config"], InputContext>();

function inputContext(deps: Deps): InputContext {
  let ctx = inputContexts.get(deps.config);
  if (ctx === undefined) inputContexts.set(deps.config, (ctx = { ownHosts: ownHostsOf([deps.config.baseUrl, ...deps.config.ownBaseUrls], deps.config.port) }));
  return ctx;
}

/**
 * Checking a webhook target resolves its host. A bulk of 500 webhook rows resolved all at once swamped the
 * resolver: another account's create, sent a second later, waited out the 3 s resolve timeout and was refused.
 * Eight checks at a time, shared fairly among accounts.
 */
const webhookChecks = new FairLimiter(8);

/** Webhook targets must not reach private networks (design §8 SSRF), checked when they are set. */
async function assertWebhookAllowed(deps: Deps, caller: Caller, url: string | null | undefined): Promise<void> {
  if (!url) return;
  const r = await webhookChecks.run(caller.workspaceId, () => checkWebhookTarget(url, deps.config.webhookAllowPrivate, deps.resolveHost));
  if (!r.ok) throw invalidInput([{ path: "/webhookUrl", message: r.reason }]);
}

/** Applies normalised changes to a link record (the password is hashed by the caller). */
function applyChanges(link: LinkRecord, c: LinkChanges, passwordHash: string | null | undefined): LinkRecord {
  const { password: _omit, ...fields } = c;
  const next: LinkRecord = { ...link, ...(fields as Partial<LinkRecord>) };
  if (passwordHash !== undefined) next.passwordHash = passwordHash;
  if (next.webhookUrl && !next.webhookSecret) next.webhookSecret = generateWebhookSecret();
  // Setting the webhook URL (again, or to another) resumes a webhook the sender paused.
  if (c.webhookUrl !== undefined) next.webhookPausedAt = next.webhookPausedReason = null;
  return next;
}

function checkSchedule(link: LinkRecord): void {
  if (link.startsAt !== null && link.expiresAt !== null && link.startsAt >= link.expiresAt) {
    throw invalidInput([{ path: "/startsAt", message: "must be before expiresAt" }]);
  }
}

/** A validated create: the record to insert, and the changes it carries (an upsert applies them to the link it names). */
type PreparedLink = { record: LinkRecord; customSlug: boolean; changes: LinkChanges; passwordHash: string | null | undefined };

/**
 * Validates and normalises one create input into a record ready to insert. Synchronous unless the input needs
 * I/O (a webhook target to resolve, a password to hash), so a bulk of plain links makes no promise per row.
 * `defaultDomain`: where a link without a domain goes (defaultLinkDomain, read once per call).
 */
function prepareCreate(deps: Deps, caller: Caller, raw: unknown, defaultDomain: string): PreparedLink | Promise<PreparedLink> {
  const { input, changes } = validateLinkInput<CreateLinkInput>("create", raw, inputContext(deps));
  const slug = input.slug !== undefined ? checkSlug(input.slug) : randomSlug();
  const finish = (passwordHash: string | null | undefined, domain = defaultDomain): PreparedLink => {
    const identity = { id: newId(), accountId: caller.workspaceId, domain, slug, target: changes.target!, createdAt: deps.now() };
    const record = applyChanges(newLinkRecord(identity), changes, passwordHash);
    checkSchedule(record);
    return { record, customSlug: input.slug !== undefined, changes, passwordHash };
  };
  if (!changes.webhookUrl && !changes.password && !input.domain) return finish(changes.password);
  return (async () => {
    const domain = await linkDomainOf(deps, caller, input.domain, "/domain", defaultDomain);
    await assertWebhookAllowed(deps, caller, changes.webhookUrl);
    return finish(changes.password ? await hashPassword(caller.workspaceId, changes.password) : changes.password, domain);
  })();
}

/**
 * Puts the compiled link into HotState (so redirectors serve it even while the store is down) and tells them to
 * drop their copies. A delete or a newer update that ran meanwhile may have been overwritten by this
 * write, so the store is read back and, when it no longer holds this version, the entry is dropped again
 * (redirectors then read the store). Bulk creates publish with publishNew.
 */
async function publish(deps: Deps, link: LinkRecord): Promise<void> {
  const key = linkKey(link.domain, link.slug);
  // The store is the source of truth; a failing cache write must not fail the request.
  try {
    // Both sent at once (one round trip fewer): the delete goes out before the set, and a redirector that re-reads between the two finds the link in the store and back-fills.
    await Promise.all([deps.hot.invalidateLink(key), deps.hot.setLink(key, compileLink(link))]);
    if ((await deps.store.getLinkById(link.id))?.updatedAt !== link.updatedAt) await deps.hot.invalidateLink(key);
  } catch {
    /* redirectors fall back to the store and back-fill */
  }
}

/**
 * Puts new links into HotState (as publish does, without its read-back: nobody else knows their slugs yet), a
 * batch of BULK_PUBLISH_AT_ONCE at a time: one Redis round trip a batch instead of two a link.
 */
async function publishNew(deps: Deps, links: LinkRecord[]): Promise<void> {
  for (let i = 0; i < links.length; i += BULK_PUBLISH_AT_ONCE) {
    const batch = links.slice(i, i + BULK_PUBLISH_AT_ONCE).map((l) => ({ key: linkKey(l.domain, l.slug), link: compileLink(l) }));
    // The store is the source of truth; a failing cache write must not fail the request.
    await deps.hot.publishLinks(batch).catch(() => {});
  }
}

/** One multi-row write of new links with their link.created events, in one transaction. */
async function insertWithEvents(deps: Deps, records: LinkRecord[]): Promise<boolean[]> {
  const events = await linkEventsFor(deps, "link.created", records);
  const ok = await deps.store.insertLinks(records, events);
  eventsWritten(events);
  return ok;
}

/** Inserts prepared records in one multi-row write, retrying random slugs that collided. */
async function insertAll(deps: Deps, rows: PreparedLink[]): Promise<boolean[]> {
  const ok = await insertWithEvents(deps, rows.map((r) => r.record));
  for (let attempt = 0; attempt < 3; attempt++) {
    const retry = rows.map((r, i) => i).filter((i) => !ok[i] && !rows[i].customSlug);
    if (!retry.length) break;
    for (const i of retry) rows[i].record.slug = randomSlug();
    const again = await insertWithEvents(deps, retry.map((i) => rows[i].record));
    retry.forEach((i, j) => (ok[i] = again[j]));
  }
  return ok;
}

/** Prefix of a path segment that names a link by its externalId instead of its slug (`/links/ext_{externalId}`). */
export const EXTERNAL_ID_PREFIX = "ext_";

/**
 * The API view of a link now. For a limited link, the hits served: the redirectors' counter when one is running,
 * else what a counter started now would start from (recorded or reserved hits, whichever is more: after a crash
 * the reserved block counts as served, so the state says limit_reached when the link answers 410).
 */
async function view(deps: Deps, link: LinkRecord): Promise<LinkObject> {
  if (link.maxHits === null) return toLinkObject(link, deps.config, deps.now());
  const counted = await deps.hot.peekHits(link.id).catch(() => null);
  const stored = counted === null ? await deps.store.storedHits(link.id).catch(() => null) : null;
  const hits = counted ?? Math.max(link.hits, stored?.reserved ?? 0);
  return toLinkObject(link, deps.config, deps.now(), hits);
}

/** The caller's link with this externalId, or null. */
async function findByExternalId(deps: Deps, caller: Caller, externalId: string): Promise<LinkRecord | null> {
  const { links } = await deps.store.listLinks(caller.workspaceId, { limit: 1, externalId });
  return links[0] ?? null;
}

/** What a create did: inserted a link, or (its externalId named one) updated that link. */
export interface CreateResult {
  link: LinkObject;
  created: boolean;
}

/**
 * An upsert: the create names, by externalId, a link the caller has; its fields are applied to that link as an
 * update would (only the fields present change). The slug cannot be changed this way: other systems know it.
 */
async function upsertInto(deps: Deps, caller: Caller, existing: LinkRecord, prepared: PreparedLink): Promise<LinkRecord> {
  if (prepared.customSlug && prepared.record.slug !== existing.slug) {
    throw invalidInput(
      [{ path: "/slug", message: `externalId "${existing.externalId}" names the link "${existing.slug}"; leave slug out or give that one` }],
      "A create with an existing externalId updates that link and cannot change its slug",
    );
  }
  return applyUpdate(deps, caller, existing, prepared.changes, prepared.passwordHash);
}

/** An upsert's result, recorded as an update of the link it named. */
async function upserted(deps: Deps, caller: Caller, existing: LinkRecord, prepared: PreparedLink): Promise<CreateResult> {
  const link = await upsertInto(deps, caller, existing, prepared);
  await auditLink(deps, caller, "link.updated", link, prepared.changes);
  return { link: await view(deps, link), created: false };
}

export async function createLink(deps: Deps, caller: Caller, raw: unknown): Promise<CreateResult> {
  const prepared = await prepareCreate(deps, caller, raw, await defaultLinkDomain(deps, caller));
  await refuseServedDomains(deps, prepared.changes, "create");
  const externalId = prepared.record.externalId;
  const existing = externalId === null ? null : await findByExternalId(deps, caller, externalId);
  if (existing) return upserted(deps, caller, existing, prepared);
  const [ok] = await insertAll(deps, [prepared]);
  if (!ok) {
    // Another request created a link with this externalId meanwhile: this one updates it.
    const raced = externalId === null ? null : await findByExternalId(deps, caller, externalId);
    if (raced) return upserted(deps, caller, raced, prepared);
    if (prepared.customSlug) throw new AppError("slug_taken", `"${prepared.record.slug}" is already taken`);
    throw new AppError("unavailable", "Could not allocate a free slug; try again", { retryAfter: 1 });
  }
  await publish(deps, prepared.record);
  await auditLink(deps, caller, "link.created", prepared.record);
  return { link: await view(deps, prepared.record), created: true };
}

export type BulkRow =
  | { index: number; ok: true; slug: string; domain: string; shortUrl: string; target: string; action: "created" | "updated" }
  | { index: number; ok: false; error: ReturnType<AppError["toProblem"]> };

/** Bulk create (REST, MCP, the dashboard): createLinkRows, recorded as one audit entry. */
export async function bulkCreateLinks(deps: Deps, caller: Caller, rows: unknown[]) {
  // The entry is written while the new links are being published (a round trip fewer to wait for).
  return createLinkRows(deps, caller, rows, (result) => {
    const slugs = result.results.flatMap((r) => (r.ok ? [r.slug] : []));
    return auditBulk(deps, caller, "links.bulk_created", slugs, { created: result.created, updated: result.updated, failed: result.failed });
  });
}

export interface CreateRowsResult {
  results: BulkRow[];
  created: number;
  updated: number;
  failed: number;
}

/**
 * Bulk create (design §3): every row validated alone, the valid ones written in one multi-row insert. A row
 * whose externalId names an existing link of the caller updates that link instead (one by one: upserts are rare).
 * Not audited itself: bulkCreateLinks records the call (in `alongside`, which runs once every row has its result,
 * while the new links are published; the answer waits for both), an import its end.
 */
export async function createLinkRows(deps: Deps, caller: Caller, rows: unknown[], alongside?: (result: CreateRowsResult) => Promise<void>): Promise<CreateRowsResult> {
  if (rows.length > BULK_MAX) {
    throw invalidInput([{ path: "/", message: `at most ${BULK_MAX} links per request` }], `Bulk create takes at most ${BULK_MAX} links`);
  }
  const results: BulkRow[] = new Array(rows.length);
  const prepared: { index: number; row: PreparedLink }[] = [];
  const failed = (index: number, e: unknown) => (results[index] = { index, ok: false, error: toAppError(e).toProblem() });
  const succeeded = (index: number, r: LinkRecord, action: "created" | "updated") =>
    (results[index] = { index, ok: true, slug: r.slug, domain: r.domain, shortUrl: shortUrlOf(deps.config, r.domain, r.slug), target: r.target, action });
  const pending: Promise<void>[] = [];
  const defaultDomain = await defaultLinkDomain(deps, caller);
  rows.forEach((raw, index) => {
    try {
      const row = prepareCreate(deps, caller, raw, defaultDomain);
      if (row instanceof Promise) pending.push(row.then((r) => void prepared.push({ index, row: r }), (e) => void failed(index, e)));
      else prepared.push({ index, row });
    } catch (e) {
      failed(index, e);
    }
  });
  await Promise.all(pending);
  prepared.sort((a, b) => a.index - b.index);
  const served = await servedDomainRows(deps, prepared);
  for (const [index, errors] of served) failed(index, invalidInput(errors));
  if (served.size) prepared.splice(0, prepared.length, ...prepared.filter((p) => !served.has(p.index)));
  const inserts = await upsertsSetAside(deps, caller, prepared, succeeded, failed);
  // Two rows asking for the same custom slug or externalId: the first wins, as the multi-row insert would decide.
  const seen = new Set<string>();
  const unique = inserts.filter(({ index, row }) => {
    const keys = [row.customSlug ? `slug:${row.record.domain}/${row.record.slug}` : null, row.record.externalId === null ? null : `ext:${row.record.externalId}`];
    const taken = keys.find((k) => k !== null && seen.has(k));
    if (taken) {
      const error = taken.startsWith("slug:")
        ? new AppError("slug_taken", `"${row.record.slug}" is already taken`)
        : invalidInput([{ path: "/externalId", message: "is given by an earlier row of this request" }]);
      failed(index, error);
      return false;
    }
    for (const k of keys) if (k !== null) seen.add(k);
    return true;
  });
  const ok = unique.length ? await insertAll(deps, unique.map((p) => p.row)) : [];
  const inserted = unique.filter((_, i) => ok[i]).map(({ index, row }) => (succeeded(index, row.record, "created"), row.record));
  const publishing = publishNew(deps, inserted);
  await Promise.all(
    unique.filter((_, i) => !ok[i]).map(async ({ index, row }) => {
      const r = row.record;
      if (r.externalId !== null && (await findByExternalId(deps, caller, r.externalId))) {
        failed(index, invalidInput([{ path: "/externalId", message: "was taken by another request meanwhile; send the row again to update that link" }]));
      } else {
        failed(index, new AppError("slug_taken", `"${r.slug}" is already taken`));
      }
    }),
  );
  const created = results.filter((r) => r.ok && r.action === "created").length;
  const updated = results.filter((r) => r.ok && r.action === "updated").length;
  const result = { results, created, updated, failed: results.length - created - updated };
  await Promise.all([publishing, alongside?.(result)]);
  return result;
}

/** The prepared rows with a destination on a verified custom domain, by index, with their errors (one lookup per host). */
async function servedDomainRows(deps: Deps, prepared: { index: number; row: PreparedLink }[]): Promise<Map<number, FieldError[]>> {
  const errors = await servedAddressErrorsOfRows(deps, prepared.map(({ row }) => destinationsOf(row.changes, "create")));
  const out = new Map<number, FieldError[]>();
  prepared.forEach(({ index }, i) => errors[i].length && out.set(index, errors[i]));
  return out;
}

/** Applies the rows whose externalId names an existing link as updates; returns the rows left to insert. */
async function upsertsSetAside(
  deps: Deps,
  caller: Caller,
  prepared: { index: number; row: PreparedLink }[],
  succeeded: (index: number, r: LinkRecord, action: "updated") => void,
  failed: (index: number, e: unknown) => void,
): Promise<{ index: number; row: PreparedLink }[]> {
  const withIds = prepared.filter((p) => p.row.record.externalId !== null);
  if (withIds.length === 0) return prepared;
  const existing = new Map<number, LinkRecord>();
  for (const p of withIds) {
    const link = await findByExternalId(deps, caller, p.row.record.externalId!);
    if (link) existing.set(p.index, link);
  }
  for (const p of prepared) {
    const link = existing.get(p.index);
    if (!link) continue;
    try {
      succeeded(p.index, await upsertInto(deps, caller, link, p.row), "updated");
    } catch (e) {
      failed(p.index, e);
    }
  }
  return prepared.filter((p) => !existing.has(p.index));
}

/**
 * The domain a `domain` parameter names (`?domain=` of the list and of a link's routes, the MCP tools' `domain`):
 * the base domain (its host as BASE_URL or OWN_HOSTS spell it) or a verified domain of the caller's workspace, in any
 * spelling a hostname has; undefined when not given (or ""). Anything else, unknown, pending or another workspace's
 * alike, is unknown_domain (400).
 */
export async function domainParamOf(deps: Deps, caller: Caller, given: unknown): Promise<string | undefined> {
  if (given === undefined || given === "") return undefined;
  try {
    if (typeof given === "string" && given.length <= 300) return await linkDomainOf(deps, caller, given);
  } catch (e) {
    if (!(e instanceof AppError) || e.code !== "invalid_input") throw e;
  }
  const message = "must be a verified domain of your workspace, or the base domain";
  throw new AppError("unknown_domain", `domain: ${typeof given === "string" ? `"${given.slice(0, 300)}" ` : ""}${message}`, { errors: [{ path: "/domain", message }] });
}

/**
 * A link of the caller's account, or not_found (also for another account's link: no existence leaks). `ext_…`
 * names the link by its externalId; a link whose slug itself starts so (made before the prefix was reserved) is
 * still found by its slug. `domain` (domainParamOf) says which domain's link a slug names; without it, the base
 * domain's, else the one on the caller's oldest domain (findOnOwnDomains): give it when a slug is on two domains.
 */
export async function findOwnLink(deps: Deps, caller: Caller, slug: string, domain?: unknown): Promise<LinkRecord> {
  const on = await domainParamOf(deps, caller, domain);
  const named = typeof slug === "string" && slug.length <= 200;
  let link: LinkRecord | null = null;
  if (typeof slug === "string" && slug.startsWith(EXTERNAL_ID_PREFIX) && slug.length <= 200 + EXTERNAL_ID_PREFIX.length) {
    link = await findByExternalId(deps, caller, slug.slice(EXTERNAL_ID_PREFIX.length));
    if (link && on !== undefined && link.domain !== on) link = null;
  }
  if (!link && named) link = await deps.store.getLink(on ?? deps.config.defaultDomain, slug);
  if ((!link || link.accountId !== caller.workspaceId) && named && on === undefined) link = await findOnOwnDomains(deps, caller, slug);
  if (!link || link.accountId !== caller.workspaceId) throw new AppError("not_found", `No link "${String(slug).slice(0, 200)}"${on === undefined ? "" : ` on ${on}`}`);
  return link;
}

export async function getLink(deps: Deps, caller: Caller, slug: string, domain?: unknown): Promise<LinkObject> {
  return view(deps, await findOwnLink(deps, caller, slug, domain));
}

/** Times an update is re-applied to a link that another request changed in the meantime. */
const UPDATE_ATTEMPTS = 5;

/**
 * Writes normalised changes over the link, compare-and-set on its version: when another update got in first, its
 * result is read again and these changes applied to it, so "only the fields present change" holds under concurrency.
 */
async function applyUpdate(deps: Deps, caller: Caller, link: LinkRecord, changes: LinkChanges, passwordHash: string | null | undefined): Promise<LinkRecord> {
  for (let attempt = 1; ; attempt++) {
    const next = applyChanges(link, changes, passwordHash);
    checkSchedule(next);
    next.updatedAt = Math.max(deps.now(), link.updatedAt + 1);
    const events = await linkEventsFor(deps, "link.updated", [next]);
    if (await deps.store.updateLink(next, link.updatedAt, events)) {
      eventsWritten(events);
      // The counter stays valid while a limit exists (the limit is passed on every take); it is stale only
      // when counting stopped or starts, so only then is it dropped and re-seeded from the store.
      if ((next.maxHits === null) !== (link.maxHits === null)) await deps.hot.resetHits(link.id).catch(() => {});
      await publish(deps, next);
      return next;
    }
    if (attempt === UPDATE_ATTEMPTS) throw new AppError("unavailable", "The link is being changed by other requests; try again", { retryAfter: 1 });
    const current = await deps.store.getLinkById(link.id);
    if (!current || current.accountId !== caller.workspaceId) throw new AppError("not_found", `No link "${link.slug}"`);
    link = current;
  }
}

export async function updateLink(deps: Deps, caller: Caller, slug: string, raw: unknown, domain?: unknown): Promise<LinkObject> {
  const { changes } = validateLinkInput<UpdateLinkInput>("update", raw, inputContext(deps));
  await refuseServedDomains(deps, changes, "update");
  const link = await findOwnLink(deps, caller, slug, domain);
  await assertWebhookAllowed(deps, caller, changes.webhookUrl);
  const passwordHash = changes.password ? await hashPassword(caller.workspaceId, changes.password) : changes.password;
  const updated = await applyUpdate(deps, caller, link, changes, passwordHash);
  await auditLink(deps, caller, "link.updated", updated, changes);
  return view(deps, updated);
}

export async function deleteLink(deps: Deps, caller: Caller, slug: string, domain?: unknown): Promise<void> {
  const link = await findOwnLink(deps, caller, slug, domain);
  await removeLink(deps, link);
  await auditLink(deps, caller, "link.deleted", link);
}

/** Deletes a link already found to be the caller's, and drops the redirectors' copy and its hit counter. */
export async function removeLink(deps: Deps, link: LinkRecord): Promise<void> {
  const events = await linkEventsFor(deps, "link.deleted", [link]);
  await deps.store.deleteLink(link.id, events);
  eventsWritten(events);
  await deps.hot.invalidateLink(linkKey(link.domain, link.slug)).catch(() => {});
  await deps.hot.resetHits(link.id).catch(() => {});
}

/** An update's input, validated and normalised (invalid_input naming each bad field), without applying it. */
export function validateUpdate(deps: Deps, raw: unknown): LinkChanges {
  return validateLinkInput<UpdateLinkInput>("update", raw, inputContext(deps)).changes;
}

/** Update changes checked once for many links: the webhook target resolved, the password hashed (bulk changes). */
export interface PreparedUpdate {
  changes: LinkChanges;
  passwordHash: string | null | undefined;
}

export async function prepareUpdate(deps: Deps, caller: Caller, changes: LinkChanges): Promise<PreparedUpdate> {
  await assertWebhookAllowed(deps, caller, changes.webhookUrl);
  return { changes, passwordHash: changes.password ? await hashPassword(caller.workspaceId, changes.password) : changes.password };
}

/** Applies prepared changes to a link found to be the caller's, as updateLink does (compare-and-set, published). */
export async function applyPreparedUpdate(deps: Deps, caller: Caller, link: LinkRecord, p: PreparedUpdate): Promise<LinkObject> {
  return view(deps, await applyUpdate(deps, caller, link, p.changes, p.passwordHash));
}

export interface ListQuery {
  limit?: string | number;
  cursor?: string;
  tag?: string;
  folder?: string;
  status?: string;
  state?: string;
  externalId?: string;
  q?: string;
  /** A domain's links only (domainParamOf). */
  domain?: string;
}

/** The list's query, validated (invalid_input naming each bad parameter), as the store's filter and page size. */
function listFilterOf(deps: Deps, query: ListQuery): LinkFilter {
  const errors: FieldError[] = [];
  // Digits only: Number() would also take "0x10", "1e2" or " 7".
  const limit = query.limit === undefined || query.limit === "" ? 50 : typeof query.limit === "string" && !/^\d{1,4}$/.test(query.limit) ? NaN : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) errors.push({ path: "/limit", message: "must be an integer from 1 to 500" });
  if (query.status !== undefined && query.status !== "" && !isOneOf(LINK_STATUSES, query.status)) {
    errors.push({ path: "/status", message: `must be ${listed(LINK_STATUSES)}` });
  }
  if (query.state !== undefined && query.state !== "" && !isOneOf(LINK_STATES, query.state)) {
    errors.push({ path: "/state", message: `must be ${listed(LINK_STATES)}` });
  }
  for (const k of ["cursor", "tag", "folder", "q", "externalId"] as const) {
    const v = query[k];
    if (v !== undefined && (typeof v !== "string" || v.length > 500)) errors.push({ path: `/${k}`, message: "must be a string of at most 500 characters" });
  }
  if (errors.length) throw invalidInput(errors);
  return {
    limit,
    cursor: query.cursor || undefined,
    tag: query.tag || undefined,
    folder: query.folder || undefined,
    status: isOneOf(LINK_STATUSES, query.status) ? query.status : undefined,
    state: isOneOf(LINK_STATES, query.state) ? { state: query.state, now: deps.now() } : undefined,
    externalId: query.externalId || undefined,
    q: query.q || undefined,
  };
}

/** A page of the caller's links as stored (listLinks without the API view: bulk changes act on them). */
export async function listLinkRecords(deps: Deps, caller: Caller, query: ListQuery) {
  const filter = listFilterOf(deps, query);
  return deps.store.listLinks(caller.workspaceId, { ...filter, domain: await domainParamOf(deps, caller, query.domain) });
}

export async function listLinks(deps: Deps, caller: Caller, query: ListQuery) {
  const { links, nextCursor } = await listLinkRecords(deps, caller, query);
  return { links: await Promise.all(links.map((l) => view(deps, l))), nextCursor };
}

/** How many of the caller's links the list's filters match (paging aside); with `max`, at most that many. */
export async function countLinks(deps: Deps, caller: Caller, query: Omit<ListQuery, "limit" | "cursor">, max?: number): Promise<number> {
  const { limit: _limit, cursor: _cursor, ...match } = listFilterOf(deps, query);
  return deps.store.countLinks(caller.workspaceId, { ...match, domain: await domainParamOf(deps, caller, query.domain) }, max);
}

/** The rows of a bulk request: a bare array or `{ "links": [...] }`. */
export function bulkRowsOf(body: unknown): unknown[] {
  const input = validate(BulkCreateInput, body);
  return Array.isArray(input) ? input : input.links;
}

/**
 * One function per link operation. REST, MCP and the dashboard all call these; they take a validated
 * input shape, do the I/O through the ports and return API objects or throw AppError.
 */
import { AppError, invalidInput, toAppError, type FieldError } from "../../shared/errors.ts";
import { randomSlug, newId } from "../../shared/ids.ts";
import { hashPassword } from "../../shared/passwords.ts";
import { compileLink, linkKey, toLinkObject, type LinkRecord, type LinkStatus } from "../../shared/link.ts";
import { checkSlug, validateLinkInput, type InputContext, type LinkChanges } from "../../shared/link-input.ts";
import { BulkCreateInput, CreateLinkInput, UpdateLinkInput, type LinkObject } from "../../shared/schemas.ts";
import { validate } from "../../shared/validation.ts";
import { generateWebhookSecret } from "../../shared/webhooks/sign.ts";
import { checkWebhookTarget } from "../../shared/webhooks/ssrf.ts";
import type { Caller, Deps } from "../deps.ts";

export const BULK_MAX = 500;

function inputContext(deps: Deps): InputContext {
  return { ownHosts: [deps.config.defaultDomain] };
}

/** Webhook targets must not reach private networks (design §8 SSRF), checked when they are set. */
async function assertWebhookAllowed(deps: Deps, url: string | null | undefined): Promise<void> {
  if (!url) return;
  const r = await checkWebhookTarget(url, deps.config.webhookAllowPrivate);
  if (!r.ok) throw invalidInput([{ path: "/webhookUrl", message: r.reason }]);
}

/** Applies normalised changes to a link record (the password is hashed by the caller). */
function applyChanges(link: LinkRecord, c: LinkChanges, passwordHash: string | null | undefined): LinkRecord {
  const { password: _omit, ...fields } = c;
  const next: LinkRecord = { ...link, ...(fields as Partial<LinkRecord>) };
  if (passwordHash !== undefined) next.passwordHash = passwordHash;
  if (next.webhookUrl && !next.webhookSecret) next.webhookSecret = generateWebhookSecret();
  return next;
}

function checkSchedule(link: LinkRecord): void {
  if (link.startsAt !== null && link.expiresAt !== null && link.startsAt >= link.expiresAt) {
    throw invalidInput([{ path: "/startsAt", message: "must be before expiresAt" }]);
  }
}

function newLinkRecord(deps: Deps, caller: Caller, slug: string, target: string): LinkRecord {
  const now = deps.now();
  return {
    id: newId(), accountId: caller.accountId, domain: deps.config.defaultDomain, slug, target, status: "active",
    createdAt: now, updatedAt: now, expiresAt: null, startsAt: null, maxHits: null, hits: 0, passwordHash: null,
    tags: [], folder: null, utmSource: null, utmMedium: null, utmCampaign: null, rules: [], abUrls: [],
    webhookUrl: null, webhookSecret: null, serveOg: false, ogTitle: null, ogDescription: null, ogImageUrl: null,
  };
}

type PreparedLink = { record: LinkRecord; customSlug: boolean };

/**
 * Validates and normalises one create input into a record ready to insert. Synchronous unless the input needs
 * I/O (a webhook target to resolve, a password to hash), so a bulk of plain links makes no promise per row.
 */
function prepareCreate(deps: Deps, caller: Caller, raw: unknown): PreparedLink | Promise<PreparedLink> {
  const { input, changes } = validateLinkInput(CreateLinkInput, raw, inputContext(deps));
  const slug = input.slug !== undefined ? checkSlug(input.slug) : randomSlug();
  const finish = (passwordHash: string | null | undefined): PreparedLink => {
    const record = applyChanges(newLinkRecord(deps, caller, slug, changes.target!), changes, passwordHash);
    checkSchedule(record);
    return { record, customSlug: input.slug !== undefined };
  };
  if (!changes.webhookUrl && !changes.password) return finish(changes.password);
  return (async () => {
    await assertWebhookAllowed(deps, changes.webhookUrl);
    return finish(changes.password ? await hashPassword(changes.password) : changes.password);
  })();
}

/**
 * Puts the compiled link into HotState (so redirectors serve it even while the store is down) and tells them to
 * drop their copies. `verify`: a delete or a newer update that ran meanwhile may have been overwritten by this
 * write, so the store is read back and, when it no longer holds this version, the entry is dropped again
 * (redirectors then read the store). Bulk creates skip it: their links are new, nobody else knows their slugs yet.
 */
async function publish(deps: Deps, link: LinkRecord, verify = true): Promise<void> {
  const key = linkKey(link.domain, link.slug);
  // The store is the source of truth; a failing cache write must not fail the request.
  try {
    await deps.hot.invalidateLink(key);
    await deps.hot.setLink(key, compileLink(link));
    if (verify && (await deps.store.getLinkById(link.id))?.updatedAt !== link.updatedAt) await deps.hot.invalidateLink(key);
  } catch {
    /* redirectors fall back to the store and back-fill */
  }
}

/** Inserts prepared records in one multi-row write, retrying random slugs that collided. */
async function insertAll(deps: Deps, rows: PreparedLink[]): Promise<boolean[]> {
  const ok = await deps.store.insertLinks(rows.map((r) => r.record));
  for (let attempt = 0; attempt < 3; attempt++) {
    const retry = rows.map((r, i) => i).filter((i) => !ok[i] && !rows[i].customSlug);
    if (!retry.length) break;
    for (const i of retry) rows[i].record.slug = randomSlug();
    const again = await deps.store.insertLinks(retry.map((i) => rows[i].record));
    retry.forEach((i, j) => (ok[i] = again[j]));
  }
  return ok;
}

export async function createLink(deps: Deps, caller: Caller, raw: unknown): Promise<LinkObject> {
  const prepared = await prepareCreate(deps, caller, raw);
  const [ok] = await insertAll(deps, [prepared]);
  if (!ok) {
    if (prepared.customSlug) throw new AppError("slug_taken", `"${prepared.record.slug}" is already taken`);
    throw new AppError("unavailable", "Could not allocate a free slug; try again", { retryAfter: 1 });
  }
  await publish(deps, prepared.record);
  return toLinkObject(prepared.record, deps.config.baseUrl);
}

export type BulkRow =
  | { index: number; ok: true; slug: string; shortUrl: string; target: string }
  | { index: number; ok: false; error: ReturnType<AppError["toProblem"]> };

/** Bulk create (design §3): every row validated alone, the valid ones written in one multi-row insert. */
export async function bulkCreateLinks(deps: Deps, caller: Caller, rows: unknown[]) {
  if (rows.length > BULK_MAX) {
    throw invalidInput([{ path: "/", message: `at most ${BULK_MAX} links per request` }], `Bulk create takes at most ${BULK_MAX} links`);
  }
  const results: BulkRow[] = new Array(rows.length);
  const prepared: { index: number; row: PreparedLink }[] = [];
  const seen = new Set<string>();
  const failed = (index: number, e: unknown) => (results[index] = { index, ok: false, error: toAppError(e).toProblem() });
  const pending: Promise<void>[] = [];
  rows.forEach((raw, index) => {
    try {
      const row = prepareCreate(deps, caller, raw);
      if (row instanceof Promise) pending.push(row.then((r) => void prepared.push({ index, row: r }), (e) => void failed(index, e)));
      else prepared.push({ index, row });
    } catch (e) {
      failed(index, e);
    }
  });
  await Promise.all(pending);
  prepared.sort((a, b) => a.index - b.index);
  // Two rows asking for the same custom slug: the first wins, as the multi-row insert would decide.
  const unique = prepared.filter(({ index, row }) => {
    if (!row.customSlug) return true;
    if (seen.has(row.record.slug)) {
      results[index] = { index, ok: false, error: new AppError("slug_taken", `"${row.record.slug}" is already taken`).toProblem() };
      return false;
    }
    seen.add(row.record.slug);
    return true;
  });
  const ok = unique.length ? await insertAll(deps, unique.map((p) => p.row)) : [];
  await Promise.all(
    unique.map(async ({ index, row }, i) => {
      const r = row.record;
      if (ok[i]) {
        results[index] = { index, ok: true, slug: r.slug, shortUrl: `${deps.config.baseUrl}/${r.slug}`, target: r.target };
        await publish(deps, r, false);
      } else {
        results[index] = { index, ok: false, error: new AppError("slug_taken", `"${r.slug}" is already taken`).toProblem() };
      }
    }),
  );
  const created = results.filter((r) => r.ok).length;
  return { results, created, failed: results.length - created };
}

/** A link of the caller's account, or not_found (also for another account's link: no existence leaks). */
export async function findOwnLink(deps: Deps, caller: Caller, slug: string): Promise<LinkRecord> {
  const link = typeof slug === "string" && slug.length <= 200 ? await deps.store.getLink(deps.config.defaultDomain, slug) : null;
  if (!link || link.accountId !== caller.accountId) throw new AppError("not_found", `No link "${String(slug).slice(0, 200)}"`);
  return link;
}

export async function getLink(deps: Deps, caller: Caller, slug: string): Promise<LinkObject> {
  return toLinkObject(await findOwnLink(deps, caller, slug), deps.config.baseUrl);
}

/** Times an update is re-applied to a link that another request changed in the meantime. */
const UPDATE_ATTEMPTS = 5;

export async function updateLink(deps: Deps, caller: Caller, slug: string, raw: unknown): Promise<LinkObject> {
  const { changes } = validateLinkInput(UpdateLinkInput, raw, inputContext(deps));
  let link = await findOwnLink(deps, caller, slug);
  await assertWebhookAllowed(deps, changes.webhookUrl);
  const passwordHash = changes.password ? await hashPassword(changes.password) : changes.password;
  for (let attempt = 1; ; attempt++) {
    const next = applyChanges(link, changes, passwordHash);
    checkSchedule(next);
    next.updatedAt = Math.max(deps.now(), link.updatedAt + 1);
    // Written only over the version read, so "only the fields present change" holds against concurrent
    // updates too: when another one got in first, its result is read and these changes applied to it.
    if (await deps.store.updateLink(next, link.updatedAt)) {
      // The counter stays valid while a limit exists (the limit is passed on every take); it is stale only
      // when counting stopped or starts, so only then is it dropped and re-seeded from the store.
      if ((next.maxHits === null) !== (link.maxHits === null)) await deps.hot.resetHits(link.id).catch(() => {});
      await publish(deps, next);
      return toLinkObject(next, deps.config.baseUrl);
    }
    if (attempt === UPDATE_ATTEMPTS) throw new AppError("unavailable", "The link is being changed by other requests; try again", { retryAfter: 1 });
    link = await findOwnLink(deps, caller, slug); // not_found when it was deleted meanwhile
  }
}

export async function deleteLink(deps: Deps, caller: Caller, slug: string): Promise<void> {
  const link = await findOwnLink(deps, caller, slug);
  await deps.store.deleteLink(link.id);
  await deps.hot.invalidateLink(linkKey(link.domain, link.slug)).catch(() => {});
  await deps.hot.resetHits(link.id).catch(() => {});
}

export interface ListQuery {
  limit?: string | number;
  cursor?: string;
  tag?: string;
  folder?: string;
  status?: string;
  q?: string;
}

export async function listLinks(deps: Deps, caller: Caller, query: ListQuery) {
  const errors: FieldError[] = [];
  // Digits only: Number() would also take "0x10", "1e2" or " 7".
  const limit = query.limit === undefined || query.limit === "" ? 50 : typeof query.limit === "string" && !/^\d{1,4}$/.test(query.limit) ? NaN : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) errors.push({ path: "/limit", message: "must be an integer from 1 to 500" });
  if (query.status !== undefined && query.status !== "" && !["active", "paused", "archived"].includes(query.status)) {
    errors.push({ path: "/status", message: "must be active, paused or archived" });
  }
  for (const k of ["cursor", "tag", "folder", "q"] as const) {
    const v = query[k];
    if (v !== undefined && (typeof v !== "string" || v.length > 500)) errors.push({ path: `/${k}`, message: "must be a string of at most 500 characters" });
  }
  if (errors.length) throw invalidInput(errors);
  const { links, nextCursor } = await deps.store.listLinks(caller.accountId, {
    limit,
    cursor: query.cursor || undefined,
    tag: query.tag || undefined,
    folder: query.folder || undefined,
    status: (query.status || undefined) as LinkStatus | undefined,
    q: query.q || undefined,
  });
  return { links: links.map((l) => toLinkObject(l, deps.config.baseUrl)), nextCursor };
}

/** The rows of a bulk request: a bare array or `{ "links": [...] }`. */
export function bulkRowsOf(body: unknown): unknown[] {
  const input = validate(BulkCreateInput, body);
  return Array.isArray(input) ? input : input.links;
}

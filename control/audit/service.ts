/**
 * The audit log (issue #24, docs/api.md "Audit log"): who did what and when in a workspace. Every service edge that
 * changes something a team cares about (links, keys, domains, webhooks, members, sign-ins, OAuth applications) calls
 * recordAudit once. An entry names the change, never a secret: details hold field names and counts, not key
 * values, passwords or webhook secrets. A failing audit write never fails the user's operation: it is logged and
 * counted (clink_audit_write_failures_total) and the operation goes on.
 */
import { newId } from "../../shared/ids.ts";
import type { LinkRecord } from "../../shared/link.ts";
import type { AuditEntry } from "../../shared/ports.ts";
import type { Caller, Deps } from "../deps.ts";

/**
 * Every action the log records, `<subject>.<verb>`; the API's `action` filter takes exactly these. A member joins
 * by taking an invitation: invitation.accepted, by the new member.
 */
export const AUDIT_ACTIONS = [
  "link.created", "link.updated", "link.deleted",
  "links.bulk_created", "links.bulk_updated", "links.bulk_deleted", "import.finished",
  "key.created", "key.revoked",
  "domain.created", "domain.verified", "domain.updated", "domain.deleted",
  "webhook.created", "webhook.deleted",
  "session.signed_in", "session.signed_out", "session.sign_in_failed",
  "oauth.connected", "oauth.disconnected",
  "workspace.created", "workspace.updated", "workspace.deleted",
  "member.role_changed", "member.removed",
  "invitation.created", "invitation.accepted", "invitation.revoked",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/**
 * Who acted, in which workspace: a Caller is one. The system (a job, no person) is `{ workspaceId, accountId: null }`;
 * a dashboard sign-in, which has no Caller yet, is the account in each workspace it belongs to.
 */
export type AuditActor = Pick<Caller, "workspaceId"> & {
  accountId: string | null;
  keyId?: string | null;
  grantId?: string | null;
};

/** What the action was done to; a link is `{ type: "link", id: <link id> }` with its slug in the detail. */
export interface AuditTarget {
  type: string;
  id: string;
}

/** How many slugs (or ids) a bulk action's entry lists; its count says how many there were in all. */
export const AUDIT_LIST_MAX = 20;

/** The first AUDIT_LIST_MAX of `items`, and how many there were in all: a bulk entry stays small whatever the batch. */
export function sampled(items: readonly string[]): { count: number; sample: string[] } {
  return { count: items.length, sample: items.slice(0, AUDIT_LIST_MAX) };
}

/** The detail of one link's entry: its slug and domain, and for an update the names of the fields given (never values). */
export function linkDetail(link: Pick<LinkRecord, "slug" | "domain">, changes?: object): Record<string, unknown> {
  return { slug: link.slug, domain: link.domain, ...(changes ? { fields: Object.keys(changes).sort() } : {}) };
}

/** Records a change of one link (created, updated with `changes`, deleted); never throws. */
export function auditLink(deps: Deps, actor: AuditActor, action: "link.created" | "link.updated" | "link.deleted", link: LinkRecord, changes?: object): Promise<void> {
  return recordAudit(deps, actor, action, { type: "link", id: link.id }, linkDetail(link, changes));
}

/** Records one bulk call or import: how many links, and the first AUDIT_LIST_MAX slugs. */
export function auditBulk(deps: Deps, actor: AuditActor, action: "links.bulk_created" | "links.bulk_updated" | "links.bulk_deleted" | "import.finished", slugs: readonly string[], detail: Record<string, unknown> = {}): Promise<void> {
  if (slugs.length === 0 && action !== "import.finished") return Promise.resolve();
  const { count, sample } = sampled(slugs);
  return recordAudit(deps, actor, action, null, { count, slugs: sample, ...detail });
}

/** The entry for one action (pure: the time and the id are given). */
export function auditEntry(
  actor: AuditActor, action: AuditAction, target: AuditTarget | null, detail: Record<string, unknown>, at: number, id: string,
): AuditEntry {
  return {
    id,
    workspaceId: actor.workspaceId,
    at,
    actorAccountId: actor.accountId,
    actorKeyId: actor.keyId ?? null,
    actorGrantId: actor.grantId ?? null,
    action,
    targetType: target?.type ?? null,
    targetId: target?.id ?? null,
    detail,
  };
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
let sequence = 0;

/**
 * Entry ids: newId's time prefix, then a counter of this process, then randomness. Entries of one instant are
 * ordered by id, so those one process records at the same millisecond (a key made and revoked at once) read back
 * in the order they happened.
 */
export function auditId(): string {
  const id = newId();
  sequence = (sequence + 1) % 62 ** 4;
  let n = sequence;
  let counter = "";
  for (let i = 0; i < 4; i++, n = Math.floor(n / 62)) counter = BASE62[n % 62] + counter;
  return id.slice(0, 7) + counter + id.slice(11);
}

/** Audit writes that failed in this process since it started, read by /metrics. */
export const auditWrites = { failed: 0 };

/** Appends entries; a failure is logged and counted, never thrown. */
export async function appendAudit(deps: Deps, entries: AuditEntry[]): Promise<void> {
  if (entries.length === 0) return;
  try {
    await deps.store.appendAudit(entries);
  } catch (err) {
    auditWrites.failed += entries.length;
    if (deps.config.logLevel !== "error" && deps.config.logLevel !== "silent") {
      console.warn(`audit log: ${entries.length} entr${entries.length === 1 ? "y" : "ies"} (${entries[0]!.action}) not written: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

/**
 * Records a dashboard sign-in or sign-out in every workspace the account belongs to (each team sees who came in),
 * or in its personal workspace when it belongs to none; never throws.
 */
export async function auditSession(deps: Deps, accountId: string, action: "session.signed_in" | "session.signed_out" | "session.sign_in_failed", detail: Record<string, unknown> = {}): Promise<void> {
  const workspaces = await deps.store.listMemberships(accountId).then((ms) => ms.map((m) => m.workspace.id), () => []);
  const at = deps.now();
  const ids = workspaces.length > 0 ? workspaces : [accountId];
  await appendAudit(deps, ids.map((workspaceId) => auditEntry({ workspaceId, accountId }, action, null, detail, at, auditId())));
}

/** Records that `actor` did `action` to `target`; never throws (see appendAudit). */
export function recordAudit(
  deps: Deps, actor: AuditActor, action: AuditAction, target: AuditTarget | null, detail: Record<string, unknown> = {},
): Promise<void> {
  return appendAudit(deps, [auditEntry(actor, action, target, detail, deps.now(), auditId())]);
}

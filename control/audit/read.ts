/**
 * Reading the audit log (GET /api/v1/audit and /dashboard/audit call this one function): a workspace's admins and
 * owners see who did what and when, newest first, a page at a time.
 */
import { Type as T, type Static, type TSchema } from "@sinclair/typebox";
import type { ListedAuditEntry } from "../../shared/ports.ts";
import { requireRole } from "../auth/roles.ts";
import type { Caller, Deps } from "../deps.ts";
import type { RawQuery } from "../stats/query.ts";
import { auditCursor, parseAuditQuery } from "./query.ts";

const Nullable = <S extends TSchema>(s: S) => T.Union([s, T.Null()]);

export const AuditEntryObject = T.Object({
  id: T.String(),
  at: T.String({ description: "When, ISO 8601 UTC." }),
  action: T.String({ description: "What, <subject>.<verb>: link.created, key.revoked, member.removed, session.signed_in…" }),
  actor: T.Object({
    accountId: Nullable(T.String({ description: "The person; null: clink itself (a scheduled job)." })),
    email: Nullable(T.String({ description: "The person's email, while the account exists." })),
    keyId: Nullable(T.String({ description: "The API key used; null with a dashboard session or an OAuth token." })),
    grantId: Nullable(T.String({ description: "The OAuth grant (connected application) used, if any." })),
  }),
  target: Nullable(T.Object({ type: T.String(), id: T.String() })),
  detail: T.Record(T.String(), T.Unknown(), { description: "What changed: field names, counts, slugs; never secrets." }),
});
export type AuditEntryObject = Static<typeof AuditEntryObject>;
export const AuditPage = T.Object({ entries: T.Array(AuditEntryObject), nextCursor: Nullable(T.String({ description: "Pass as cursor for the next (older) page; null on the last." })) });
export type AuditPage = Static<typeof AuditPage>;

export function toAuditObject(e: ListedAuditEntry): AuditEntryObject {
  return {
    id: e.id,
    at: new Date(e.at).toISOString(),
    action: e.action,
    actor: { accountId: e.actorAccountId, email: e.actorEmail, keyId: e.actorKeyId, grantId: e.actorGrantId },
    target: e.targetType === null || e.targetId === null ? null : { type: e.targetType, id: e.targetId },
    detail: e.detail,
  };
}

/** One page of the caller's workspace's log; 403 forbidden_role below admin, 400 for a bad parameter. */
export async function readAuditLog(deps: Deps, caller: Caller, raw: RawQuery): Promise<AuditPage> {
  requireRole(caller, "admin", "Reading the audit log");
  const q = parseAuditQuery(raw);
  let actorAccountId = q.actor;
  if (q.actor?.includes("@")) {
    const account = await deps.store.getAccountByEmail(q.actor);
    if (!account) return { entries: [], nextCursor: null };
    actorAccountId = account.id;
  }
  // One more than the page: whether an older page exists, without a count.
  const rows = await deps.store.listAudit(caller.workspaceId, {
    limit: q.limit + 1, after: q.after, action: q.action, actorAccountId, from: q.from, to: q.to,
  });
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return { entries: page.map(toAuditObject), nextCursor: rows.length > q.limit && last ? auditCursor(last) : null };
}

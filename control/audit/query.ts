/**
 * The audit log's question as GET /api/v1/audit and the dashboard ask it (query parameters), turned into a query or
 * a 400 problem with a stable code: invalid_parameter (limit, cursor, action, actor, or a parameter that is not
 * one), invalid_range (from, to). Pure. The cursor is opaque to clients: the (time, id) of the last entry shown.
 */
import { AppError } from "../../shared/errors.ts";
import { listed } from "../../shared/enums.ts";
import type { AuditPosition } from "../../shared/ports.ts";
import { parseRange, single, type RawQuery } from "../stats/query.ts";
import { zoneOf } from "../stats/zone-time.ts";
import { AUDIT_ACTIONS, type AuditAction } from "./service.ts";

export const AUDIT_PARAMETERS = ["limit", "cursor", "action", "actor", "from", "to"] as const;
export const AUDIT_DEFAULT_LIMIT = 50;
export const AUDIT_MAX_LIMIT = 100;

export interface AuditListQuery {
  limit: number;
  after?: AuditPosition;
  action?: AuditAction;
  /** An account id, or an email (its account is looked up): whose actions. */
  actor?: string;
  from?: number;
  to?: number;
}

const fail = (param: string, message: string) => new AppError("invalid_parameter", `${param}: ${message}`, { errors: [{ path: `/${param}`, message }] });

/** The cursor of a page that ends with `last`. */
export const auditCursor = (last: AuditPosition): string => Buffer.from(`${last.at}.${last.id}`).toString("base64url");

function parseCursor(v: string): AuditPosition {
  const m = /^(\d{1,16})\.([A-Za-z0-9_-]{1,64})$/.exec(Buffer.from(v, "base64url").toString());
  if (!m) throw fail("cursor", "is not a nextCursor this API returned");
  return { at: Number(m[1]), id: m[2]! };
}

export function parseAuditQuery(raw: RawQuery): AuditListQuery {
  for (const [name, value] of Object.entries(raw)) {
    if (value !== undefined && !(AUDIT_PARAMETERS as readonly string[]).includes(name)) {
      throw fail(name, `is not a parameter of the audit log (${listed(AUDIT_PARAMETERS)})`);
    }
  }
  const out: AuditListQuery = { limit: AUDIT_DEFAULT_LIMIT, ...parseRange(raw, zoneOf("UTC")) };
  const limit = single(raw, "limit");
  if (limit !== undefined) {
    const n = /^\d{1,4}$/.test(limit) ? Number(limit) : NaN;
    if (!(n >= 1 && n <= AUDIT_MAX_LIMIT)) throw fail("limit", `must be an integer from 1 to ${AUDIT_MAX_LIMIT}`);
    out.limit = n;
  }
  const cursor = single(raw, "cursor");
  if (cursor !== undefined) out.after = parseCursor(cursor);
  const action = single(raw, "action");
  if (action !== undefined) {
    if (!(AUDIT_ACTIONS as readonly string[]).includes(action)) throw fail("action", `must be one of ${listed(AUDIT_ACTIONS)}`);
    out.action = action as AuditAction;
  }
  const actor = single(raw, "actor");
  if (actor !== undefined) {
    if (actor.length > 320) throw fail("actor", "must be an account id or an email, at most 320 characters");
    out.actor = actor.trim().toLowerCase().includes("@") ? actor.trim().toLowerCase() : actor;
  }
  return out;
}

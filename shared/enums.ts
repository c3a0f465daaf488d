/**
 * Every enumeration of the link model, declared once. Each gives its values (for loops and SQL checks), its
 * TypeBox schema (validation, OpenAPI, MCP) and its TypeScript type, and a phrase listing the values for
 * messages and descriptions, so no list of values is spelled anywhere else.
 */
import { Type as T, type SchemaOptions, type Static, type TLiteral, type TUnion } from "@sinclair/typebox";

/** A union of string literals whose static type is the union of the values. */
export function oneOf<const A extends readonly string[]>(values: A, options?: SchemaOptions): TUnion<TLiteral<A[number]>[]> {
  return T.Union(values.map((v) => T.Literal(v)), options) as TUnion<TLiteral<A[number]>[]>;
}

/** "a, b or c": the values as a sentence. */
export function listed(values: readonly string[]): string {
  return values.length < 2 ? values.join("") : `${values.slice(0, -1).join(", ")} or ${values[values.length - 1]}`;
}

/** What the owner sets: whether the link serves at all. */
export const LINK_STATUSES = ["active", "paused", "archived"] as const;
export const LinkStatus = oneOf(LINK_STATUSES, { description: "active serves redirects; paused answers 404; archived answers 410." });
export type LinkStatus = Static<typeof LinkStatus>;

/**
 * What the link does right now, computed at read time from its status, schedule and click count (linkState in
 * link.ts): live serves redirects; scheduled waits for startsAt (425); expired is past expiresAt; limit_reached
 * has served maxHits clicks; paused and archived are the owner's status.
 */
export const LINK_STATES = ["live", "scheduled", "expired", "limit_reached", "paused", "archived"] as const;
export const LinkState = oneOf(LINK_STATES, {
  description: "Live state now: live, scheduled (before startsAt), expired (after expiresAt), limit_reached (maxHits served), paused or archived.",
});
export type LinkState = Static<typeof LinkState>;

/** What a redirect rule matches on. */
export const RULE_KINDS = ["country", "device"] as const;
export const RuleKind = oneOf(RULE_KINDS, { description: "What the rule matches on." });
export type RuleKind = Static<typeof RuleKind>;

/** The values a device rule's `match` may take: a device type or an operating system. */
export const DEVICE_MATCHES = ["desktop", "mobile", "tablet", "ios", "android"] as const;
export const DeviceMatch = oneOf(DEVICE_MATCHES);
export type DeviceMatch = Static<typeof DeviceMatch>;

/**
 * A member's role in a workspace (issue #24), weakest first: viewers read links and stats, members also write links,
 * admins also manage keys, domains, webhooks and members, owners also delete the workspace. control/auth/roles.ts
 * says what each may do.
 */
export const ROLES = ["viewer", "member", "admin", "owner"] as const;
export const Role = oneOf(ROLES, { description: "A member's role: viewer, member, admin or owner." });
export type Role = Static<typeof Role>;

/** Whether a string is one of an enumeration's values (typed). */
export function isOneOf<const A extends readonly string[]>(values: A, v: unknown): v is A[number] {
  return typeof v === "string" && (values as readonly string[]).includes(v);
}

/**
 * What an API key or an OAuth access token may do, one vocabulary for both (issue #23). A key made before scopes
 * existed, and the dashboard's own session, hold every scope. Imports need links:write; reading an import links:read.
 */
export const SCOPES = ["links:read", "links:write", "stats:read", "webhooks:manage"] as const;
export const Scope = oneOf(SCOPES, { description: "A permission: links:read, links:write, stats:read or webhooks:manage." });
export type Scope = Static<typeof Scope>;
/** What each scope lets its holder do, in the words the consent page and the key form show. */
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  "links:read": "See your links, their settings and import jobs",
  "links:write": "Create, change, import and delete your links",
  "stats:read": "See your links' click statistics and export clicks",
  "webhooks:manage": "Add, change and remove your event webhooks and see their deliveries",
};

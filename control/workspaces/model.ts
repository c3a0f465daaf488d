/**
 * Workspaces as the API shows them (issue #24, docs/teams.md): the TypeBox schemas of their objects and inputs,
 * declared once for validation, OpenAPI and the dashboard, and the pure functions that turn records into them.
 */
import { Type as T, type Static } from "@sinclair/typebox";
import { Role } from "../../shared/enums.ts";
import type { InvitationRecord, MemberRecord, Membership } from "../../shared/ports.ts";
import { isoOrNull } from "../../shared/time.ts";

const Iso = (description: string) => T.String({ format: "date-time", description });

export const WorkspaceObject = T.Object(
  {
    id: T.String({ description: "A personal workspace's id is its owner's account id." }),
    name: T.String(),
    personal: T.Boolean({ description: "Every account has one personal workspace; it cannot be deleted or left." }),
    role: Role,
    defaultDomain: T.Union([T.String(), T.Null()], {
      description: "The verified domain of this workspace that links made without a domain go on; null: the base domain (also when the one set was deleted or is pending again).",
    }),
    createdAt: Iso("When it was created."),
  },
  { title: "Workspace" },
);
export type WorkspaceObject = Static<typeof WorkspaceObject>;

export const MemberObject = T.Object(
  {
    accountId: T.String(),
    email: T.Union([T.String(), T.Null()], { description: "null when the account no longer exists." }),
    role: Role,
    joinedAt: Iso("When the account became a member."),
  },
  { title: "Member" },
);
export type MemberObject = Static<typeof MemberObject>;

export const INVITATION_STATES = ["pending", "used", "expired", "revoked"] as const;
export type InvitationState = (typeof INVITATION_STATES)[number];

export const InvitationObject = T.Object(
  {
    id: T.String(),
    role: Role,
    state: T.Union(INVITATION_STATES.map((s) => T.Literal(s)), { description: "pending until accepted (used), past expiresAt (expired) or revoked." }),
    createdBy: T.String({ description: "The account that made it." }),
    createdAt: Iso("When it was made."),
    expiresAt: Iso("After this it can no longer be accepted."),
    usedAt: T.Union([Iso("When it was accepted."), T.Null()]),
    usedBy: T.Union([T.String({ description: "The account that accepted it." }), T.Null()]),
    revokedAt: T.Union([Iso("When it was revoked."), T.Null()]),
  },
  { title: "Invitation" },
);
export type InvitationObject = Static<typeof InvitationObject>;

export const CreatedInvitation = T.Composite(
  [InvitationObject, T.Object({ url: T.String({ format: "uri", description: "The link to send; shown this once (only its hash is kept)." }) })],
  { title: "CreatedInvitation" },
);
export type CreatedInvitation = Static<typeof CreatedInvitation>;

export const WORKSPACE_NAME_MAX = 80;
export const WorkspaceUpdateInput = T.Object(
  {
    name: T.Optional(T.String({ minLength: 1, maxLength: WORKSPACE_NAME_MAX, description: "1-80 characters." })),
    defaultDomain: T.Optional(T.Union([T.String({ maxLength: 300 }), T.Null()], {
      description: "A verified domain of this workspace, by hostname, for links made without a domain; null (or the base host) for the base domain. Else unknown_domain.",
    })),
  },
  { additionalProperties: false, minProperties: 1, title: "WorkspaceUpdateInput" },
);

export const RoleInput = T.Object({ role: Role }, { additionalProperties: false, title: "RoleInput" });

/** How long an invitation may be accepted: 7 days unless asked, at most 30. */
export const INVITATION_DEFAULT_DAYS = 7;
export const INVITATION_MAX_DAYS = 30;
export const InvitationInput = T.Object(
  {
    role: T.Optional(Role),
    expiresInDays: T.Optional(T.Integer({ minimum: 1, maximum: INVITATION_MAX_DAYS, description: "1-30; 7 when left out." })),
  },
  { additionalProperties: false, title: "InvitationInput" },
);

export const toWorkspaceObject = (m: Membership): WorkspaceObject => ({
  id: m.workspace.id, name: m.workspace.name, personal: m.workspace.personalOf !== null, role: m.role, defaultDomain: m.workspace.defaultDomain,
  createdAt: isoOrNull(m.workspace.createdAt)!,
});

export const toMemberObject = (m: MemberRecord, email: string | null): MemberObject => ({
  accountId: m.accountId, email, role: m.role, joinedAt: isoOrNull(m.createdAt)!,
});

/** What an invitation is at `now`: revoked and used are final; a pending one past its expiry is expired. */
export function invitationState(i: InvitationRecord, now: number): InvitationState {
  if (i.revokedAt !== null) return "revoked";
  if (i.usedAt !== null) return "used";
  return i.expiresAt <= now ? "expired" : "pending";
}

export const toInvitationObject = (i: InvitationRecord, now: number): InvitationObject => ({
  id: i.id, role: i.role, state: invitationState(i, now), createdBy: i.createdBy, createdAt: isoOrNull(i.createdAt)!,
  expiresAt: isoOrNull(i.expiresAt)!, usedAt: isoOrNull(i.usedAt), usedBy: i.usedBy, revokedAt: isoOrNull(i.revokedAt),
});

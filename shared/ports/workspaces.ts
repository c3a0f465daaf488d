/**
 * The workspaces role of the store (issue #24): who belongs to which workspace, with which role; invitations by
 * link (the audit log is its own role: audit.ts). Everything a workspace holds (links, tags, folders, domains,
 * keys, webhooks, imports, stats) names it in its owner column, `account_id`: a personal workspace's id is its owner's account id (ADR 0011), so
 * what existed before workspaces belongs to its account's personal workspace with nothing rewritten.
 */
import type { Role } from "../enums.ts";

export interface WorkspaceRecord {
  id: string;
  name: string;
  /** The account whose personal workspace this is (its id is that account's id); null for a shared workspace. */
  personalOf: string | null;
  /**
   * The hostname links made without a domain go on (issue #24); null: the base domain. Kept as written when that
   * domain is deleted or falls back to pending: readers use it only while it is a verified domain of this workspace.
   */
  defaultDomain: string | null;
  createdAt: number;
}

export interface MemberRecord {
  workspaceId: string;
  accountId: string;
  role: Role;
  createdAt: number;
}

/** A member as a workspace's member list shows it: with the account's email (null only if the account is gone). */
export interface MemberListing extends MemberRecord {
  email: string | null;
}

/** A workspace as one of its members sees it in a list: with the member's role. */
export interface Membership {
  workspace: WorkspaceRecord;
  role: Role;
}

export interface InvitationRecord {
  id: string;
  workspaceId: string;
  /** SHA-256 hex of the invitation token; the link carrying it is shown once and never stored. */
  tokenHash: string;
  role: Role;
  /** The account that made it. */
  createdBy: string;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
  usedBy: string | null;
  revokedAt: number | null;
}

/** Why an invitation could not be taken; nothing was written. */
export type InvitationRefusal = "unknown" | "expired" | "used" | "revoked" | "already_member";

export interface WorkspaceStore {
  /** The workspace and its owner's membership, in one transaction; false if the id is taken. */
  createWorkspace(w: WorkspaceRecord, owner: string): Promise<boolean>;
  getWorkspace(id: string): Promise<WorkspaceRecord | null>;
  renameWorkspace(id: string, name: string): Promise<boolean>;
  /** false: no such workspace. */
  setDefaultDomain(id: string, hostname: string | null): Promise<boolean>;
  /**
   * Deletes the workspace and everything it holds (links, their clicks, domains, keys, webhooks, import jobs, OAuth
   * grants, members, invitations, its audit log), in one transaction; sessions acting for it fall back to their personal workspace.
   */
  deleteWorkspace(id: string): Promise<boolean>;
  /** The workspaces an account belongs to, personal first, then by name. */
  listMemberships(accountId: string): Promise<Membership[]>;
  getMember(workspaceId: string, accountId: string): Promise<MemberRecord | null>;
  /** The workspace's members with their emails, oldest first (one read, however many members). */
  listMembers(workspaceId: string): Promise<MemberListing[]>;
  /** false: not a member. */
  setMemberRole(workspaceId: string, accountId: string, role: Role): Promise<boolean>;
  /**
   * Removes the membership and revokes the keys that account made in this workspace (their hashes returned, for the
   * revocations to be published), in one transaction; that account's sessions acting for it fall back to personal.
   */
  removeMember(workspaceId: string, accountId: string, at: number): Promise<{ removed: boolean; revokedKeyHashes: string[] }>;

  createInvitation(i: InvitationRecord): Promise<void>;
  listInvitations(workspaceId: string): Promise<InvitationRecord[]>;
  revokeInvitation(workspaceId: string, id: string, at: number): Promise<boolean>;
  /** The invitation whose token hashes to `tokenHash`, whatever its state (the acceptance page names it first). */
  findInvitation(tokenHash: string): Promise<InvitationRecord | null>;
  /**
   * Takes the invitation with `tokenHash` for `accountId` at `now`, atomically: marks it used and adds the member
   * with its role. A second taker (even at the same instant) is refused as `used`.
   */
  acceptInvitation(tokenHash: string, accountId: string, now: number): Promise<{ ok: true; invitation: InvitationRecord } | { ok: false; reason: InvitationRefusal }>;
}

/** The HotState bus channel a membership change (role, removal) is published on: cached callers are forgotten. */
export const MEMBERSHIP_CHANGED_CHANNEL = "workspace:membership-changed";

/**
 * What both SQL stores share for workspaces (issue #24, ADR 0011): the tables, written once for both dialects (SQLite
 * migration 21, Postgres migration 23), the data migration that gives every account its personal workspace, and
 * the column lists with the records' names (quoted: Postgres folds unquoted names to lower case).
 */
import { ROLES } from "../enums.ts";
import type { InvitationRecord, WorkspaceRecord } from "../ports/workspaces.ts";

/** What a personal workspace is called until its owner renames it. */
export const PERSONAL_WORKSPACE_NAME = "Personal";

/** The tables whose owner column, `account_id`, names a workspace from migration 21/23 on (ADR 0011). */
export const WORKSPACE_OWNED_TABLES = ["api_keys", "links", "domains", "import_jobs", "webhook_endpoints"] as const;

const roleCheck = (col: string) => `CHECK (${col} IN (${ROLES.map((r) => `'${r}'`).join(", ")}))`;

/** The three tables, and one personal workspace with its owner per existing account (its id is the account's). */
export const workspacesDdl = (t: { text: string; bigint: string }) => `
CREATE TABLE workspaces (
  id          ${t.text} PRIMARY KEY,
  name        ${t.text} NOT NULL,
  -- The account whose personal workspace this is (then id = personal_of); NULL for a shared workspace.
  personal_of ${t.text} UNIQUE REFERENCES accounts(id) ON DELETE CASCADE,
  created_at  ${t.bigint} NOT NULL
);
CREATE TABLE workspace_members (
  workspace_id ${t.text} NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  account_id   ${t.text} NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  role         ${t.text} NOT NULL ${roleCheck("role")},
  created_at   ${t.bigint} NOT NULL,
  PRIMARY KEY (workspace_id, account_id)
);
-- Every request of a signed-in person reads their memberships: by account.
CREATE INDEX workspace_members_account ON workspace_members(account_id, workspace_id);
CREATE TABLE workspace_invitations (
  id           ${t.text} PRIMARY KEY,
  workspace_id ${t.text} NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  token_hash   ${t.text} NOT NULL UNIQUE,
  role         ${t.text} NOT NULL ${roleCheck("role")},
  created_by   ${t.text} NOT NULL,
  created_at   ${t.bigint} NOT NULL,
  expires_at   ${t.bigint} NOT NULL,
  used_at      ${t.bigint},
  used_by      ${t.text},
  revoked_at   ${t.bigint}
);
CREATE INDEX workspace_invitations_workspace ON workspace_invitations(workspace_id, created_at);

INSERT INTO workspaces (id, name, personal_of, created_at) SELECT id, '${PERSONAL_WORKSPACE_NAME}', id, created_at FROM accounts;
INSERT INTO workspace_members (workspace_id, account_id, role, created_at) SELECT id, id, 'owner', created_at FROM accounts;

-- The account that made each key (a removed member's keys are revoked); keys before: their account's own.
ALTER TABLE api_keys ADD COLUMN created_by ${t.text};
UPDATE api_keys SET created_by = account_id;
CREATE INDEX api_keys_creator ON api_keys(account_id, created_by);
-- The workspace a dashboard session acts for; NULL: its account's personal one (also after that workspace is deleted).
ALTER TABLE sessions ADD COLUMN workspace_id ${t.text} REFERENCES workspaces(id) ON DELETE SET NULL;
-- The workspace an OAuth consent was given for (the person stays account_id): its tokens act there.
ALTER TABLE oauth_codes ADD COLUMN workspace_id ${t.text} REFERENCES workspaces(id) ON DELETE CASCADE;
UPDATE oauth_codes SET workspace_id = account_id;
ALTER TABLE oauth_grants ADD COLUMN workspace_id ${t.text} REFERENCES workspaces(id) ON DELETE CASCADE;
UPDATE oauth_grants SET workspace_id = account_id;
CREATE INDEX oauth_grants_workspace ON oauth_grants(workspace_id);
`;

export const WORKSPACE_COLUMNS = `id, name, personal_of AS "personalOf", default_domain AS "defaultDomain", created_at AS "createdAt"`;

/** Migrations 25 (SQLite) and 27 (Postgres): a workspace's default domain, by hostname (no foreign key: see WorkspaceRecord). */
export const WORKSPACE_DEFAULT_DOMAIN_DDL = `ALTER TABLE workspaces ADD COLUMN default_domain TEXT;`;
export const MEMBER_COLUMNS = `workspace_id AS "workspaceId", account_id AS "accountId", role, created_at AS "createdAt"`;
/** A workspace's member list (listMembers) with each account's email, in one statement; `collate`: Postgres's "C". */
export const memberListingSql = (workspace: string, collate = "") => `SELECT m.workspace_id AS "workspaceId", m.account_id AS "accountId",
  m.role, m.created_at AS "createdAt", a.email FROM workspace_members m LEFT JOIN accounts a ON a.id = m.account_id
  WHERE m.workspace_id = ${workspace} ORDER BY m.created_at, m.account_id${collate}`;
export const INVITATION_COLUMNS = `id, workspace_id AS "workspaceId", token_hash AS "tokenHash", role, created_by AS "createdBy",
  created_at AS "createdAt", expires_at AS "expiresAt", used_at AS "usedAt", used_by AS "usedBy", revoked_at AS "revokedAt"`;

/** The values of an invitation's insert, in the order of INVITATION_COLUMNS. */
export const invitationValues = (i: InvitationRecord) =>
  [i.id, i.workspaceId, i.tokenHash, i.role, i.createdBy, i.createdAt, i.expiresAt, i.usedAt, i.usedBy, i.revokedAt] as const;
export const INVITATION_INSERT = `INSERT INTO workspace_invitations (id, workspace_id, token_hash, role, created_by, created_at, expires_at,
  used_at, used_by, revoked_at)`;

/** A personal workspace of a new account. */
export const personalWorkspace = (accountId: string, createdAt: number): WorkspaceRecord => ({
  id: accountId, name: PERSONAL_WORKSPACE_NAME, personalOf: accountId, defaultDomain: null, createdAt,
});

/** Personal first, then by name (and id, for equal names), bytewise in both stores (`collate`: Postgres's "C"): listMemberships. */
export const membershipOrder = (collate = "") => `w.personal_of IS NULL, w.name${collate}, w.id${collate}`;

/**
 * Why an invitation cannot be taken by `accountId` at `now`, or null when it can. `member`: whether that account
 * already belongs to the workspace.
 */
export function invitationRefusal(i: InvitationRecord | null, now: number, member: boolean) {
  if (!i) return "unknown" as const;
  if (i.revokedAt !== null) return "revoked" as const;
  if (i.usedAt !== null) return "used" as const;
  if (i.expiresAt <= now) return "expired" as const;
  if (member) return "already_member" as const;
  return null;
}

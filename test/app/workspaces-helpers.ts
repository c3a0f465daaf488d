/**
 * Teams for the workspace tests: a shared workspace with an owner, people who joined it by invitation with a role,
 * and keys made by them in it, all through the product's own service functions.
 */
import type { Caller } from "../../control/deps.ts";
import { createApiKey } from "../../control/keys/service.ts";
import { acceptInvitation, createInvitation, createWorkspace } from "../../control/workspaces/service.ts";
import { SCOPES, type Role, type Scope } from "../../shared/enums.ts";
import type { Account } from "../../shared/ports.ts";
import type { InProcessControlPlane } from "../helpers/in-process.ts";

/** The token an invitation's link carries (its last path segment). */
export const tokenOf = (url: string): string => url.split("/").at(-1)!;

/** What a person acting in the dashboard with every scope their role allows is, as a Caller (role given). */
export const personIn = (workspaceId: string, account: Pick<Account, "id">, role: Role): Caller => ({
  workspaceId, accountId: account.id, role, keyId: null, scopes: SCOPES,
});

export interface Team {
  workspaceId: string;
  owner: Account;
  /** The owner, as a caller of the workspace. */
  ownerCaller: Caller;
  /** Adds the account with this email (made when missing) with `role`, by an invitation the owner made. */
  join(email: string, role: Role): Promise<Account>;
  /** A key of the workspace made by `account`, with these scopes (all unless given). */
  keyOf(account: Account, scopes?: Scope[]): Promise<string>;
}

/** A shared workspace named `name`, made by `ownerEmail` (its owner). */
export async function team(cp: InProcessControlPlane, ownerEmail: string, name = "Team"): Promise<Team> {
  const owner = await cp.account(ownerEmail);
  const w = await createWorkspace(cp.deps, owner.id, { name });
  const ownerCaller = personIn(w.id, owner, "owner");
  return {
    workspaceId: w.id,
    owner,
    ownerCaller,
    async join(email, role) {
      const person = await cp.account(email);
      const { url } = await createInvitation(cp.deps, ownerCaller, { role });
      await acceptInvitation(cp.deps, person.id, tokenOf(url));
      return person;
    },
    async keyOf(account, scopes) {
      return (await createApiKey(cp.deps, { workspaceId: w.id, accountId: account.id }, `${account.email} key`, scopes)).key;
    },
  };
}

/** Arguments each MCP tool is served with, given a link's slug (tools that name no link ignore it). */
export const MCP_ARGS: Record<string, (slug: string) => Record<string, unknown>> = {
  create_link: () => ({ url: "https://example.com/mcp" }),
  bulk_create_links: () => ({ links: [{ url: "https://example.com/mcp-bulk" }] }),
  list_links: () => ({}),
  get_link: (slug) => ({ slug }),
  update_link: (slug) => ({ slug, folder: "mcp" }),
  delete_link: (slug) => ({ slug }),
  get_link_stats: (slug) => ({ slug }),
  set_targeting_rules: (slug) => ({ slug, rules: [] }),
  set_ab_test: (slug) => ({ slug, abUrls: [] }),
  set_link_preview: (slug) => ({ slug, serveOg: false }),
};

/** A tools/call of `name` with `args`, sent with `key`. */
export const mcpCall = (cp: InProcessControlPlane, key: string, name: string, args: Record<string, unknown>): Promise<Response> =>
  cp.request("POST", "/mcp", { key, headers: { accept: "application/json, text/event-stream" }, json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } } });

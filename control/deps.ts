/** What every control-plane service receives: parsed config, the two storage ports and a clock. */
import type { Config } from "../shared/config.ts";
import type { Role, Scope } from "../shared/enums.ts";
import type { HotState, Store } from "../shared/ports.ts";
import type { ResolveHost } from "../shared/webhooks/ssrf.ts";
import type { DomainChecks } from "./domains/checks.ts";

export interface Deps {
  config: Config;
  store: Store;
  hot: HotState;
  now: () => number;
  /** How webhook targets' hosts are resolved when a link sets one: the system's DNS unless a test gives its own. */
  resolveHost?: ResolveHost;
  /** How custom domains are checked (DNS resolver, HTTP port): the system's unless a test gives its own. */
  domainChecks?: DomainChecks;
}

/** The authenticated caller, as REST, MCP and the dashboard all resolve it. */
export interface Caller {
  /**
   * The workspace the caller acts for (issue #24): links, tags, folders, domains, keys, webhooks, imports and stats
   * belong to it, and the stores' `accountId` owner columns hold it (ADR 0011: a personal workspace's id is its
   * account's id, so data from before workspaces needed no rewrite).
   */
  workspaceId: string;
  /** The person: the account behind the key, token or session. */
  accountId: string;
  /** The person's role in the workspace: the most the caller may do, whatever its scopes (control/auth/roles.ts). */
  role: Role;
  /** The API key used, when the caller came with one (the dashboard uses a session instead). */
  keyId: string | null;
  /** What the caller may do (control/auth/scopes.ts checks it); a session and a key without scopes hold all. */
  scopes: readonly Scope[];
  /** The OAuth grant behind an access token, when the caller came with one (its id is the rate-limit budget). */
  grantId?: string;
}

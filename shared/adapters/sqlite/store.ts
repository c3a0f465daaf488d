/**
 * The Store on SQLite (`bun:sqlite`, WAL): the embedded default's source of truth. Every method runs
 * synchronously inside (bun:sqlite is synchronous) behind the async ports; statements are prepared once
 * per instance and reused. One connection, shared by the role implementations composed here; each write
 * runs in its own immediate transaction.
 */
import type { Store } from "../../ports.ts";
import { sqliteAccounts } from "./accounts.ts";
import { sqliteAdmin } from "./admin.ts";
import { sqliteClicks } from "./clicks.ts";
import { SqliteConnection } from "./connection.ts";
import { sqliteImports } from "./imports.ts";
import { sqliteEventWebhooks } from "./event-webhooks.ts";
import { sqliteKeys } from "./keys.ts";
import { sqliteLinks } from "./links.ts";
import { sqliteOAuth } from "./oauth.ts";
import { sqliteDomains } from "./domains.ts";
import { sqliteWorkspaces } from "./workspaces.ts";
import { sqliteAudit } from "./audit.ts";

// Declaration merging: a SqliteStore is a Store, whose methods are own properties assigned from the roles.
export interface SqliteStore extends Store {}

export class SqliteStore {
  /** `path`: a file (its directory is created) or ":memory:". */
  constructor(path: string) {
    const c = new SqliteConnection(path);
    const roles: Store = { ...sqliteAdmin(c), ...sqliteAccounts(c), ...sqliteKeys(c), ...sqliteLinks(c), ...sqliteClicks(c), ...sqliteEventWebhooks(c), ...sqliteImports(c), ...sqliteOAuth(c), ...sqliteDomains(c), ...sqliteWorkspaces(c), ...sqliteAudit(c) };
    Object.assign(this, roles);
  }
}

/**
 * The Store on Postgres (`postgres` package, postgres.js 3.4): scale mode's source of truth. One pool, shared by
 * the role implementations composed here. Batch writes are single statements over arrays (`unnest`), so their
 * text, and therefore their server-side prepared statement, is the same whatever the batch size, and no
 * parameter limit applies. Connection failures surface as AppError "unavailable" (503) rather than as internal errors.
 */
import type { Store } from "../../ports.ts";
import { postgresAccounts } from "./accounts.ts";
import { postgresAdmin } from "./admin.ts";
import { postgresClicks } from "./clicks.ts";
import { PostgresConnection, type PostgresStoreOptions } from "./connection.ts";
import { postgresImports } from "./imports.ts";
import { postgresEventWebhooks } from "./event-webhooks.ts";
import { postgresKeys } from "./keys.ts";
import { postgresLinks } from "./links.ts";
import { postgresOAuth } from "./oauth.ts";
import { postgresDomains } from "./domains.ts";
import { postgresWorkspaces } from "./workspaces.ts";
import { postgresAudit } from "./audit.ts";

export type { PostgresStoreOptions } from "./connection.ts";

// Declaration merging: a PostgresStore is a Store, whose methods are own properties assigned from the roles.
export interface PostgresStore extends Store {}

export class PostgresStore {
  constructor(url: string, opts: PostgresStoreOptions = {}) {
    const c = new PostgresConnection(url, opts);
    const roles: Store = {
      ...postgresAdmin(c), ...postgresAccounts(c), ...postgresKeys(c), ...postgresLinks(c), ...postgresClicks(c), ...postgresEventWebhooks(c), ...postgresImports(c), ...postgresOAuth(c), ...postgresDomains(c), ...postgresWorkspaces(c), ...postgresAudit(c),
    };
    Object.assign(this, roles);
  }
}

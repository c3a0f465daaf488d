/** The administration role of the SQLite store: migrations, lifecycle, readiness, export and import. */
import { Database } from "bun:sqlite";
import type { Account, AdminStore, ApiKeyRecord, ExportRecord, ImportResult } from "../../ports.ts";
import { toClickCell } from "../click-log.ts";
import { importResult, splitBatch } from "../export-support.ts";
import { ACCOUNT_SELECT } from "./accounts.ts";
import { settleLate } from "./clicks.ts";
import type { SqliteConnection } from "./connection.ts";
import { API_KEY_COLUMNS } from "./keys.ts";
import { keyCreator, scopesText, toApiKeyRecord, type ApiKeyRow } from "../key-rows.ts";
import { personalWorkspace } from "../workspace-rows.ts";
import { importWorkspaceRecords, insertWorkspace, workspaceExportRecords } from "./workspaces.ts";
import { LINK_COLUMN_LIST, LINK_COLUMNS, sqliteInsertValues, sqliteRowToLink } from "../link-columns.ts";
import { LINK_SELECT } from "./links.ts";
import { importWebhookRecords, webhookExportRecords } from "./event-webhooks.ts";
import { domainExportRecords, importDomainRecords } from "./domains.ts";
import { SQLITE_MIGRATIONS, applySqliteMigrations } from "./migrations.ts";
import { LINK_DOMAINS_SQL } from "../link-store-support.ts";

export function sqliteAdmin(c: SqliteConnection): AdminStore {
  return {
    async migrate(): Promise<void> {
      applySqliteMigrations(c.db);
    },

    async ping(): Promise<void> {
      c.db.query("SELECT 1").get();
    },

    async close(): Promise<void> {
      c.close();
    },

    async pendingMigrations(): Promise<number> {
      let done: Set<number>;
      try {
        done = new Set(c.st<{ version: number }>(`SELECT version FROM schema_migrations`).all().map((r) => r.version));
      } catch {
        return SQLITE_MIGRATIONS.length; // no bookkeeping table: nothing applied yet
      }
      return SQLITE_MIGRATIONS.filter((m) => !done.has(m.version)).length;
    },

    async linkDomains(): Promise<string[]> {
      return c.st<{ domain: string }>(LINK_DOMAINS_SQL).all().map((r) => r.domain);
    },

    async hasAccounts(): Promise<boolean> {
      return c.st<{ any: number }>(`SELECT EXISTS (SELECT 1 FROM accounts) AS "any"`).get()?.any === 1;
    },

    /**
     * Reads through a second connection inside one read transaction: a consistent snapshot (WAL) that the
     * writes of this store's own connection, e.g. the click consumer in the same process, never join.
     */
    async *exportAll(): AsyncIterable<ExportRecord> {
      const own = c.path === ":memory:";
      const db = own ? c.db : new Database(c.path);
      try {
        if (!own) {
          db.run("PRAGMA busy_timeout = 5000");
          db.run("PRAGMA query_only = ON");
          db.run("BEGIN");
        }
        for (const a of db.query<Account, []>(`${ACCOUNT_SELECT} ORDER BY created_at, id`).iterate()) {
          yield { type: "account", data: a };
        }
        yield* workspaceExportRecords(db);
        for (const k of db.query<ApiKeyRow, []>(`SELECT ${API_KEY_COLUMNS} FROM api_keys ORDER BY created_at, id`).iterate()) {
          yield { type: "apiKey", data: toApiKeyRecord(k) };
        }
        for (const r of db.query<Record<string, unknown>, []>(`${LINK_SELECT} ORDER BY created_at, id`).iterate()) {
          yield { type: "link", data: sqliteRowToLink(r) };
        }
        const cells = db.query<Parameters<typeof toClickCell>[0], []>(
          `SELECT link_id, hour, dims, bot, clicks, visitors FROM click_cells ORDER BY link_id, hour, dims, bot`,
        );
        for (const r of cells.iterate()) yield { type: "cell", data: toClickCell(r) };
        yield* webhookExportRecords(db);
        yield* domainExportRecords(db);
      } finally {
        if (!own) {
          if (db.inTransaction) db.run("COMMIT");
          db.close();
        }
      }
    },

    async importRecords(batch: ExportRecord[]): Promise<ImportResult> {
      const s = splitBatch(batch);
      const n = { accounts: 0, workspaces: 0, members: 0, apiKeys: 0, links: 0, cells: 0, webhookEndpoints: 0, webhookDeliveries: 0, domains: 0 };
      // A bare ON CONFLICT DO NOTHING covers every unique constraint (id, email, key hash, domain + slug);
      // the EXISTS clauses skip rows whose owner is missing instead of failing the batch on a foreign key.
      c.db
        .transaction(() => {
          const account = c.st(
            `INSERT INTO accounts (id, email, password_hash, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`,
          );
          for (const a of s.accounts) {
            if (account.run(a.id, a.email, a.passwordHash, a.createdAt).changes === 0) continue;
            n.accounts++;
            // Every account has its personal workspace (ADR 0011), also one of a file from before workspaces.
            insertWorkspace(c, personalWorkspace(a.id, a.createdAt), a.id);
          }
          Object.assign(n, importWorkspaceRecords(c, s.workspaces, s.members));
          const key = c.st(
            `INSERT INTO api_keys (id, account_id, created_by, name, key_hash, prefix, created_at, last_used_at, revoked_at, scopes)
             SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM workspaces WHERE id = ?) ON CONFLICT DO NOTHING`,
          );
          for (const k of s.apiKeys) {
            n.apiKeys += key.run(
              k.id, k.accountId, keyCreator(k), k.name, k.keyHash, k.prefix, k.createdAt, k.lastUsedAt, k.revokedAt, scopesText(k), k.accountId,
            ).changes;
          }
          const link = c.st(
            `INSERT INTO links (${LINK_COLUMN_LIST}) SELECT ${LINK_COLUMNS.map(() => "?").join(", ")}
             WHERE EXISTS (SELECT 1 FROM workspaces WHERE id = ?) ON CONFLICT DO NOTHING`,
          );
          const tags = c.st(`INSERT OR IGNORE INTO link_tags (link_id, tag) SELECT ?, value FROM json_each(?)`);
          for (const l of s.links) {
            if (link.run(...sqliteInsertValues(l), l.accountId).changes === 0) continue;
            n.links++;
            tags.run(l.id, JSON.stringify(l.tags));
          }
          const cell = c.st(
            `INSERT INTO click_cells (link_id, hour, dims, bot, clicks, visitors)
             SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM links WHERE id = ?) ON CONFLICT DO NOTHING`,
          );
          const written = s.cells.filter((x) => cell.run(x.linkId, x.hour, x.dims, x.bot ? 1 : 0, x.clicks, x.visitors, x.linkId).changes > 0);
          n.cells = written.length;
          settleLate(c, written);
          Object.assign(n, importWebhookRecords(c, s.webhookEndpoints, s.webhookDeliveries));
          n.domains = importDomainRecords(c, s.domains);
        })
        .immediate();
      return importResult(s, n);
    },
  };
}

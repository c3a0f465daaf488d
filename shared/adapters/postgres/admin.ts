/** The administration role of the Postgres store: migrations, lifecycle, readiness, export and import. */
import type { Account, AdminStore, ApiKeyRecord, ExportRecord, ImportResult } from "../../ports.ts";
import { toClickCell } from "../click-log.ts";
import { EXPORT_PAGE, importResult, splitBatch } from "../export-support.ts";
import { upsertSettledFrom } from "./clicks.ts";
import { cellInSets, summedCells } from "./cell-sets.ts";
import type { PostgresConnection } from "./connection.ts";
import { API_KEY_COLUMNS } from "./keys.ts";
import { keyCreator, scopesText, toApiKeyRecord, type ApiKeyRow } from "../key-rows.ts";
import { personalWorkspace } from "../workspace-rows.ts";
import { importWorkspaceRecords, insertWorkspace, workspaceExportRecords } from "./workspaces.ts";
import { LINK_COLUMN_LIST, postgresRowToLink } from "../link-columns.ts";
import { importWebhookRecords, webhookExportRecords } from "./event-webhooks.ts";
import { domainExportRecords, importDomainRecords } from "./domains.ts";
import { insertLinkRows } from "./links.ts";
import { POSTGRES_MIGRATIONS, applyPostgresMigrations } from "./migrations.ts";
import { LINK_DOMAINS_SQL } from "../link-store-support.ts";

export function postgresAdmin(c: PostgresConnection): AdminStore {
  return {
    migrate(): Promise<void> {
      return c.run(() => applyPostgresMigrations(c.sql, c.schema));
    },

    ping(): Promise<void> {
      return c.run(async () => {
        await c.sql`SELECT 1`;
      });
    },

    async close(): Promise<void> {
      await c.sql.end({ timeout: 5 });
    },

    pendingMigrations(): Promise<number> {
      return c.run(async () => {
        // to_regclass follows search_path: null when the schema or the bookkeeping table does not exist yet.
        const [t] = await c.sql<{ t: string | null }[]>`SELECT to_regclass('schema_migrations')::text AS t`;
        if (!t?.t) return POSTGRES_MIGRATIONS.length;
        const rows = await c.sql<{ version: number }[]>`SELECT version FROM schema_migrations`;
        const done = new Set(rows.map((r) => r.version));
        return POSTGRES_MIGRATIONS.filter((m) => !done.has(m.version)).length;
      });
    },

    linkDomains(): Promise<string[]> {
      return c.run(async () => (await c.sql.unsafe<{ domain: string }[]>(LINK_DOMAINS_SQL)).map((r) => r.domain));
    },

    hasAccounts(): Promise<boolean> {
      return c.run(async () => {
        const [row] = await c.sql<{ any: boolean }[]>`SELECT EXISTS (SELECT 1 FROM accounts) AS "any"`;
        return row.any;
      });
    },

    /** One REPEATABLE READ transaction on a reserved connection, read through cursors: a consistent snapshot. */
    async *exportAll(): AsyncIterable<ExportRecord> {
      const tx = await c.run(() => c.sql.reserve());
      let open = false;
      try {
        await c.run(() => tx`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`);
        open = true;
        const accounts = tx<Account[]>`
          SELECT id, email, password_hash AS "passwordHash", created_at AS "createdAt"
          FROM accounts ORDER BY created_at, id`;
        for await (const rows of accounts.cursor(EXPORT_PAGE)) for (const a of rows) yield { type: "account", data: a };
        yield* workspaceExportRecords(tx);
        const keys = tx<ApiKeyRow[]>`
          SELECT ${tx.unsafe(API_KEY_COLUMNS)} FROM api_keys ORDER BY created_at, id`;
        for await (const rows of keys.cursor(EXPORT_PAGE)) for (const k of rows) yield { type: "apiKey", data: toApiKeyRecord(k) };
        const links = tx<Record<string, unknown>[]>`SELECT ${tx.unsafe(LINK_COLUMN_LIST)} FROM links ORDER BY created_at, id`;
        for await (const rows of links.cursor(EXPORT_PAGE)) for (const r of rows) yield { type: "link", data: postgresRowToLink(r) };
        const cells = tx<Parameters<typeof toClickCell>[0][]>`${tx.unsafe(summedCells("true"))} ORDER BY 1, 2, 3, 4`;
        for await (const rows of cells.cursor(EXPORT_PAGE)) for (const r of rows) yield { type: "cell", data: toClickCell(r) };
        yield* webhookExportRecords(tx);
        yield* domainExportRecords(tx);
        await tx`COMMIT`;
        open = false;
      } finally {
        if (open) await tx`ROLLBACK`.catch(() => {});
        tx.release();
      }
    },

    importRecords(batch: ExportRecord[]): Promise<ImportResult> {
      const s = splitBatch(batch);
      const n = { accounts: 0, workspaces: 0, members: 0, apiKeys: 0, links: 0, cells: 0, webhookEndpoints: 0, webhookDeliveries: 0, domains: 0 };
      return c.run(async () => {
        // One transaction. A bare ON CONFLICT DO NOTHING covers every unique constraint (id, email, key hash,
        // domain + slug, rollup cell); the EXISTS clauses skip rows whose owner is missing instead of failing
        // the batch on a foreign key. Each statement sees the rows the previous ones inserted.
        await c.sql.begin(async (tx) => {
          if (s.accounts.length > 0) {
            const a = s.accounts;
            const res = await tx`
              INSERT INTO accounts (id, email, password_hash, created_at)
              SELECT * FROM unnest(${a.map((x) => x.id)}::text[], ${a.map((x) => x.email)}::text[],
                                   ${a.map((x) => x.passwordHash)}::text[], ${a.map((x) => x.createdAt)}::bigint[])
              ON CONFLICT DO NOTHING RETURNING id, created_at`;
            n.accounts = res.count;
            // Every account has its personal workspace (ADR 0011), also one of a file from before workspaces.
            for (const r of res) await insertWorkspace(tx, personalWorkspace(r.id, r.created_at), r.id);
          }
          Object.assign(n, await importWorkspaceRecords(tx, s.workspaces, s.members));
          if (s.apiKeys.length > 0) {
            const k = s.apiKeys;
            const res = await tx`
              INSERT INTO api_keys (id, account_id, created_by, name, key_hash, prefix, created_at, last_used_at, revoked_at, scopes)
              SELECT t.id, t.account_id, t.created_by, t.name, t.key_hash, t.prefix, t.created_at, t.last_used_at, t.revoked_at,
                     string_to_array(t.scopes, ' ') FROM unnest(
                ${k.map((x) => x.id)}::text[], ${k.map((x) => x.accountId)}::text[], ${k.map(keyCreator)}::text[], ${k.map((x) => x.name)}::text[],
                ${k.map((x) => x.keyHash)}::text[], ${k.map((x) => x.prefix)}::text[], ${k.map((x) => x.createdAt)}::bigint[],
                ${k.map((x) => x.lastUsedAt)}::bigint[], ${k.map((x) => x.revokedAt)}::bigint[], ${k.map((x) => scopesText(x))}::text[]
              ) AS t(id, account_id, created_by, name, key_hash, prefix, created_at, last_used_at, revoked_at, scopes)
              WHERE EXISTS (SELECT 1 FROM workspaces a WHERE a.id = t.account_id)
              ON CONFLICT DO NOTHING`;
            n.apiKeys = res.count;
          }
          if (s.links.length > 0) n.links = (await insertLinkRows(tx, s.links, true)).length;
          if (s.cells.length > 0) {
            // Cells of a day (or an hour, settleHours) settled already are added to its settled totals too (see recordClicks).
            const x = s.cells;
            const [res] = await tx<{ n: number }[]>`
              WITH ins AS (
                INSERT INTO click_cells (link_id, hour, dims, bot, clicks, visitors)
                SELECT t.link_id, t.hour, t.dims, t.bot <> 0, t.clicks, t.visitors FROM unnest(
                  ${x.map((r) => r.linkId)}::text[], ${x.map((r) => r.hour)}::bigint[], ${x.map((r) => r.dims)}::text[],
                  ${x.map((r) => (r.bot ? 1 : 0))}::integer[], ${x.map((r) => r.clicks)}::bigint[], ${x.map((r) => r.visitors)}::bigint[]
                ) AS t(link_id, hour, dims, bot, clicks, visitors)
                WHERE EXISTS (SELECT 1 FROM links l WHERE l.id = t.link_id)
                  AND NOT EXISTS (${tx.unsafe(cellInSets("t", "t.bot <> 0"))})
                ON CONFLICT DO NOTHING
                RETURNING link_id, hour, dims, bot, clicks, visitors
              ), state AS (
                SELECT settled_before, greatest(settled_before, hours_before) AS hours_before FROM click_settle_state WHERE id = 1 FOR SHARE
              ), late AS (
                SELECT ins.* FROM ins, state WHERE ins.hour < state.hours_before
              ), settled AS (${tx.unsafe(upsertSettledFrom("late", "(SELECT settled_before FROM state)"))})
              SELECT count(*)::int AS n FROM ins`;
            n.cells = res!.n;
          }
          Object.assign(n, await importWebhookRecords(tx, s.webhookEndpoints, s.webhookDeliveries));
          n.domains = await importDomainRecords(tx, s.domains);
        });
        return importResult(s, n);
      });
    },
  };
}

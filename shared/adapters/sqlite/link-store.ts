/**
 * LinkStore on SQLite (`bun:sqlite`, WAL): the embedded default's source of truth. Every method runs
 * synchronously inside (bun:sqlite is synchronous) behind the async port; statements are prepared once
 * per instance and reused.
 */
import { Database, type SQLQueryBindings, type Statement } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { AppError } from "../../errors.ts";
import type { LinkRecord } from "../../link.ts";
import type {
  Account,
  ApiKeyRecord,
  ExportRecord,
  ImportResult,
  LinkFilter,
  LinkStore,
  RollupStats,
  Session,
  StoredClick,
} from "../../ports.ts";
import { clickLogRows, parseClickLogRow, sumCells } from "../click-log.ts";
import { importResult, rollupRecord, splitBatch, storedCountry, storedVariant } from "../export-support.ts";
import {
  decodeCursor,
  encodeCursor,
  foldTotals,
  likeContains,
  pageSize,
  type TotalRow,
} from "../link-store-support.ts";
import { SQLITE_MIGRATIONS, applySqliteMigrations } from "./migrations.ts";

/** Column order shared by INSERT and the values built by `linkValues`. */
const LINK_COLUMNS = [
  "id", "account_id", "domain", "slug", "target", "status", "created_at", "updated_at", "expires_at",
  "starts_at", "max_hits", "hits", "password_hash", "tags", "folder", "utm_source", "utm_medium",
  "utm_campaign", "rules", "ab_urls", "webhook_url", "webhook_secret", "serve_og", "og_title",
  "og_description", "og_image_url",
] as const;

/** SQLite's default SQLITE_MAX_VARIABLE_NUMBER (since 3.32). */
const MAX_VARIABLES = 32766;
const ROWS_PER_INSERT = Math.floor(MAX_VARIABLES / LINK_COLUMNS.length);

interface LinkRow {
  id: string;
  account_id: string;
  domain: string;
  slug: string;
  target: string;
  status: LinkRecord["status"];
  created_at: number;
  updated_at: number;
  expires_at: number | null;
  starts_at: number | null;
  max_hits: number | null;
  hits: number;
  password_hash: string | null;
  tags: string;
  folder: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  rules: string;
  ab_urls: string;
  webhook_url: string | null;
  webhook_secret: string | null;
  serve_og: number;
  og_title: string | null;
  og_description: string | null;
  og_image_url: string | null;
}

const LINK_SELECT = `SELECT ${LINK_COLUMNS.join(", ")} FROM links`;

function rowToLink(r: LinkRow): LinkRecord {
  return {
    id: r.id,
    accountId: r.account_id,
    domain: r.domain,
    slug: r.slug,
    target: r.target,
    status: r.status,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    expiresAt: r.expires_at,
    startsAt: r.starts_at,
    maxHits: r.max_hits,
    hits: r.hits,
    passwordHash: r.password_hash,
    tags: JSON.parse(r.tags),
    folder: r.folder,
    utmSource: r.utm_source,
    utmMedium: r.utm_medium,
    utmCampaign: r.utm_campaign,
    rules: JSON.parse(r.rules),
    abUrls: JSON.parse(r.ab_urls),
    webhookUrl: r.webhook_url,
    webhookSecret: r.webhook_secret,
    serveOg: r.serve_og === 1,
    ogTitle: r.og_title,
    ogDescription: r.og_description,
    ogImageUrl: r.og_image_url,
  };
}

/** Values in LINK_COLUMNS order. */
function linkValues(l: LinkRecord): SQLQueryBindings[] {
  return [
    l.id, l.accountId, l.domain, l.slug, l.target, l.status, l.createdAt, l.updatedAt, l.expiresAt,
    l.startsAt, l.maxHits, l.hits, l.passwordHash, JSON.stringify(l.tags), l.folder, l.utmSource, l.utmMedium,
    l.utmCampaign, JSON.stringify(l.rules), JSON.stringify(l.abUrls), l.webhookUrl, l.webhookSecret,
    l.serveOg ? 1 : 0, l.ogTitle, l.ogDescription, l.ogImageUrl,
  ];
}

const ACCOUNT_SELECT = `SELECT id, email, password_hash AS passwordHash, created_at AS createdAt FROM accounts`;
const SESSION_SELECT = `SELECT id_hash AS idHash, account_id AS accountId, csrf_token AS csrfToken,
  created_at AS createdAt, expires_at AS expiresAt FROM sessions`;
const API_KEY_COLUMNS = `id, account_id AS accountId, name, key_hash AS keyHash, prefix, created_at AS createdAt,
  last_used_at AS lastUsedAt, revoked_at AS revokedAt`;

const isUniqueViolation = (err: unknown) =>
  typeof (err as { code?: unknown })?.code === "string" &&
  (err as { code: string }).code.startsWith("SQLITE_CONSTRAINT_UNIQUE");

/** Ids per `IN (…)` list (links of a click batch, rows of an insert): far below SQLite's 32,766 variables. */
const CLICK_CHUNK = 512;
const INSERT_CLICK_BATCH = `INSERT INTO click_batches (link_id, batch_id, first_ts, last_ts, clicks, data)
  VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (link_id, batch_id) DO NOTHING`;

export class SqliteLinkStore implements LinkStore {
  private readonly db: Database;
  private readonly statements = new Map<string, Statement>();
  private readonly insertStatements = new Map<number, Statement>();
  private readonly path: string;

  /** `path`: a file (its directory is created) or ":memory:". */
  constructor(path: string) {
    this.path = path;
    if (path !== ":memory:" && !path.startsWith("file:")) mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path, { create: true });
    this.db.run("PRAGMA journal_mode = WAL");
    this.db.run("PRAGMA synchronous = NORMAL");
    this.db.run("PRAGMA foreign_keys = ON");
    this.db.run("PRAGMA busy_timeout = 5000");
  }

  /** The statement for `sql`, prepared on first use (tables exist only after migrate()). */
  private st<Row = unknown>(sql: string): Statement<Row> {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s as Statement<Row>;
  }

  async migrate(): Promise<void> {
    applySqliteMigrations(this.db);
  }

  async ping(): Promise<void> {
    this.db.query("SELECT 1").get();
  }

  async close(): Promise<void> {
    for (const s of [...this.statements.values(), ...this.insertStatements.values()]) s.finalize();
    this.statements.clear();
    this.insertStatements.clear();
    this.db.close();
  }

  // --- accounts --------------------------------------------------------------------------------------

  async createAccount(a: Account): Promise<boolean> {
    const res = this.st(
      `INSERT INTO accounts (id, email, password_hash, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (email) DO NOTHING`,
    ).run(a.id, a.email.toLowerCase(), a.passwordHash, a.createdAt);
    return res.changes === 1;
  }

  async getAccountByEmail(email: string): Promise<Account | null> {
    return this.st<Account>(`${ACCOUNT_SELECT} WHERE email = ?`).get(email.toLowerCase()) ?? null;
  }

  async getAccount(id: string): Promise<Account | null> {
    return this.st<Account>(`${ACCOUNT_SELECT} WHERE id = ?`).get(id) ?? null;
  }

  // --- sessions --------------------------------------------------------------------------------------

  async createSession(s: Session): Promise<void> {
    this.st(
      `INSERT INTO sessions (id_hash, account_id, csrf_token, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
    ).run(s.idHash, s.accountId, s.csrfToken, s.createdAt, s.expiresAt);
  }

  async getSession(idHash: string): Promise<Session | null> {
    return this.st<Session>(`${SESSION_SELECT} WHERE id_hash = ?`).get(idHash) ?? null;
  }

  async deleteSession(idHash: string): Promise<void> {
    this.st(`DELETE FROM sessions WHERE id_hash = ?`).run(idHash);
  }

  async deleteExpiredSessions(now: number): Promise<number> {
    return this.st(`DELETE FROM sessions WHERE expires_at <= ?`).run(now).changes;
  }

  // --- API keys --------------------------------------------------------------------------------------

  async createApiKey(k: ApiKeyRecord): Promise<void> {
    this.st(
      `INSERT INTO api_keys (id, account_id, name, key_hash, prefix, created_at, last_used_at, revoked_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(k.id, k.accountId, k.name, k.keyHash, k.prefix, k.createdAt, k.lastUsedAt, k.revokedAt);
  }

  async findApiKeyByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    return this.st<ApiKeyRecord>(`SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE key_hash = ?`).get(keyHash) ?? null;
  }

  async listApiKeys(accountId: string): Promise<ApiKeyRecord[]> {
    return this.st<ApiKeyRecord>(
      `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE account_id = ? ORDER BY created_at DESC, id DESC`,
    ).all(accountId);
  }

  async revokeApiKey(accountId: string, id: string, at: number): Promise<ApiKeyRecord | null> {
    // Revoking twice keeps the first revocation time.
    return (
      this.st<ApiKeyRecord>(
        `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND account_id = ?
         RETURNING ${API_KEY_COLUMNS}`,
      ).get(at, id, accountId) ?? null
    );
  }

  async touchApiKey(id: string, at: number): Promise<void> {
    // Concurrent requests may finish out of order: last-used time only moves forward.
    this.st(`UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`).run(
      at,
      id,
      at,
    );
  }

  // --- links -----------------------------------------------------------------------------------------

  /**
   * Multi-row INSERT for `n` rows. Prepared statements for the few batch sizes that recur (1, the API's
   * bulk sizes) are kept; the cache is bounded because each size is a different statement.
   */
  private insertStatement(n: number): Statement {
    let s = this.insertStatements.get(n);
    if (s) return s;
    const row = `(${LINK_COLUMNS.map(() => "?").join(", ")})`;
    s = this.db.prepare<unknown, SQLQueryBindings[]>(
      `INSERT INTO links (${LINK_COLUMNS.join(", ")}) VALUES ${Array(n).fill(row).join(", ")}
       ON CONFLICT (domain, slug) DO NOTHING`,
    );
    if (this.insertStatements.size >= 8) {
      const [oldest, stale] = this.insertStatements.entries().next().value!;
      stale.finalize();
      this.insertStatements.delete(oldest);
    }
    this.insertStatements.set(n, s);
    return s;
  }

  async insertLinks(links: LinkRecord[]): Promise<boolean[]> {
    if (links.length === 0) return [];
    const inserted = new Set<string>();
    this.db
      .transaction(() => {
        for (let i = 0; i < links.length; i += ROWS_PER_INSERT) {
          const chunk = links.slice(i, i + ROWS_PER_INSERT);
          const { changes } = this.insertStatement(chunk.length).run(...chunk.flatMap(linkValues));
          if (changes === chunk.length) {
            for (const l of chunk) inserted.add(l.id);
            continue;
          }
          // Some slug was taken. Ids are fresh, so a chunk id now in the table is one this statement inserted.
          for (let j = 0; j < chunk.length; j += CLICK_CHUNK) {
            const ids = chunk.slice(j, j + CLICK_CHUNK).map((l) => l.id);
            const found = this.st<{ id: string }>(`SELECT id FROM links WHERE id IN (${ids.map(() => "?").join(",")})`).all(...ids);
            for (const r of found) inserted.add(r.id);
          }
        }
        // Most bulk rows have no tags: the tag index is only written for links that have some.
        const tagged = links.filter((l) => l.tags.length > 0 && inserted.has(l.id)).map((l) => l.id);
        if (tagged.length === 0) return;
        this.st(
          `INSERT OR IGNORE INTO link_tags (link_id, tag)
           SELECT l.id, t.value FROM json_each(?) AS ids JOIN links l ON l.id = ids.value, json_each(l.tags) AS t`,
        ).run(JSON.stringify(tagged));
      })
      .immediate();
    // Rows of one batch are inserted in input order, so of two rows with the same slug the first wins;
    // a later row is "inserted" only if its own id is in the table.
    const claimed = new Set<string>();
    return links.map((l) => {
      if (!inserted.has(l.id) || claimed.has(l.id)) return false;
      claimed.add(l.id);
      return true;
    });
  }

  async getLink(domain: string, slug: string): Promise<LinkRecord | null> {
    const r = this.st<LinkRow>(`${LINK_SELECT} WHERE domain = ? AND slug = ?`).get(domain, slug);
    return r ? rowToLink(r) : null;
  }

  async getLinkById(id: string): Promise<LinkRecord | null> {
    const r = this.st<LinkRow>(`${LINK_SELECT} WHERE id = ?`).get(id);
    return r ? rowToLink(r) : null;
  }

  async updateLink(l: LinkRecord, expectedUpdatedAt?: number): Promise<boolean> {
    try {
      return this.db
        .transaction((): boolean => {
          const res = this.st(
            `UPDATE links SET domain = ?, slug = ?, target = ?, status = ?, updated_at = ?, expires_at = ?,
               starts_at = ?, max_hits = ?, password_hash = ?, tags = ?, folder = ?, utm_source = ?,
               utm_medium = ?, utm_campaign = ?, rules = ?, ab_urls = ?, webhook_url = ?, webhook_secret = ?,
               serve_og = ?, og_title = ?, og_description = ?, og_image_url = ?
             WHERE id = ? AND (? IS NULL OR updated_at = ?)`,
          ).run(
            l.domain, l.slug, l.target, l.status, l.updatedAt, l.expiresAt, l.startsAt, l.maxHits, l.passwordHash,
            JSON.stringify(l.tags), l.folder, l.utmSource, l.utmMedium, l.utmCampaign, JSON.stringify(l.rules),
            JSON.stringify(l.abUrls), l.webhookUrl, l.webhookSecret, l.serveOg ? 1 : 0, l.ogTitle,
            l.ogDescription, l.ogImageUrl, l.id, expectedUpdatedAt ?? null, expectedUpdatedAt ?? null,
          );
          if (res.changes === 0) return false;
          this.st(`DELETE FROM link_tags WHERE link_id = ?`).run(l.id);
          this.st(`INSERT OR IGNORE INTO link_tags (link_id, tag) SELECT ?, value FROM json_each(?)`).run(
            l.id,
            JSON.stringify(l.tags),
          );
          return true;
        })
        .immediate();
    } catch (err) {
      if (isUniqueViolation(err)) throw new AppError("slug_taken", "Slug already taken");
      throw err;
    }
  }

  async deleteLink(id: string): Promise<void> {
    // Tags, raw clicks and rollups go with it (ON DELETE CASCADE).
    this.st(`DELETE FROM links WHERE id = ?`).run(id);
  }

  async listLinks(
    accountId: string,
    filter: LinkFilter,
  ): Promise<{ links: LinkRecord[]; nextCursor: string | null }> {
    const cursor = decodeCursor(filter.cursor);
    const limit = pageSize(filter.limit);
    const where = ["account_id = ?"];
    const args: SQLQueryBindings[] = [accountId];
    if (cursor) {
      where.push("(created_at, id) < (?, ?)");
      args.push(cursor.createdAt, cursor.id);
    }
    if (filter.tag !== undefined) {
      where.push("id IN (SELECT link_id FROM link_tags WHERE tag = ?)");
      args.push(filter.tag);
    }
    if (filter.folder !== undefined) {
      where.push("folder = ?");
      args.push(filter.folder);
    }
    if (filter.status !== undefined) {
      where.push("status = ?");
      args.push(filter.status);
    }
    if (filter.q !== undefined && filter.q !== "") {
      // SQLite's LIKE ignores ASCII case only; the pattern is lower-cased to match lower(column).
      where.push(`(lower(slug) LIKE ? ESCAPE '\\' OR lower(target) LIKE ? ESCAPE '\\')`);
      const pattern = likeContains(filter.q);
      args.push(pattern, pattern);
    }
    args.push(limit + 1);
    // One statement per combination of filters (at most 32), each prepared once.
    const rows = this.st<LinkRow>(
      `${LINK_SELECT} WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`,
    ).all(...args);
    const page = rows.slice(0, limit).map(rowToLink);
    const last = page[page.length - 1];
    const nextCursor = rows.length > limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null;
    return { links: page, nextCursor };
  }

  // --- clicks and stats ------------------------------------------------------------------------------

  async recordClicks(clicks: StoredClick[]): Promise<void> {
    if (clicks.length === 0) return;
    const rows = clickLogRows(clicks);
    this.db
      .transaction(() => {
        // Rows of links deleted meanwhile are dropped; of the rest, only those new to the log (a redelivered
        // batch is skipped by ON CONFLICT) count towards rollups and hits, summed here and written once per
        // cell and link.
        const linkIds = [...new Set(rows.map((r) => r.linkId))];
        const live = new Set<string>();
        for (let i = 0; i < linkIds.length; i += CLICK_CHUNK) {
          const part = linkIds.slice(i, i + CLICK_CHUNK);
          const found = this.st<{ id: string }>(`SELECT id FROM links WHERE id IN (${part.map(() => "?").join(",")})`).all(...part);
          for (const r of found) live.add(r.id);
        }
        const insert = this.st(INSERT_CLICK_BATCH);
        const written = rows.filter(
          (r) => live.has(r.linkId) && insert.run(r.linkId, r.batch, r.firstTs, r.lastTs, r.clicks, r.data).changes > 0,
        );
        const rollup = this.st(
          `INSERT INTO click_rollups (link_id, hour, device, browser, country, variant, clicks)
           VALUES (?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (link_id, hour, device, browser, country, variant) DO UPDATE SET clicks = clicks + excluded.clicks`,
        );
        for (const { linkId, cell: c } of sumCells(written)) {
          rollup.run(linkId, c.hour, c.device, c.browser, c.country, c.variant, c.clicks);
        }
        const hits = new Map<string, number>();
        for (const r of written) hits.set(r.linkId, (hits.get(r.linkId) ?? 0) + r.clicks);
        const bump = this.st(`UPDATE links SET hits = hits + ? WHERE id = ?`);
        for (const [linkId, n] of hits) bump.run(n, linkId);
      })
      .immediate();
  }

  async *rawClicks(linkId: string): AsyncIterable<StoredClick> {
    // Its own statement, not a cached one: another call could run a shared statement between two yields.
    const rows = this.db.prepare<{ batch: string; data: string }, [string]>(
      `SELECT batch_id AS batch, data FROM click_batches WHERE link_id = ? ORDER BY first_ts, batch_id`,
    );
    try {
      for (const r of rows.iterate(linkId)) yield* parseClickLogRow(linkId, r.batch, r.data);
    } finally {
      rows.finalize();
    }
  }

  // --- operations: readiness, export, import ---------------------------------------------------------

  async pendingMigrations(): Promise<number> {
    let done: Set<number>;
    try {
      done = new Set(this.st<{ version: number }>(`SELECT version FROM schema_migrations`).all().map((r) => r.version));
    } catch {
      return SQLITE_MIGRATIONS.length; // no bookkeeping table: nothing applied yet
    }
    return SQLITE_MIGRATIONS.filter((m) => !done.has(m.version)).length;
  }

  /**
   * Reads through a second connection inside one read transaction: a consistent snapshot (WAL) that the
   * writes of this store's own connection, e.g. the click consumer in the same process, never join.
   */
  async *exportAll(): AsyncIterable<ExportRecord> {
    const own = this.path === ":memory:";
    const db = own ? this.db : new Database(this.path);
    try {
      if (!own) {
        db.run("PRAGMA busy_timeout = 5000");
        db.run("PRAGMA query_only = ON");
        db.run("BEGIN");
      }
      for (const a of db.query<Account, []>(`${ACCOUNT_SELECT} ORDER BY created_at, id`).iterate()) {
        yield { type: "account", data: a };
      }
      for (const k of db.query<ApiKeyRecord, []>(`SELECT ${API_KEY_COLUMNS} FROM api_keys ORDER BY created_at, id`).iterate()) {
        yield { type: "apiKey", data: k };
      }
      for (const r of db.query<LinkRow, []>(`${LINK_SELECT} ORDER BY created_at, id`).iterate()) {
        yield { type: "link", data: rowToLink(r) };
      }
      type RollupRow = Parameters<typeof rollupRecord>[0];
      const rollups = db.query<RollupRow, []>(
        `SELECT link_id, hour, device, browser, country, variant, clicks FROM click_rollups
         ORDER BY link_id, hour, device, browser, country, variant`,
      );
      for (const r of rollups.iterate()) yield { type: "rollup", data: rollupRecord(r) };
    } finally {
      if (!own) {
        if (db.inTransaction) db.run("COMMIT");
        db.close();
      }
    }
  }

  async importRecords(batch: ExportRecord[]): Promise<ImportResult> {
    const s = splitBatch(batch);
    const n = { accounts: 0, apiKeys: 0, links: 0, rollups: 0 };
    // A bare ON CONFLICT DO NOTHING covers every unique constraint (id, email, key hash, domain + slug);
    // the EXISTS clauses skip rows whose owner is missing instead of failing the batch on a foreign key.
    this.db
      .transaction(() => {
        const account = this.st(
          `INSERT INTO accounts (id, email, password_hash, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`,
        );
        for (const a of s.accounts) n.accounts += account.run(a.id, a.email, a.passwordHash, a.createdAt).changes;
        const key = this.st(
          `INSERT INTO api_keys (id, account_id, name, key_hash, prefix, created_at, last_used_at, revoked_at)
           SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM accounts WHERE id = ?) ON CONFLICT DO NOTHING`,
        );
        for (const k of s.apiKeys) {
          n.apiKeys += key.run(
            k.id, k.accountId, k.name, k.keyHash, k.prefix, k.createdAt, k.lastUsedAt, k.revokedAt, k.accountId,
          ).changes;
        }
        const link = this.st(
          `INSERT INTO links (${LINK_COLUMNS.join(", ")}) SELECT ${LINK_COLUMNS.map(() => "?").join(", ")}
           WHERE EXISTS (SELECT 1 FROM accounts WHERE id = ?) ON CONFLICT DO NOTHING`,
        );
        const tags = this.st(`INSERT OR IGNORE INTO link_tags (link_id, tag) SELECT ?, value FROM json_each(?)`);
        for (const l of s.links) {
          if (link.run(...linkValues(l), l.accountId).changes === 0) continue;
          n.links++;
          tags.run(l.id, JSON.stringify(l.tags));
        }
        const rollup = this.st(
          `INSERT INTO click_rollups (link_id, hour, device, browser, country, variant, clicks)
           SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM links WHERE id = ?) ON CONFLICT DO NOTHING`,
        );
        for (const r of s.rollups) {
          n.rollups += rollup.run(
            r.linkId, r.hour, r.device, r.browser, storedCountry(r.country), storedVariant(r.variant), r.clicks, r.linkId,
          ).changes;
        }
      })
      .immediate();
    return importResult(s, n);
  }

  async getStats(linkId: string, fromHour: number): Promise<RollupStats> {
    const totals = this.st<TotalRow>(`SELECT dimension, value, clicks FROM click_totals WHERE link_id = ?`).all(linkId);
    const hourly = this.st<{ hour: number; clicks: number }>(
      `SELECT hour, clicks FROM click_hourly WHERE link_id = ? AND hour >= ? ORDER BY hour`,
    ).all(linkId, fromHour);
    return foldTotals(totals, hourly);
  }
}

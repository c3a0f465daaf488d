/**
 * LinkStore on Postgres (`postgres` package, postgres.js 3.4): scale mode's source of truth.
 * Batch writes are single statements over arrays (`unnest`), so their text, and therefore their server-side
 * prepared statement, is the same whatever the batch size, and no parameter limit applies.
 * Connection failures surface as AppError "unavailable" (503) rather than as internal errors.
 */
import postgres from "postgres";
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
import { clickLogRows, parseClickLogRow } from "../click-log.ts";
import { EXPORT_PAGE, importResult, rollupRecord, splitBatch, storedCountry, storedVariant } from "../export-support.ts";
import {
  decodeCursor,
  encodeCursor,
  foldTotals,
  likeContains,
  pageSize,
  type TotalRow,
} from "../link-store-support.ts";
import { POSTGRES_MIGRATIONS, applyPostgresMigrations } from "./migrations.ts";

export interface PostgresLinkStoreOptions {
  /** Schema holding the tables; created by migrate() when missing. Default: the server's search_path. */
  schema?: string;
  /** Pool size (default 10). */
  max?: number;
}

/** Error codes meaning "the database cannot be reached right now", not "this request is wrong". */
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "EPIPE",
  "CONNECT_TIMEOUT", "CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED",
  "57P01", "57P02", "57P03", // admin shutdown, crash shutdown, cannot connect now
  "53300", // too many connections
]);

function toStorageError(err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && UNAVAILABLE_CODES.has(code)) {
    const e = new AppError("unavailable", "Storage is unavailable", { retryAfter: 1 });
    e.cause = err;
    return e;
  }
  const pg = err as { code?: unknown; constraint_name?: unknown } | null;
  if (pg?.code === "23505" && pg.constraint_name === "links_domain_slug_key") {
    return new AppError("slug_taken", "Slug already taken");
  }
  return err;
}

/** bigint columns (epoch ms, counters) as JS numbers: all of them stay far below 2^53. */
const int8AsNumber = {
  to: 20,
  from: [20],
  serialize: (x: number) => String(x),
  parse: (x: string) => Number(x),
};

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
  tags: string[];
  folder: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  rules: LinkRecord["rules"];
  ab_urls: LinkRecord["abUrls"];
  webhook_url: string | null;
  webhook_secret: string | null;
  serve_og: boolean;
  og_title: string | null;
  og_description: string | null;
  og_image_url: string | null;
}

const LINK_COLUMNS = `id, account_id, domain, slug, target, status, created_at, updated_at, expires_at, starts_at,
  max_hits, hits, password_hash, tags, folder, utm_source, utm_medium, utm_campaign, rules, ab_urls, webhook_url,
  webhook_secret, serve_og, og_title, og_description, og_image_url`;

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
    tags: r.tags,
    folder: r.folder,
    utmSource: r.utm_source,
    utmMedium: r.utm_medium,
    utmCampaign: r.utm_campaign,
    rules: r.rules,
    abUrls: r.ab_urls,
    webhookUrl: r.webhook_url,
    webhookSecret: r.webhook_secret,
    serveOg: r.serve_og,
    ogTitle: r.og_title,
    ogDescription: r.og_description,
    ogImageUrl: r.og_image_url,
  };
}

const API_KEY_COLUMNS = `id, account_id AS "accountId", name, key_hash AS "keyHash", prefix, created_at AS "createdAt",
  last_used_at AS "lastUsedAt", revoked_at AS "revokedAt"`;

export class PostgresLinkStore implements LinkStore {
  private readonly sql;
  private readonly schema: string | undefined;

  constructor(url: string, opts: PostgresLinkStoreOptions = {}) {
    if (opts.schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(opts.schema)) {
      throw new Error(`Invalid Postgres schema name "${opts.schema}": use lower-case letters, digits and _`);
    }
    this.schema = opts.schema;
    this.sql = postgres(url, {
      max: opts.max ?? 10,
      connect_timeout: 5, // a database that is down fails fast instead of hanging requests
      onnotice: () => {}, // "schema already exists, skipping" and the like are not worth a log line
      types: { int8: int8AsNumber },
      // A startup parameter, so every pooled connection (also ones opened later) uses the schema.
      connection: opts.schema ? { search_path: opts.schema, application_name: "clink" } : { application_name: "clink" },
    });
  }

  /** Runs `work`, turning connection failures into AppError "unavailable". */
  private async run<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      throw toStorageError(err);
    }
  }

  migrate(): Promise<void> {
    return this.run(() => applyPostgresMigrations(this.sql, this.schema));
  }

  ping(): Promise<void> {
    return this.run(async () => {
      await this.sql`SELECT 1`;
    });
  }

  async close(): Promise<void> {
    await this.sql.end({ timeout: 5 });
  }

  // --- accounts --------------------------------------------------------------------------------------

  createAccount(a: Account): Promise<boolean> {
    return this.run(async () => {
      const res = await this.sql`
        INSERT INTO accounts (id, email, password_hash, created_at)
        VALUES (${a.id}, ${a.email.toLowerCase()}, ${a.passwordHash}, ${a.createdAt})
        ON CONFLICT (email) DO NOTHING`;
      return res.count === 1;
    });
  }

  getAccountByEmail(email: string): Promise<Account | null> {
    return this.run(async () => {
      const [row] = await this.sql<Account[]>`
        SELECT id, email, password_hash AS "passwordHash", created_at AS "createdAt"
        FROM accounts WHERE email = ${email.toLowerCase()}`;
      return row ?? null;
    });
  }

  getAccount(id: string): Promise<Account | null> {
    return this.run(async () => {
      const [row] = await this.sql<Account[]>`
        SELECT id, email, password_hash AS "passwordHash", created_at AS "createdAt" FROM accounts WHERE id = ${id}`;
      return row ?? null;
    });
  }

  // --- sessions --------------------------------------------------------------------------------------

  createSession(s: Session): Promise<void> {
    return this.run(async () => {
      await this.sql`
        INSERT INTO sessions (id_hash, account_id, csrf_token, created_at, expires_at)
        VALUES (${s.idHash}, ${s.accountId}, ${s.csrfToken}, ${s.createdAt}, ${s.expiresAt})`;
    });
  }

  getSession(idHash: string): Promise<Session | null> {
    return this.run(async () => {
      const [row] = await this.sql<Session[]>`
        SELECT id_hash AS "idHash", account_id AS "accountId", csrf_token AS "csrfToken",
               created_at AS "createdAt", expires_at AS "expiresAt"
        FROM sessions WHERE id_hash = ${idHash}`;
      return row ?? null;
    });
  }

  deleteSession(idHash: string): Promise<void> {
    return this.run(async () => {
      await this.sql`DELETE FROM sessions WHERE id_hash = ${idHash}`;
    });
  }

  deleteExpiredSessions(now: number): Promise<number> {
    return this.run(async () => (await this.sql`DELETE FROM sessions WHERE expires_at <= ${now}`).count);
  }

  // --- API keys --------------------------------------------------------------------------------------

  createApiKey(k: ApiKeyRecord): Promise<void> {
    return this.run(async () => {
      await this.sql`
        INSERT INTO api_keys (id, account_id, name, key_hash, prefix, created_at, last_used_at, revoked_at)
        VALUES (${k.id}, ${k.accountId}, ${k.name}, ${k.keyHash}, ${k.prefix}, ${k.createdAt},
                ${k.lastUsedAt}, ${k.revokedAt})`;
    });
  }

  findApiKeyByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    return this.run(async () => {
      const [row] = await this.sql<ApiKeyRecord[]>`
        SELECT ${this.sql.unsafe(API_KEY_COLUMNS)} FROM api_keys WHERE key_hash = ${keyHash}`;
      return row ?? null;
    });
  }

  listApiKeys(accountId: string): Promise<ApiKeyRecord[]> {
    return this.run(async () => {
      const rows = await this.sql<ApiKeyRecord[]>`
        SELECT ${this.sql.unsafe(API_KEY_COLUMNS)} FROM api_keys
        WHERE account_id = ${accountId} ORDER BY created_at DESC, id DESC`;
      return [...rows];
    });
  }

  revokeApiKey(accountId: string, id: string, at: number): Promise<ApiKeyRecord | null> {
    return this.run(async () => {
      // Revoking twice keeps the first revocation time.
      const [row] = await this.sql<ApiKeyRecord[]>`
        UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ${at})
        WHERE id = ${id} AND account_id = ${accountId}
        RETURNING ${this.sql.unsafe(API_KEY_COLUMNS)}`;
      return row ?? null;
    });
  }

  touchApiKey(id: string, at: number): Promise<void> {
    return this.run(async () => {
      // Concurrent requests may finish out of order: last-used time only moves forward.
      await this.sql`
        UPDATE api_keys SET last_used_at = ${at}
        WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ${at})`;
    });
  }

  // --- links -----------------------------------------------------------------------------------------

  insertLinks(links: LinkRecord[]): Promise<boolean[]> {
    if (links.length === 0) return Promise.resolve([]);
    return this.run(async () => {
      const rows = await insertLinkRows(this.sql, links, false);
      const inserted = new Set(rows.map((r) => r.id));
      const claimed = new Set<string>();
      return links.map((l) => {
        if (!inserted.has(l.id) || claimed.has(l.id)) return false;
        claimed.add(l.id);
        return true;
      });
    });
  }

  getLink(domain: string, slug: string): Promise<LinkRecord | null> {
    return this.run(async () => {
      const [row] = await this.sql<LinkRow[]>`
        SELECT ${this.sql.unsafe(LINK_COLUMNS)} FROM links WHERE domain = ${domain} AND slug = ${slug}`;
      return row ? rowToLink(row) : null;
    });
  }

  getLinkById(id: string): Promise<LinkRecord | null> {
    return this.run(async () => {
      const [row] = await this.sql<LinkRow[]>`SELECT ${this.sql.unsafe(LINK_COLUMNS)} FROM links WHERE id = ${id}`;
      return row ? rowToLink(row) : null;
    });
  }

  updateLink(l: LinkRecord, expectedUpdatedAt?: number): Promise<boolean> {
    const expected = expectedUpdatedAt ?? null;
    return this.run(async () => {
      // One statement: the row, then its tag rows brought in line with the new list. JSON goes in as text
      // (`::text::jsonb`) because postgres.js would JSON-encode a jsonb-typed parameter a second time.
      const [{ n }] = await this.sql<{ n: number }[]>`
        WITH u AS (
          UPDATE links SET
            domain = ${l.domain}, slug = ${l.slug}, target = ${l.target}, status = ${l.status},
            updated_at = ${l.updatedAt}, expires_at = ${l.expiresAt}, starts_at = ${l.startsAt},
            max_hits = ${l.maxHits}, password_hash = ${l.passwordHash},
            tags = ${JSON.stringify(l.tags)}::text::jsonb, folder = ${l.folder},
            utm_source = ${l.utmSource}, utm_medium = ${l.utmMedium}, utm_campaign = ${l.utmCampaign},
            rules = ${JSON.stringify(l.rules)}::text::jsonb, ab_urls = ${JSON.stringify(l.abUrls)}::text::jsonb,
            webhook_url = ${l.webhookUrl}, webhook_secret = ${l.webhookSecret}, serve_og = ${l.serveOg},
            og_title = ${l.ogTitle}, og_description = ${l.ogDescription}, og_image_url = ${l.ogImageUrl}
          WHERE id = ${l.id} AND (${expected}::bigint IS NULL OR updated_at = ${expected}::bigint)
          RETURNING id
        ), gone AS (
          DELETE FROM link_tags
          WHERE link_id IN (SELECT id FROM u) AND NOT (tag = ANY (${l.tags}::text[]))
        ), added AS (
          INSERT INTO link_tags (link_id, tag)
          SELECT u.id, t.tag FROM u CROSS JOIN unnest(${l.tags}::text[]) AS t(tag)
          ON CONFLICT DO NOTHING
        )
        SELECT count(*)::int AS n FROM u`;
      return n > 0;
    });
  }

  deleteLink(id: string): Promise<void> {
    return this.run(async () => {
      // Tags, raw clicks and rollups go with it (ON DELETE CASCADE).
      await this.sql`DELETE FROM links WHERE id = ${id}`;
    });
  }

  async listLinks(
    accountId: string,
    filter: LinkFilter,
  ): Promise<{ links: LinkRecord[]; nextCursor: string | null }> {
    const cursor = decodeCursor(filter.cursor); // rejects with invalid_input before any I/O
    const limit = pageSize(filter.limit);
    const sql = this.sql;
    const q = filter.q !== undefined && filter.q !== "" ? likeContains(filter.q) : null;
    return this.run(async () => {
      const rows = await sql<LinkRow[]>`
        SELECT ${sql.unsafe(LINK_COLUMNS)} FROM links
        WHERE account_id = ${accountId}
          ${cursor ? sql`AND (created_at, id) < (${cursor.createdAt}::bigint, ${cursor.id}::text)` : sql``}
          ${filter.tag !== undefined ? sql`AND id IN (SELECT link_id FROM link_tags WHERE tag = ${filter.tag})` : sql``}
          ${filter.folder !== undefined ? sql`AND folder = ${filter.folder}` : sql``}
          ${filter.status !== undefined ? sql`AND status = ${filter.status}` : sql``}
          ${q !== null ? sql`AND (slug ILIKE ${q} OR target ILIKE ${q})` : sql``}
        ORDER BY created_at DESC, id DESC
        LIMIT ${limit + 1}`;
      const page = rows.slice(0, limit).map(rowToLink);
      const last = page[page.length - 1];
      const nextCursor = rows.length > limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null;
      return { links: page, nextCursor };
    });
  }

  // --- clicks and stats ------------------------------------------------------------------------------

  /**
   * One statement, so one transaction: log rows of deleted links are filtered out, rows written before (a
   * redelivered batch) are skipped by ON CONFLICT, and only the rows inserted (RETURNING) let their rollup
   * cells and hit counts in. A batch of 2,000 clicks of one link is a handful of log rows and cells, not 2,000
   * rows, which took Postgres from about 5.7 to 0.7 µs of CPU per click.
   */
  recordClicks(clicks: StoredClick[]): Promise<void> {
    if (clicks.length === 0) return Promise.resolve();
    const rows = clickLogRows(clicks);
    const cells = rows.flatMap((r, i) => r.cells.map((c) => ({ row: i, c })));
    const col = <T>(pick: (r: (typeof rows)[number]) => T) => rows.map(pick);
    const cellCol = <T>(pick: (x: (typeof cells)[number]) => T) => cells.map(pick);
    // The data texts go as one string, not as a text[] parameter: postgres.js escapes every quote of an array
    // element with regular expressions (a quarter of the consumer's CPU), and these are JSON, full of quotes.
    // JSON.stringify writes control characters escaped, so U+0001 never occurs inside them and can separate them.
    const data = rows.map((r) => r.data).join("\u0001");
    return this.run(async () => {
      await this.sql`
        WITH batch AS (
          SELECT * FROM unnest(
            ${col((r) => r.linkId)}::text[], ${col((r) => r.batch)}::text[], ${col((r) => r.firstTs)}::bigint[],
            ${col((r) => r.lastTs)}::bigint[], ${col((r) => r.clicks)}::integer[], string_to_array(${data}::text, chr(1))
          ) AS t(link_id, batch_id, first_ts, last_ts, clicks, data)
        ), ins AS (
          INSERT INTO click_batches (link_id, batch_id, first_ts, last_ts, clicks, data)
          SELECT b.* FROM batch b WHERE EXISTS (SELECT 1 FROM links l WHERE l.id = b.link_id)
          ON CONFLICT (link_id, batch_id) DO NOTHING
          RETURNING link_id, batch_id, clicks
        ), cell AS (
          SELECT * FROM unnest(
            ${cellCol((x) => rows[x.row]!.linkId)}::text[], ${cellCol((x) => rows[x.row]!.batch)}::text[],
            ${cellCol((x) => x.c.hour)}::bigint[], ${cellCol((x) => x.c.device)}::text[], ${cellCol((x) => x.c.browser)}::text[],
            ${cellCol((x) => x.c.country)}::text[], ${cellCol((x) => x.c.variant)}::integer[], ${cellCol((x) => x.c.clicks)}::integer[]
          ) AS t(link_id, batch_id, hour, device, browser, country, variant, clicks)
        ), rolled AS (
          INSERT INTO click_rollups AS r (link_id, hour, device, browser, country, variant, clicks)
          SELECT c.link_id, c.hour, c.device, c.browser, c.country, c.variant, sum(c.clicks)
          FROM cell c JOIN ins i ON i.link_id = c.link_id AND i.batch_id = c.batch_id
          GROUP BY 1, 2, 3, 4, 5, 6
          ORDER BY 1, 2, 3, 4, 5, 6 -- a fixed lock order keeps concurrent batches from deadlocking
          ON CONFLICT (link_id, hour, device, browser, country, variant)
          DO UPDATE SET clicks = r.clicks + excluded.clicks
        )
        UPDATE links SET hits = links.hits + n.clicks
        FROM (SELECT link_id, sum(clicks) AS clicks FROM ins GROUP BY link_id) AS n
        WHERE links.id = n.link_id`;
    });
  }

  async *rawClicks(linkId: string): AsyncIterable<StoredClick> {
    const rows = this.sql<{ batch: string; data: string }[]>`
      SELECT batch_id AS batch, data FROM click_batches WHERE link_id = ${linkId} ORDER BY first_ts, batch_id`;
    for await (const page of rows.cursor(EXPORT_PAGE)) {
      for (const r of page) yield* parseClickLogRow(linkId, r.batch, r.data);
    }
  }

  // --- operations: readiness, export, import ---------------------------------------------------------

  pendingMigrations(): Promise<number> {
    return this.run(async () => {
      // to_regclass follows search_path: null when the schema or the bookkeeping table does not exist yet.
      const [t] = await this.sql<{ t: string | null }[]>`SELECT to_regclass('schema_migrations')::text AS t`;
      if (!t?.t) return POSTGRES_MIGRATIONS.length;
      const rows = await this.sql<{ version: number }[]>`SELECT version FROM schema_migrations`;
      const done = new Set(rows.map((r) => r.version));
      return POSTGRES_MIGRATIONS.filter((m) => !done.has(m.version)).length;
    });
  }

  /** One REPEATABLE READ transaction on a reserved connection, read through cursors: a consistent snapshot. */
  async *exportAll(): AsyncIterable<ExportRecord> {
    const tx = await this.run(() => this.sql.reserve());
    let open = false;
    try {
      await this.run(() => tx`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`);
      open = true;
      const accounts = tx<Account[]>`
        SELECT id, email, password_hash AS "passwordHash", created_at AS "createdAt"
        FROM accounts ORDER BY created_at, id`;
      for await (const rows of accounts.cursor(EXPORT_PAGE)) for (const a of rows) yield { type: "account", data: a };
      const keys = tx<ApiKeyRecord[]>`
        SELECT ${tx.unsafe(API_KEY_COLUMNS)} FROM api_keys ORDER BY created_at, id`;
      for await (const rows of keys.cursor(EXPORT_PAGE)) for (const k of rows) yield { type: "apiKey", data: k };
      const links = tx<LinkRow[]>`SELECT ${tx.unsafe(LINK_COLUMNS)} FROM links ORDER BY created_at, id`;
      for await (const rows of links.cursor(EXPORT_PAGE)) for (const r of rows) yield { type: "link", data: rowToLink(r) };
      const rollups = tx<Parameters<typeof rollupRecord>[0][]>`
        SELECT link_id, hour, device, browser, country, variant, clicks FROM click_rollups
        ORDER BY link_id, hour, device, browser, country, variant`;
      for await (const rows of rollups.cursor(EXPORT_PAGE)) for (const r of rows) yield { type: "rollup", data: rollupRecord(r) };
      await tx`COMMIT`;
      open = false;
    } finally {
      if (open) await tx`ROLLBACK`.catch(() => {});
      tx.release();
    }
  }

  importRecords(batch: ExportRecord[]): Promise<ImportResult> {
    const s = splitBatch(batch);
    const n = { accounts: 0, apiKeys: 0, links: 0, rollups: 0 };
    return this.run(async () => {
      // One transaction. A bare ON CONFLICT DO NOTHING covers every unique constraint (id, email, key hash,
      // domain + slug, rollup cell); the EXISTS clauses skip rows whose owner is missing instead of failing
      // the batch on a foreign key. Each statement sees the rows the previous ones inserted.
      await this.sql.begin(async (tx) => {
        if (s.accounts.length > 0) {
          const a = s.accounts;
          const res = await tx`
            INSERT INTO accounts (id, email, password_hash, created_at)
            SELECT * FROM unnest(${a.map((x) => x.id)}::text[], ${a.map((x) => x.email)}::text[],
                                 ${a.map((x) => x.passwordHash)}::text[], ${a.map((x) => x.createdAt)}::bigint[])
            ON CONFLICT DO NOTHING`;
          n.accounts = res.count;
        }
        if (s.apiKeys.length > 0) {
          const k = s.apiKeys;
          const res = await tx`
            INSERT INTO api_keys (id, account_id, name, key_hash, prefix, created_at, last_used_at, revoked_at)
            SELECT t.* FROM unnest(
              ${k.map((x) => x.id)}::text[], ${k.map((x) => x.accountId)}::text[], ${k.map((x) => x.name)}::text[],
              ${k.map((x) => x.keyHash)}::text[], ${k.map((x) => x.prefix)}::text[], ${k.map((x) => x.createdAt)}::bigint[],
              ${k.map((x) => x.lastUsedAt)}::bigint[], ${k.map((x) => x.revokedAt)}::bigint[]
            ) AS t(id, account_id, name, key_hash, prefix, created_at, last_used_at, revoked_at)
            WHERE EXISTS (SELECT 1 FROM accounts a WHERE a.id = t.account_id)
            ON CONFLICT DO NOTHING`;
          n.apiKeys = res.count;
        }
        if (s.links.length > 0) n.links = (await insertLinkRows(tx, s.links, true)).length;
        if (s.rollups.length > 0) {
          const r = s.rollups;
          const res = await tx`
            INSERT INTO click_rollups (link_id, hour, device, browser, country, variant, clicks)
            SELECT t.* FROM unnest(
              ${r.map((x) => x.linkId)}::text[], ${r.map((x) => x.hour)}::bigint[], ${r.map((x) => x.device)}::text[],
              ${r.map((x) => x.browser)}::text[], ${r.map((x) => storedCountry(x.country))}::text[],
              ${r.map((x) => storedVariant(x.variant))}::integer[], ${r.map((x) => x.clicks)}::bigint[]
            ) AS t(link_id, hour, device, browser, country, variant, clicks)
            WHERE EXISTS (SELECT 1 FROM links l WHERE l.id = t.link_id)
            ON CONFLICT DO NOTHING`;
          n.rollups = res.count;
        }
      });
      return importResult(s, n);
    });
  }

  getStats(linkId: string, fromHour: number): Promise<RollupStats> {
    return this.run(async () => {
      const [totals, hourly] = await Promise.all([
        this.sql<TotalRow[]>`SELECT dimension, value, clicks FROM click_totals WHERE link_id = ${linkId}`,
        this.sql<{ hour: number; clicks: number }[]>`
          SELECT hour, clicks FROM click_hourly WHERE link_id = ${linkId} AND hour >= ${fromHour} ORDER BY hour`,
      ]);
      return foldTotals([...totals], [...hourly]);
    });
  }
}

/**
 * One statement inserting links in input order (so of two rows with the same slug the first wins), their tags
 * in the same statement, returning the ids actually inserted. `requireAccount` skips rows whose account is
 * missing (imports) instead of failing the batch on the foreign key.
 */
async function insertLinkRows(sql: postgres.Sql | postgres.TransactionSql, links: LinkRecord[], requireAccount: boolean) {
  const col = <T>(pick: (l: LinkRecord) => T) => links.map(pick);
  const ownerExists = requireAccount ? sql`WHERE EXISTS (SELECT 1 FROM accounts a WHERE a.id = i.account_id)` : sql``;
  return sql<{ id: string }[]>`
    WITH input AS (
      SELECT * FROM unnest(
        ${col((l) => l.id)}::text[], ${col((l) => l.accountId)}::text[], ${col((l) => l.domain)}::text[],
        ${col((l) => l.slug)}::text[], ${col((l) => l.target)}::text[], ${col((l) => l.status)}::text[],
        ${col((l) => l.createdAt)}::bigint[], ${col((l) => l.updatedAt)}::bigint[],
        ${col((l) => l.expiresAt)}::bigint[], ${col((l) => l.startsAt)}::bigint[],
        ${col((l) => l.maxHits)}::integer[], ${col((l) => l.hits)}::bigint[],
        ${col((l) => l.passwordHash)}::text[], ${col((l) => JSON.stringify(l.tags))}::text[],
        ${col((l) => l.folder)}::text[], ${col((l) => l.utmSource)}::text[], ${col((l) => l.utmMedium)}::text[],
        ${col((l) => l.utmCampaign)}::text[], ${col((l) => JSON.stringify(l.rules))}::text[],
        ${col((l) => JSON.stringify(l.abUrls))}::text[], ${col((l) => l.webhookUrl)}::text[],
        ${col((l) => l.webhookSecret)}::text[], ${col((l) => (l.serveOg ? 1 : 0))}::smallint[],
        ${col((l) => l.ogTitle)}::text[], ${col((l) => l.ogDescription)}::text[],
        ${col((l) => l.ogImageUrl)}::text[]
      ) WITH ORDINALITY AS t(id, account_id, domain, slug, target, status, created_at, updated_at, expires_at,
        starts_at, max_hits, hits, password_hash, tags, folder, utm_source, utm_medium, utm_campaign, rules,
        ab_urls, webhook_url, webhook_secret, serve_og, og_title, og_description, og_image_url, ord)
    ), ins AS (
      INSERT INTO links (${sql.unsafe(LINK_COLUMNS)})
      SELECT id, account_id, domain, slug, target, status, created_at, updated_at, expires_at, starts_at,
             max_hits, hits, password_hash, tags::jsonb, folder, utm_source, utm_medium, utm_campaign,
             rules::jsonb, ab_urls::jsonb, webhook_url, webhook_secret, serve_og = 1, og_title,
             og_description, og_image_url
      FROM input i ${ownerExists}
      ORDER BY ord
      ON CONFLICT DO NOTHING
      RETURNING id, tags
    ), tagged AS (
      INSERT INTO link_tags (link_id, tag)
      SELECT ins.id, jsonb_array_elements_text(ins.tags) FROM ins
      ON CONFLICT DO NOTHING
    )
    SELECT id FROM ins`;
}

/** The links role of the Postgres store: link rows, their tag index, and the account's filtered list. */
import type postgres from "postgres";
import type { LinkRecord } from "../../link.ts";
import type { LinkFilter, LinkStore } from "../../ports.ts";
import { decodeCursor, encodeCursor, likeContains, pageSize } from "../link-store-support.ts";
import type { PostgresConnection } from "./connection.ts";

export interface LinkRow {
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

export const LINK_COLUMNS = `id, account_id, domain, slug, target, status, created_at, updated_at, expires_at, starts_at,
  max_hits, hits, password_hash, tags, folder, utm_source, utm_medium, utm_campaign, rules, ab_urls, webhook_url,
  webhook_secret, serve_og, og_title, og_description, og_image_url`;

export function rowToLink(r: LinkRow): LinkRecord {
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

export function postgresLinks(c: PostgresConnection): LinkStore {
  return {
    insertLinks(links: LinkRecord[]): Promise<boolean[]> {
      if (links.length === 0) return Promise.resolve([]);
      return c.run(async () => {
        const rows = await insertLinkRows(c.sql, links, false);
        const inserted = new Set(rows.map((r) => r.id));
        const claimed = new Set<string>();
        return links.map((l) => {
          if (!inserted.has(l.id) || claimed.has(l.id)) return false;
          claimed.add(l.id);
          return true;
        });
      });
    },

    getLink(domain: string, slug: string): Promise<LinkRecord | null> {
      return c.run(async () => {
        const [row] = await c.sql<LinkRow[]>`
          SELECT ${c.sql.unsafe(LINK_COLUMNS)} FROM links WHERE domain = ${domain} AND slug = ${slug}`;
        return row ? rowToLink(row) : null;
      });
    },

    getLinkById(id: string): Promise<LinkRecord | null> {
      return c.run(async () => {
        const [row] = await c.sql<LinkRow[]>`SELECT ${c.sql.unsafe(LINK_COLUMNS)} FROM links WHERE id = ${id}`;
        return row ? rowToLink(row) : null;
      });
    },

    updateLink(l: LinkRecord, expectedUpdatedAt?: number): Promise<boolean> {
      const expected = expectedUpdatedAt ?? null;
      return c.run(async () => {
        // One statement: the row, then its tag rows brought in line with the new list. JSON goes in as text
        // (`::text::jsonb`) because postgres.js would JSON-encode a jsonb-typed parameter a second time.
        const [{ n }] = await c.sql<{ n: number }[]>`
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
    },

    deleteLink(id: string): Promise<void> {
      return c.run(async () => {
        // Tags, raw clicks and rollups go with it (ON DELETE CASCADE).
        await c.sql`DELETE FROM links WHERE id = ${id}`;
      });
    },

    async listLinks(
      accountId: string,
      filter: LinkFilter,
    ): Promise<{ links: LinkRecord[]; nextCursor: string | null }> {
      const cursor = decodeCursor(filter.cursor); // rejects with invalid_input before any I/O
      const limit = pageSize(filter.limit);
      const sql = c.sql;
      const q = filter.q !== undefined && filter.q !== "" ? likeContains(filter.q) : null;
      return c.run(async () => {
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
    },
  };
}

/**
 * One statement inserting links in input order (so of two rows with the same slug the first wins), their tags
 * in the same statement, returning the ids actually inserted. `requireAccount` skips rows whose account is
 * missing (imports) instead of failing the batch on the foreign key.
 */
export async function insertLinkRows(sql: postgres.Sql | postgres.TransactionSql, links: LinkRecord[], requireAccount: boolean) {
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

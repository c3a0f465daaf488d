/** The links role of the Postgres store: link rows, their tag index, and the account's filtered list. */
import type postgres from "postgres";
import type { LinkRecord, LinkState } from "../../link.ts";
import {
  LINK_COLUMN_LIST,
  postgresInsertArrays,
  postgresRowToLink,
  postgresUpdateSet,
  stateCondition,
} from "../link-columns.ts";
import type { LinkEvents, LinkFilter, LinkMatch, LinkStore, TagsAndFolders } from "../../ports.ts";
import {
  decodeCursor,
  encodeCursor,
  likeContains,
  pageSize,
  rowsToTagsAndFolders,
  TAGS_AND_FOLDERS_SQL,
} from "../link-store-support.ts";
import type { PostgresConnection } from "./connection.ts";
import { writeWebhookEvents } from "./event-webhooks.ts";
import { postgresHitReservations } from "./hit-reservations.ts";

type LinkRow = Record<string, unknown>;

export function postgresLinks(c: PostgresConnection): LinkStore {
  return {
    ...postgresHitReservations(c),
    insertLinks(links: LinkRecord[], events: LinkEvents = []): Promise<boolean[]> {
      if (links.length === 0) return Promise.resolve([]);
      return c.run(async () => {
        const rows = await withEvents(c, events, async (sql) => {
          const rows = await insertLinkRows(sql, links, false);
          const ids = new Set(rows.map((r) => r.id));
          return { result: rows, events: events.filter((e) => ids.has(e.linkId)) };
        });
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
          SELECT ${c.sql.unsafe(LINK_COLUMN_LIST)} FROM links WHERE domain = ${domain} AND slug = ${slug}`;
        return row ? postgresRowToLink(row) : null;
      });
    },

    getLinkById(id: string): Promise<LinkRecord | null> {
      return c.run(async () => {
        const [row] = await c.sql<LinkRow[]>`SELECT ${c.sql.unsafe(LINK_COLUMN_LIST)} FROM links WHERE id = ${id}`;
        return row ? postgresRowToLink(row) : null;
      });
    },

    updateLink(l: LinkRecord, expectedUpdatedAt?: number, events: LinkEvents = []): Promise<boolean> {
      const { set, values } = postgresUpdateSet(l, 5);
      return c.run(() => withEvents(c, events, async (sql) => {
        // One statement: the row, then its tag rows brought in line with the new list.
        const [{ n }] = await sql.unsafe<{ n: number }[]>(
          `WITH u AS (
            UPDATE links SET ${set}
            WHERE id = $1 AND ($2::bigint IS NULL OR updated_at = $2::bigint)
            RETURNING id
          ), gone AS (
            DELETE FROM link_tags
            WHERE link_id IN (SELECT id FROM u) AND NOT (tag = ANY ($3::text[]))
          ), added AS (
            INSERT INTO link_tags (link_id, tag)
            SELECT u.id, t.tag FROM u CROSS JOIN unnest($4::text[]) AS t(tag)
            ON CONFLICT DO NOTHING
          )
          SELECT count(*)::int AS n FROM u`,
          [l.id, expectedUpdatedAt ?? null, l.tags, l.tags, ...values] as postgres.ParameterOrJSON<never>[],
        );
        return { result: n > 0, events: n > 0 ? events : [] };
      }));
    },

    deleteLink(id: string, events: LinkEvents = []): Promise<void> {
      return c.run(() => withEvents(c, events, async (sql) => {
        // Tags, raw clicks and rollups go with it (ON DELETE CASCADE).
        const { count } = await sql`DELETE FROM links WHERE id = ${id}`;
        return { result: undefined, events: count > 0 ? events : [] };
      }));
    },

    async listLinks(
      accountId: string,
      filter: LinkFilter,
    ): Promise<{ links: LinkRecord[]; nextCursor: string | null }> {
      const cursor = decodeCursor(filter.cursor); // rejects with invalid_input before any I/O
      const limit = pageSize(filter.limit);
      const sql = c.sql;
      return c.run(async () => {
        const rows = await sql<LinkRow[]>`
          SELECT ${sql.unsafe(LINK_COLUMN_LIST)} FROM links
          WHERE ${matching(sql, accountId, filter)}
            ${cursor ? sql`AND (created_at, id) < (${cursor.createdAt}::bigint, ${cursor.id}::text)` : sql``}
          ORDER BY created_at DESC, id DESC
          LIMIT ${limit + 1}`;
        const page = rows.slice(0, limit).map(postgresRowToLink);
        const last = page[page.length - 1];
        const nextCursor = rows.length > limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null;
        return { links: page, nextCursor };
      });
    },

    countLinks(accountId: string, filter: LinkMatch, max?: number): Promise<number> {
      const sql = c.sql;
      return c.run(async () => {
        const [{ n }] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM (
          SELECT id FROM links WHERE ${matching(sql, accountId, filter)} ${max === undefined ? sql`` : sql`LIMIT ${max}`}) m`;
        return n;
      });
    },

    listTagsAndFolders(accountId: string, recentLinks: number): Promise<TagsAndFolders> {
      return c.run(async () =>
        rowsToTagsAndFolders(await c.sql.unsafe<{ kind: string; value: string }[]>(TAGS_AND_FOLDERS_SQL, [accountId, pageSize(recentLinks)])),
      );
    },
  };
}

/**
 * Runs a link change and writes the events it answers in one transaction; without events, the change alone on the
 * pool, as before (no BEGIN and COMMIT round trips on the hot path).
 */
async function withEvents<T>(
  c: PostgresConnection,
  events: LinkEvents,
  change: (sql: postgres.Sql | postgres.TransactionSql) => Promise<{ result: T; events: LinkEvents }>,
): Promise<T> {
  if (events.length === 0) return (await change(c.sql)).result;
  return (await c.sql.begin(async (tx) => {
    const done = await change(tx);
    if (done.events.length) await writeWebhookEvents(tx, done.events);
    return done.result;
  })) as T;
}

/**
 * One statement inserting links in input order (so of two rows with the same slug the first wins), their tags
 * in the same statement, returning the ids actually inserted. `requireAccount` skips rows whose account is
 * missing (imports) instead of failing the batch on the foreign key.
 */
export async function insertLinkRows(sql: postgres.Sql | postgres.TransactionSql, links: LinkRecord[], requireAccount: boolean) {
  const { unnest, select, values } = postgresInsertArrays(links);
  const ownerExists = requireAccount ? "WHERE EXISTS (SELECT 1 FROM workspaces a WHERE a.id = i.account_id)" : "";
  // A row whose slug, or whose owner's externalId, is taken is left out (the service tells which).
  return sql.unsafe<{ id: string }[]>(
    `WITH input AS (
      SELECT * FROM unnest(${unnest}) WITH ORDINALITY AS t(${LINK_COLUMN_LIST}, ord)
    ), ins AS (
      INSERT INTO links (${LINK_COLUMN_LIST})
      SELECT ${select}
      FROM input i ${ownerExists}
      ORDER BY ord
      ON CONFLICT DO NOTHING
      RETURNING id, tags
    ), tagged AS (
      INSERT INTO link_tags (link_id, tag)
      SELECT ins.id, jsonb_array_elements_text(ins.tags) FROM ins
      ON CONFLICT DO NOTHING
    )
    SELECT id FROM ins`,
    values as postgres.ParameterOrJSON<never>[],
  );
}

/** The conditions of the account's links a filter matches, paging aside, as a postgres.js fragment. */
function matching(sql: postgres.Sql, accountId: string, filter: LinkMatch) {
  const q = filter.q !== undefined && filter.q !== "" ? likeContains(filter.q) : null;
  // Tag and folder ignore case: lower(tag) and lower(folder) are what the indexes of migration 13 hold.
  return sql`account_id = ${accountId}
    ${filter.tag !== undefined ? sql`AND id IN (SELECT link_id FROM link_tags WHERE lower(tag) = lower(${filter.tag}))` : sql``}
    ${filter.folder !== undefined ? sql`AND lower(folder) = lower(${filter.folder})` : sql``}
    ${filter.status !== undefined ? sql`AND status = ${filter.status}` : sql``}
    ${filter.externalId !== undefined ? sql`AND external_id = ${filter.externalId}` : sql``}
    ${filter.domain !== undefined ? sql`AND domain = ${filter.domain}` : sql``}
    ${filter.state !== undefined ? stateFilter(sql, filter.state.state, filter.state.now) : sql``}
    ${q !== null ? sql`AND (slug ILIKE ${q} OR target ILIKE ${q})` : sql``}`;
}

/** The live-state condition (link-columns.ts) as a postgres.js fragment, its `?` placeholders bound in order. */
function stateFilter(sql: postgres.Sql, state: LinkState, now: number) {
  const { sql: condition, args } = stateCondition(state, now);
  const parts = condition.split("?");
  return sql`AND ${parts.slice(1).reduce((acc, part, i) => sql`${acc}${args[i]}::bigint${sql.unsafe(part)}`, sql.unsafe(parts[0]))}`;
}

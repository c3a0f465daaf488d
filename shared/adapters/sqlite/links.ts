/** The links role of the SQLite store: link rows, their tag index, and the account's filtered list. */
import type { SQLQueryBindings, Statement } from "bun:sqlite";
import { AppError } from "../../errors.ts";
import type { LinkRecord } from "../../link.ts";
import type { LinkEvents, LinkFilter, LinkMatch, LinkStore, TagsAndFolders } from "../../ports.ts";
import {
  LINK_COLUMN_LIST,
  LINK_COLUMNS,
  SQLITE_UPDATE_SET,
  sqliteInsertValues,
  sqliteRowToLink,
  sqliteUpdateValues,
  stateCondition,
} from "../link-columns.ts";
import {
  decodeCursor,
  encodeCursor,
  likeContains,
  pageSize,
  rowsToTagsAndFolders,
  TAGS_AND_FOLDERS_SQL,
} from "../link-store-support.ts";
import { CLICK_CHUNK, type SqliteConnection } from "./connection.ts";
import { writeWebhookEvents } from "./event-webhooks.ts";
import { sqliteHitReservations } from "./hit-reservations.ts";

/** SQLite's default SQLITE_MAX_VARIABLE_NUMBER (since 3.32). */
const MAX_VARIABLES = 32766;
const ROWS_PER_INSERT = Math.floor(MAX_VARIABLES / LINK_COLUMNS.length);

export const LINK_SELECT = `SELECT ${LINK_COLUMN_LIST} FROM links`;

type LinkRow = Record<string, unknown>;

const isUniqueViolation = (err: unknown) =>
  typeof (err as { code?: unknown })?.code === "string" &&
  (err as { code: string }).code.startsWith("SQLITE_CONSTRAINT_UNIQUE");

/** The error a unique index of the links table stands for: another link has this slug, or this externalId. */
function uniqueViolationError(err: unknown): AppError {
  return String((err as Error).message).includes("external_id")
    ? new AppError("external_id_taken", "Another link of this account has this externalId")
    : new AppError("slug_taken", "Slug already taken");
}

/** The WHERE conditions (and their arguments) of the account's links a filter matches, paging aside. */
function matching(accountId: string, filter: LinkMatch): { where: string[]; args: SQLQueryBindings[] } {
  const where = ["account_id = ?"];
  const args: SQLQueryBindings[] = [accountId];
  // Tag and folder ignore case: lower(tag) and lower(folder) are what the indexes of migration 10 hold.
  if (filter.tag !== undefined) {
    where.push("id IN (SELECT link_id FROM link_tags WHERE lower(tag) = lower(?))");
    args.push(filter.tag);
  }
  if (filter.folder !== undefined) {
    where.push("lower(folder) = lower(?)");
    args.push(filter.folder);
  }
  if (filter.status !== undefined) {
    where.push("status = ?");
    args.push(filter.status);
  }
  if (filter.externalId !== undefined) {
    where.push("external_id = ?");
    args.push(filter.externalId);
  }
  if (filter.domain !== undefined) {
    where.push("domain = ?");
    args.push(filter.domain);
  }
  if (filter.state !== undefined) {
    const state = stateCondition(filter.state.state, filter.state.now);
    where.push(state.sql);
    args.push(...state.args);
  }
  if (filter.q !== undefined && filter.q !== "") {
    // SQLite's LIKE ignores ASCII case only; the pattern is lower-cased to match lower(column).
    where.push(`(lower(slug) LIKE ? ESCAPE '\\' OR lower(target) LIKE ? ESCAPE '\\')`);
    const pattern = likeContains(filter.q);
    args.push(pattern, pattern);
  }
  return { where, args };
}

export function sqliteLinks(c: SqliteConnection): LinkStore {
  const insertStatements = new Map<number, Statement>();
  c.onClose(() => {
    for (const s of insertStatements.values()) s.finalize();
    insertStatements.clear();
  });

  /**
   * Multi-row INSERT for `n` rows. Prepared statements for the few batch sizes that recur (1, the API's
   * bulk sizes) are kept; the cache is bounded because each size is a different statement.
   */
  function insertStatement(n: number): Statement {
    let s = insertStatements.get(n);
    if (s) return s;
    const row = `(${LINK_COLUMNS.map(() => "?").join(", ")})`;
    // A row whose slug, or whose owner's externalId, is taken is left out (the service tells which).
    s = c.db.prepare<unknown, SQLQueryBindings[]>(
      `INSERT INTO links (${LINK_COLUMN_LIST}) VALUES ${Array(n).fill(row).join(", ")}
       ON CONFLICT DO NOTHING`,
    );
    if (insertStatements.size >= 8) {
      const [oldest, stale] = insertStatements.entries().next().value!;
      stale.finalize();
      insertStatements.delete(oldest);
    }
    insertStatements.set(n, s);
    return s;
  }

  return {
    ...sqliteHitReservations(c),
    async insertLinks(links: LinkRecord[], events: LinkEvents = []): Promise<boolean[]> {
      if (links.length === 0) return [];
      const inserted = new Set<string>();
      const write = () => {
        for (let i = 0; i < links.length; i += ROWS_PER_INSERT) {
          const chunk = links.slice(i, i + ROWS_PER_INSERT);
          const { changes } = insertStatement(chunk.length).run(...chunk.flatMap(sqliteInsertValues));
          if (changes === chunk.length) {
            for (const l of chunk) inserted.add(l.id);
            continue;
          }
          // Some slug was taken. Ids are fresh, so a chunk id now in the table is one this statement inserted.
          for (let j = 0; j < chunk.length; j += CLICK_CHUNK) {
            const ids = chunk.slice(j, j + CLICK_CHUNK).map((l) => l.id);
            const found = c.st<{ id: string }>(`SELECT id FROM links WHERE id IN (${ids.map(() => "?").join(",")})`).all(...ids);
            for (const r of found) inserted.add(r.id);
          }
        }
        if (events.length) writeWebhookEvents(c, events.filter((e) => inserted.has(e.linkId)));
        // Most bulk rows have no tags: the tag index is only written for links that have some.
        const tagged = links.filter((l) => l.tags.length > 0 && inserted.has(l.id)).map((l) => l.id);
        if (tagged.length === 0) return;
        c.st(
          `INSERT OR IGNORE INTO link_tags (link_id, tag)
           SELECT l.id, t.value FROM json_each(?) AS ids JOIN links l ON l.id = ids.value, json_each(l.tags) AS t`,
        ).run(JSON.stringify(tagged));
      };
      // One INSERT is atomic on its own: the transaction is for what goes with it (events, tag rows, a second
      // statement). Without them, a bulk of plain links is written without BEGIN IMMEDIATE and COMMIT, which cost it
      // about 5 ms of 18-31 (500 rows into a file of 40,000-160,000 links, bun:sqlite, alternated: 21.5 ms without,
      // 27.4 with, medians of 49 each, load 4.5).
      if (events.length === 0 && links.length <= ROWS_PER_INSERT && links.every((l) => l.tags.length === 0)) write();
      else c.db.transaction(write).immediate();
      // Rows of one batch are inserted in input order, so of two rows with the same slug the first wins;
      // a later row is "inserted" only if its own id is in the table.
      const claimed = new Set<string>();
      return links.map((l) => {
        if (!inserted.has(l.id) || claimed.has(l.id)) return false;
        claimed.add(l.id);
        return true;
      });
    },

    async getLink(domain: string, slug: string): Promise<LinkRecord | null> {
      const r = c.st<LinkRow>(`${LINK_SELECT} WHERE domain = ? AND slug = ?`).get(domain, slug);
      return r ? sqliteRowToLink(r) : null;
    },

    async getLinkById(id: string): Promise<LinkRecord | null> {
      const r = c.st<LinkRow>(`${LINK_SELECT} WHERE id = ?`).get(id);
      return r ? sqliteRowToLink(r) : null;
    },

    async updateLink(l: LinkRecord, expectedUpdatedAt?: number, events: LinkEvents = []): Promise<boolean> {
      try {
        return c.db
          .transaction((): boolean => {
            const res = c.st(
              `UPDATE links SET ${SQLITE_UPDATE_SET} WHERE id = ? AND (? IS NULL OR updated_at = ?)`,
            ).run(...sqliteUpdateValues(l), l.id, expectedUpdatedAt ?? null, expectedUpdatedAt ?? null);
            if (res.changes === 0) return false;
            c.st(`DELETE FROM link_tags WHERE link_id = ?`).run(l.id);
            c.st(`INSERT OR IGNORE INTO link_tags (link_id, tag) SELECT ?, value FROM json_each(?)`).run(
              l.id,
              JSON.stringify(l.tags),
            );
            if (events.length) writeWebhookEvents(c, events);
            return true;
          })
          .immediate();
      } catch (err) {
        if (isUniqueViolation(err)) throw uniqueViolationError(err);
        throw err;
      }
    },

    async deleteLink(id: string, events: LinkEvents = []): Promise<void> {
      // Tags, raw clicks and rollups go with it (ON DELETE CASCADE).
      const remove = () => c.st(`DELETE FROM links WHERE id = ?`).run(id).changes;
      if (events.length === 0) return void remove();
      c.db.transaction(() => void (remove() > 0 && writeWebhookEvents(c, events))).immediate();
    },

    async listLinks(
      accountId: string,
      filter: LinkFilter,
    ): Promise<{ links: LinkRecord[]; nextCursor: string | null }> {
      const cursor = decodeCursor(filter.cursor);
      const limit = pageSize(filter.limit);
      const { where, args } = matching(accountId, filter);
      if (cursor) {
        where.push("(created_at, id) < (?, ?)");
        args.push(cursor.createdAt, cursor.id);
      }
      args.push(limit + 1);
      // One statement per combination of filters (at most 6 x 2^5), each prepared once.
      const rows = c.st<LinkRow>(
        `${LINK_SELECT} WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`,
      ).all(...args);
      const page = rows.slice(0, limit).map(sqliteRowToLink);
      const last = page[page.length - 1];
      const nextCursor = rows.length > limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null;
      return { links: page, nextCursor };
    },

    async countLinks(accountId: string, filter: LinkMatch, max?: number): Promise<number> {
      const { where, args } = matching(accountId, filter);
      const sql = `SELECT id FROM links WHERE ${where.join(" AND ")}`;
      if (max === undefined) return c.st<{ n: number }>(`SELECT count(*) AS n FROM (${sql})`).get(...args)!.n;
      return c.st<{ n: number }>(`SELECT count(*) AS n FROM (${sql} LIMIT ?)`).get(...args, max)!.n;
    },

    async listTagsAndFolders(accountId: string, recentLinks: number): Promise<TagsAndFolders> {
      return rowsToTagsAndFolders(c.st<{ kind: string; value: string }>(TAGS_AND_FOLDERS_SQL).all(accountId, pageSize(recentLinks)));
    },
  };
}

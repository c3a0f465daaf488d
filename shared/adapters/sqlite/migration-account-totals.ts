/**
 * SQLite migration 26 (issue #20, docs/adr/0013-account-top-links.md): an account's top links and series read days
 * and the best links, not every link's rows.
 *
 * - click_account_totals: per account, UTC day and bot flag, the clicks and first visits of its links;
 * - click_link_totals: per link, grain (a UTC day, a calendar month) and bot flag, its clicks, with the account
 *   beside it under an index on (account, grain, bucket, bot, clicks descending): read best first per bucket;
 * - click_recent: which links have cells in each hour not settled yet (and the day before), so an account's
 *   current hour reads its active links' cells, not a primary-key probe per link of the account.
 *
 * The totals are derived from the settled `via` rows (every click has one `via` value, so a day's `via` rows sum to
 * the link's day), by triggers on click_settled: whatever settles or adds to them (settleDays, settleHours, a late
 * click in recordClicks, an import) keeps these right without a line of its own. A link's deletion subtracts its
 * day totals from its account's first (a trigger on links); its own rows go with it (foreign key).
 * Backfilled here from the rows already settled, and click_recent from the cells not settled yet.
 */
import { settledKey } from "../click-log.ts";

const VIA_DAY = settledKey("via", "day");
const VIA_MONTH = settledKey("via", "month");

/** Adds `sign` × a click_settled row (NEW or OLD) of via to the link's and the account's totals. */
const addRow = (row: "NEW" | "OLD", sign: "+" | "-") => `
  INSERT INTO click_link_totals (link_id, grain, bucket, bot, account_id, clicks, visitors)
    SELECT ${row}.link_id, CASE ${row}.dimension WHEN '${VIA_DAY}' THEN 'day' ELSE 'month' END, ${row}.bucket, ${row}.bot, l.account_id,
      ${sign}${row}.clicks, ${sign}${row}.visitors
    FROM links l WHERE l.id = ${row}.link_id
    ON CONFLICT (link_id, grain, bucket, bot) DO UPDATE SET clicks = clicks + excluded.clicks, visitors = visitors + excluded.visitors;
  INSERT INTO click_account_totals (account_id, bucket, bot, clicks, visitors)
    SELECT l.account_id, ${row}.bucket, ${row}.bot, ${sign}${row}.clicks, ${sign}${row}.visitors
    FROM links l WHERE l.id = ${row}.link_id AND ${row}.dimension = '${VIA_DAY}'
    ON CONFLICT (account_id, bucket, bot) DO UPDATE SET clicks = clicks + excluded.clicks, visitors = visitors + excluded.visitors;`;

const WATCHED = `('${VIA_DAY}', '${VIA_MONTH}')`;

export const ACCOUNT_TOTALS_SQLITE = `
CREATE TABLE click_link_totals (
  link_id    TEXT NOT NULL REFERENCES links(id) ON DELETE CASCADE,
  grain      TEXT NOT NULL CHECK (grain IN ('day', 'month')),
  bucket     INTEGER NOT NULL,
  bot        INTEGER NOT NULL,
  account_id TEXT NOT NULL,
  clicks     INTEGER NOT NULL,
  visitors   INTEGER NOT NULL,
  PRIMARY KEY (link_id, grain, bucket, bot)
) WITHOUT ROWID;
CREATE INDEX click_link_totals_rank ON click_link_totals (account_id, grain, bucket, bot, clicks DESC, link_id);

CREATE TABLE click_account_totals (
  account_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  bucket     INTEGER NOT NULL,
  bot        INTEGER NOT NULL,
  clicks     INTEGER NOT NULL,
  visitors   INTEGER NOT NULL,
  PRIMARY KEY (account_id, bucket, bot)
) WITHOUT ROWID;

-- Keyed by hour, then account: an account's read of an hour is one range. No foreign key: a deleted link's rows are
-- never read (its cells are gone) and go with the hour's pruning.
CREATE TABLE click_recent (
  hour       INTEGER NOT NULL,
  account_id TEXT NOT NULL,
  link_id    TEXT NOT NULL,
  PRIMARY KEY (hour, account_id, link_id)
) WITHOUT ROWID;

INSERT INTO click_link_totals (link_id, grain, bucket, bot, account_id, clicks, visitors)
  SELECT s.link_id, CASE s.dimension WHEN '${VIA_DAY}' THEN 'day' ELSE 'month' END, s.bucket, s.bot, l.account_id, sum(s.clicks), sum(s.visitors)
  FROM click_settled s JOIN links l ON l.id = s.link_id WHERE s.dimension IN ${WATCHED} GROUP BY 1, 2, 3, 4;
INSERT INTO click_account_totals (account_id, bucket, bot, clicks, visitors)
  SELECT account_id, bucket, bot, sum(clicks), sum(visitors) FROM click_link_totals WHERE grain = 'day' GROUP BY 1, 2, 3;
INSERT INTO click_recent (hour, account_id, link_id)
  SELECT DISTINCT c.hour, l.account_id, c.link_id FROM click_cells c JOIN links l ON l.id = c.link_id
  WHERE c.hour >= (SELECT max(settled_before, hours_before) - 86400000 FROM click_settle_state WHERE id = 1);

CREATE TRIGGER click_totals_settled_insert AFTER INSERT ON click_settled WHEN NEW.dimension IN ${WATCHED}
BEGIN ${addRow("NEW", "+")}
END;
CREATE TRIGGER click_totals_settled_update AFTER UPDATE ON click_settled WHEN NEW.dimension IN ${WATCHED}
BEGIN ${addRow("OLD", "-")} ${addRow("NEW", "+")}
END;
-- Before the link's rows go (its click_link_totals by foreign key): what it added to its account's days.
CREATE TRIGGER click_totals_link_deleted BEFORE DELETE ON links
BEGIN
  UPDATE click_account_totals SET clicks = click_account_totals.clicks - t.clicks, visitors = click_account_totals.visitors - t.visitors
    FROM (SELECT bucket, bot, clicks, visitors FROM click_link_totals WHERE link_id = OLD.id AND grain = 'day') AS t
    WHERE click_account_totals.account_id = OLD.account_id AND click_account_totals.bucket = t.bucket AND click_account_totals.bot = t.bot;
END;
`;

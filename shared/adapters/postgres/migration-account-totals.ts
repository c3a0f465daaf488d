/**
 * Postgres migration 28 (issue #20, docs/adr/0013-account-top-links.md): an account's top links and series read
 * days and the best links, not every link's rows. The same tables as SQLite's migration 26 (see there), without
 * click_recent: Postgres finds an account's cells of the hours not settled yet through the BRIN index on hour.
 *
 * Kept by statement-level triggers on click_settled (its transition tables: one statement per settle, late write or
 * import, not a trigger call per row), so every writer of settled rows keeps them without a line of its own; a
 * link's deletion (a statement trigger on links) subtracts its day totals from its account's and drops its rows.
 */
import { settledKey } from "../click-log.ts";

const VIA_DAY = settledKey("via", "day");
const VIA_MONTH = settledKey("via", "month");
const WATCHED = `('${VIA_DAY}', '${VIA_MONTH}')`;

/**
 * Adds the rows of `delta` (link_id, dimension, bucket, bot, clicks, visitors: via rows, summed) to the link and
 * account totals; sorted, so concurrent writers take row locks in one order.
 */
const addDelta = (delta: string) => `
  INSERT INTO click_link_totals AS x (link_id, grain, bucket, bot, account_id, clicks, visitors)
  SELECT d.link_id, CASE d.dimension WHEN '${VIA_DAY}' THEN 'day' ELSE 'month' END, d.bucket, d.bot, l.account_id, sum(d.clicks), sum(d.visitors)
  FROM (${delta}) d JOIN links l ON l.id = d.link_id GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4
  ON CONFLICT (link_id, grain, bucket, bot) DO UPDATE SET clicks = x.clicks + excluded.clicks, visitors = x.visitors + excluded.visitors;
  INSERT INTO click_account_totals AS x (account_id, bucket, bot, clicks, visitors)
  SELECT l.account_id, d.bucket, d.bot, sum(d.clicks), sum(d.visitors)
  FROM (${delta}) d JOIN links l ON l.id = d.link_id WHERE d.dimension = '${VIA_DAY}' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (account_id, bucket, bot) DO UPDATE SET clicks = x.clicks + excluded.clicks, visitors = x.visitors + excluded.visitors;`;

export const ACCOUNT_TOTALS_POSTGRES = `
CREATE TABLE click_link_totals (
  link_id    text NOT NULL,
  grain      text NOT NULL CHECK (grain IN ('day', 'month')),
  bucket     bigint NOT NULL,
  bot        boolean NOT NULL,
  account_id text NOT NULL,
  clicks     bigint NOT NULL,
  visitors   bigint NOT NULL,
  PRIMARY KEY (link_id, grain, bucket, bot)
);
CREATE INDEX click_link_totals_rank ON click_link_totals (account_id, grain, bucket, bot, clicks DESC, link_id);

CREATE TABLE click_account_totals (
  account_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  bucket     bigint NOT NULL,
  bot        boolean NOT NULL,
  clicks     bigint NOT NULL,
  visitors   bigint NOT NULL,
  PRIMARY KEY (account_id, bucket, bot)
);

INSERT INTO click_link_totals (link_id, grain, bucket, bot, account_id, clicks, visitors)
  SELECT s.link_id, CASE s.dimension WHEN '${VIA_DAY}' THEN 'day' ELSE 'month' END, s.bucket, s.bot, l.account_id, sum(s.clicks), sum(s.visitors)
  FROM click_settled s JOIN links l ON l.id = s.link_id WHERE s.dimension IN ${WATCHED} GROUP BY 1, 2, 3, 4, 5;
INSERT INTO click_account_totals (account_id, bucket, bot, clicks, visitors)
  SELECT account_id, bucket, bot, sum(clicks), sum(visitors) FROM click_link_totals WHERE grain = 'day' GROUP BY 1, 2, 3;

CREATE FUNCTION click_totals_of_settled_insert() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  ${addDelta(`SELECT link_id, dimension, bucket, bot, clicks, visitors FROM settled_new WHERE dimension IN ${WATCHED}`)}
  RETURN NULL;
END $$;
CREATE TRIGGER click_totals_of_settled_insert AFTER INSERT ON click_settled
  REFERENCING NEW TABLE AS settled_new FOR EACH STATEMENT EXECUTE FUNCTION click_totals_of_settled_insert();

CREATE FUNCTION click_totals_of_settled_update() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  -- New rows less old ones, not joined: the planner knows nothing of transition tables' sizes (a nested loop over
  -- 100,000 updated rows took most of a minute).
  ${addDelta(`SELECT link_id, dimension, bucket, bot, clicks, visitors FROM settled_new WHERE dimension IN ${WATCHED}
    UNION ALL SELECT link_id, dimension, bucket, bot, -clicks, -visitors FROM settled_old WHERE dimension IN ${WATCHED}`)}
  RETURN NULL;
END $$;
CREATE TRIGGER click_totals_of_settled_update AFTER UPDATE ON click_settled
  REFERENCING OLD TABLE AS settled_old NEW TABLE AS settled_new FOR EACH STATEMENT EXECUTE FUNCTION click_totals_of_settled_update();

CREATE FUNCTION click_totals_of_deleted_links() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE click_account_totals a SET clicks = a.clicks - t.clicks, visitors = a.visitors - t.visitors
  FROM (SELECT d.account_id, x.bucket, x.bot, sum(x.clicks) AS clicks, sum(x.visitors) AS visitors
        FROM deleted_links d JOIN click_link_totals x ON x.link_id = d.id AND x.grain = 'day' GROUP BY 1, 2, 3) t
  WHERE a.account_id = t.account_id AND a.bucket = t.bucket AND a.bot = t.bot;
  DELETE FROM click_link_totals x USING deleted_links d WHERE x.link_id = d.id;
  RETURN NULL;
END $$;
CREATE TRIGGER click_totals_of_deleted_links AFTER DELETE ON links
  REFERENCING OLD TABLE AS deleted_links FOR EACH STATEMENT EXECUTE FUNCTION click_totals_of_deleted_links();
`;

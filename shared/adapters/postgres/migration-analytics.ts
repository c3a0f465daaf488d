/**
 * Postgres migration 14 (issue #20, docs/adr/0008-analytics-storage.md): the raw click log becomes one row per
 * delivered batch, the four-dimension rollups become cells keyed by every dimension, and settled totals replace
 * the trigger-fed lifetime totals (that trigger was most of the 45 µs a spread click cost). Kept out of
 * migrations.ts for length; never edited once shipped.
 *
 * Cells converted from click_rollups get the dims key of the ten dimensions as they were declared when this
 * migration was written (country, region, city, device, browser, os, referrer, variant, rule, via): only
 * country, device, browser and variant were known; '' (null) for the rest; the old sentinels '' (no country)
 * and -1 (no variant) become null.
 */
const OLD_ROLLUP_DIMS = `country || chr(1) || chr(1) || chr(1) || device || chr(1) || browser || chr(1) || chr(1) || chr(1) ||
    CASE WHEN variant < 0 THEN '' ELSE variant::text END || chr(1) || chr(1)`;

export const ANALYTICS_STORAGE_POSTGRES = `
-- One row per delivered batch, every link's clicks of it (shared/adapters/click-log.ts): a row per batch, not per
-- link and batch, so spread traffic (one click per link per batch) writes one log row per batch. No foreign key:
-- reads keep only clicks of existing links. last_ts orders reads and finds what retention deletes.
CREATE TABLE click_log (
  batch_id text PRIMARY KEY,
  first_ts bigint NOT NULL,
  last_ts  bigint NOT NULL,
  clicks   integer NOT NULL,
  data     text NOT NULL
);
CREATE INDEX click_log_last_ts ON click_log(last_ts, batch_id);
DO $$
BEGIN
  IF current_setting('server_version_num')::int >= 140000 THEN
    EXECUTE 'ALTER TABLE click_log ALTER COLUMN data SET COMPRESSION lz4';
  END IF;
EXCEPTION WHEN feature_not_supported THEN
  NULL;
END $$;

-- Per-link rows became batch rows named <batch>:<link>, so keys stay unique; clicks before had no bot or first
-- visit flag (false), and the referrer host, region, city, rule and arrival were not recorded (null).
INSERT INTO click_log (batch_id, first_ts, last_ts, clicks, data)
  SELECT batch_id || ':' || link_id, first_ts, last_ts, clicks,
    json_build_object('links', json_build_array(link_id), 'ts', d -> 'ts', 'referrerUrl', d -> 'referrer',
      'dims', json_build_object('country', d -> 'country', 'device', d -> 'device', 'browser', d -> 'browser',
        'os', d -> 'os', 'variant', d -> 'variant'))::text
  FROM (SELECT batch_id, link_id, first_ts, last_ts, clicks, data::json AS d FROM click_batches) b;
DROP TRIGGER click_batches_of_deleted_links ON links;
DROP FUNCTION click_batches_of_deleted_links();
DROP TABLE click_batches;

-- Per link, UTC hour, combination of dimensions (encodeDims) and bot flag: clicks and first visits. Counts are
-- raised in place (HOT: no count is indexed) with room left on each page. BRIN on hour: settleDays reads a day of
-- every link's cells, and cells are written in time order, so the range index costs next to nothing per row.
CREATE TABLE click_cells (
  link_id  text NOT NULL,
  hour     bigint NOT NULL,
  dims     text NOT NULL,
  bot      boolean NOT NULL,
  clicks   bigint NOT NULL,
  visitors bigint NOT NULL,
  PRIMARY KEY (link_id, hour, dims, bot)
) WITH (fillfactor = 70);
CREATE INDEX click_cells_hour ON click_cells USING brin (hour);
INSERT INTO click_cells (link_id, hour, dims, bot, clicks, visitors)
  SELECT link_id, hour, ${OLD_ROLLUP_DIMS}, false, clicks, 0 FROM click_rollups WHERE clicks > 0;

DROP TRIGGER click_rollups_totals ON click_rollups;
DROP FUNCTION click_rollups_totals();
DROP TABLE click_totals;
DROP TABLE click_hourly;
DROP TABLE click_rollups;

-- Settled days: dimension '' is the link's total per hour (value ''), else per UTC day; value '' is null.
CREATE TABLE click_settled (
  link_id   text NOT NULL,
  dimension text NOT NULL,
  bucket    bigint NOT NULL,
  value     text NOT NULL,
  bot       boolean NOT NULL,
  clicks    bigint NOT NULL,
  visitors  bigint NOT NULL,
  PRIMARY KEY (link_id, dimension, bucket, value, bot)
);

-- The first UTC day not settled yet (0: nothing settled). recordClicks reads it FOR SHARE, settleDays FOR UPDATE.
CREATE TABLE click_settle_state (
  id             integer PRIMARY KEY CHECK (id = 1),
  settled_before bigint NOT NULL
);
INSERT INTO click_settle_state (id, settled_before) VALUES (1, 0);

-- No per-row foreign key on cells (a referential check per written cell); one statement-level trigger removes a
-- deleted link's cells and settled totals.
CREATE FUNCTION click_data_of_deleted_links() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM click_cells c USING deleted_links d WHERE c.link_id = d.id;
  DELETE FROM click_settled s USING deleted_links d WHERE s.link_id = d.id;
  RETURN NULL;
END $$;
CREATE TRIGGER click_data_of_deleted_links AFTER DELETE ON links
  REFERENCING OLD TABLE AS deleted_links FOR EACH STATEMENT EXECUTE FUNCTION click_data_of_deleted_links();
`;

/**
 * Postgres migration 15: the cells' key text columns compare bytes (COLLATE "C") instead of the database's
 * collation. Every cell written makes Postgres compare its key with those on its primary key's way down, twice for
 * an upsert (the conflict check, then the entry); with the database's collation each text comparison is a strcoll
 * call. Measured on 10,240-cell upserts of all-dimension cells over 10,000 links (Postgres 15, C.UTF-8 database):
 * 5.2 -> 4.7 µs of backend CPU per new cell; a database in a language's collation (en_US.UTF-8) pays more for
 * strcoll, so gains more. Only equality and the index's own order use it: no read orders cells by text.
 * Changing only the collation keeps the rows where they are and rebuilds the primary key.
 */
export const CELL_KEYS_BYTEWISE_POSTGRES = `
ALTER TABLE click_cells ALTER COLUMN link_id TYPE text COLLATE "C", ALTER COLUMN dims TYPE text COLLATE "C";
`;

/**
 * Postgres migration 18: settled totals per ISO week and calendar month (UTC) besides days, so a long range's
 * breakdown reads its whole weeks' and months' rows (settledKey: dimension/week, dimension/month; bucket: the
 * Monday or the 1st). Made here from the day rows already settled; settleDays and late clicks add to all three.
 * Also the settle state's hours_before, for settleHours (hourly rows per dimension of the day not settled yet).
 */
export const SETTLED_WEEKS_MONTHS_POSTGRES = `
-- The first hour of the day after the settled days whose cells are not settled yet (settleHours; at most
-- settled_before means none): its earlier hours have hourly rows per dimension (dimension name/hour).
ALTER TABLE click_settle_state ADD COLUMN hours_before bigint NOT NULL DEFAULT 0;
INSERT INTO click_settled (link_id, dimension, bucket, value, bot, clicks, visitors)
  SELECT link_id, dimension || '/week', bucket - ((bucket / 86400000 + 3) % 7) * 86400000, value, bot, sum(clicks), sum(visitors)
  FROM click_settled WHERE dimension <> '' GROUP BY 1, 2, 3, 4, 5;
INSERT INTO click_settled (link_id, dimension, bucket, value, bot, clicks, visitors)
  SELECT link_id, dimension || '/month', (extract(epoch FROM date_trunc('month', to_timestamp(bucket / 1000) AT TIME ZONE 'UTC')) * 1000)::bigint,
    value, bot, sum(clicks), sum(visitors)
  FROM click_settled WHERE dimension <> '' AND strpos(dimension, '/') = 0 GROUP BY 1, 2, 3, 4, 5;
`;

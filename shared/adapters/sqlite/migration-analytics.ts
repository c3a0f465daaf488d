/**
 * SQLite migration 11 (issue #20, docs/adr/0008-analytics-storage.md): the raw click log becomes one row per
 * delivered batch, the four-dimension rollups become cells keyed by every dimension, and settled totals
 * replace the trigger-fed lifetime totals. Kept out of migrations.ts for length; never edited once shipped.
 *
 * Cells converted from click_rollups get the dims key of the ten dimensions as they were declared when this
 * migration was written (country, region, city, device, browser, os, referrer, variant, rule, via): only
 * country, device, browser and variant were known; '' (null) for the rest; the old sentinels '' (no country)
 * and -1 (no variant) become null.
 */
const OLD_ROLLUP_DIMS = `country || char(1) || char(1) || char(1) || device || char(1) || browser || char(1) || char(1) || char(1) ||
    CASE WHEN variant < 0 THEN '' ELSE CAST(variant AS TEXT) END || char(1) || char(1)`;

export const ANALYTICS_STORAGE_SQLITE = `
-- One row per delivered batch, every link's clicks of it (shared/adapters/click-log.ts). A rowid table: rows are
-- kilobytes. last_ts orders reads and finds what retention deletes.
CREATE TABLE click_log (
  batch_id TEXT PRIMARY KEY,
  first_ts INTEGER NOT NULL,
  last_ts  INTEGER NOT NULL,
  clicks   INTEGER NOT NULL,
  data     TEXT NOT NULL
);
CREATE INDEX click_log_last_ts ON click_log(last_ts, batch_id);

-- Per-link rows became batch rows named <batch>:<link>, so keys stay unique; clicks before had no bot or first
-- visit flag (false), and the referrer host, region, city, rule and arrival were not recorded (null).
INSERT INTO click_log (batch_id, first_ts, last_ts, clicks, data)
  SELECT batch_id || ':' || link_id, first_ts, last_ts, clicks,
    json_object('links', json_array(link_id), 'ts', data -> '$.ts', 'referrerUrl', data -> '$.referrer',
      'dims', json_object('country', data -> '$.country', 'device', data -> '$.device', 'browser', data -> '$.browser',
        'os', data -> '$.os', 'variant', data -> '$.variant'))
  FROM click_batches;
DROP TABLE click_batches;

-- Per link, UTC hour, combination of dimensions (encodeDims) and bot flag: clicks and first visits.
CREATE TABLE click_cells (
  link_id  TEXT NOT NULL REFERENCES links(id) ON DELETE CASCADE,
  hour     INTEGER NOT NULL,
  dims     TEXT NOT NULL,
  bot      INTEGER NOT NULL,
  clicks   INTEGER NOT NULL,
  visitors INTEGER NOT NULL,
  PRIMARY KEY (link_id, hour, dims, bot)
) WITHOUT ROWID;
-- No index on hour (about 4 µs per cell written): settleDays reads link by link through the primary key.
INSERT INTO click_cells (link_id, hour, dims, bot, clicks, visitors)
  SELECT link_id, hour, ${OLD_ROLLUP_DIMS}, 0, clicks, 0 FROM click_rollups WHERE clicks > 0;

DROP TRIGGER click_rollups_totals_insert;
DROP TRIGGER click_rollups_totals_update;
DROP TABLE click_totals;
DROP TABLE click_hourly;
DROP TABLE click_rollups;

-- Settled days: dimension '' is the link's total per hour (value ''), else per UTC day; value '' is null.
CREATE TABLE click_settled (
  link_id   TEXT NOT NULL REFERENCES links(id) ON DELETE CASCADE,
  dimension TEXT NOT NULL,
  bucket    INTEGER NOT NULL,
  value     TEXT NOT NULL,
  bot       INTEGER NOT NULL,
  clicks    INTEGER NOT NULL,
  visitors  INTEGER NOT NULL,
  PRIMARY KEY (link_id, dimension, bucket, value, bot)
) WITHOUT ROWID;

-- The first UTC day not settled yet (0: nothing settled).
CREATE TABLE click_settle_state (
  id             INTEGER PRIMARY KEY CHECK (id = 1),
  settled_before INTEGER NOT NULL
);
INSERT INTO click_settle_state (id, settled_before) VALUES (1, 0);
`;

/**
 * SQLite migration 16: settled totals per ISO week and calendar month (UTC) besides days, so a long range's
 * breakdown reads its whole weeks' and months' rows (settledKey: dimension/week, dimension/month; bucket: the
 * Monday or the 1st). Made here from the day rows already settled; settleDays and late clicks add to all three.
 * Also the settle state's hours_before, for settleHours (hourly rows per dimension of the day not settled yet).
 */
export const SETTLED_WEEKS_MONTHS_SQLITE = `
-- The first hour of the day after the settled days whose cells are not settled yet (settleHours; at most
-- settled_before means none): its earlier hours have hourly rows per dimension (dimension name/hour).
ALTER TABLE click_settle_state ADD COLUMN hours_before INTEGER NOT NULL DEFAULT 0;
INSERT INTO click_settled (link_id, dimension, bucket, value, bot, clicks, visitors)
  SELECT link_id, dimension || '/week', bucket - ((bucket / 86400000 + 3) % 7) * 86400000, value, bot, sum(clicks), sum(visitors)
  FROM click_settled WHERE dimension <> '' GROUP BY 1, 2, 3, 4, 5;
INSERT INTO click_settled (link_id, dimension, bucket, value, bot, clicks, visitors)
  SELECT link_id, dimension || '/month', CAST(strftime('%s', bucket / 1000, 'unixepoch', 'start of month') AS INTEGER) * 1000,
    value, bot, sum(clicks), sum(visitors)
  FROM click_settled WHERE dimension <> '' AND instr(dimension, '/') = 0 GROUP BY 1, 2, 3, 4, 5;
`;

/**
 * SQLite schema, as numbered migrations. Each runs once, in order, inside one IMMEDIATE transaction that
 * also records it in `schema_migrations`, so a crash mid-way leaves the database at the previous version
 * and two processes opening the same file cannot both apply a step. Never edit a shipped migration:
 * append a new one.
 */
import type { Database } from "bun:sqlite";
import { ACCOUNT_TOTALS_SQLITE } from "./migration-account-totals.ts";
import { ANALYTICS_STORAGE_SQLITE, SETTLED_WEEKS_MONTHS_SQLITE } from "./migration-analytics.ts";
import { VISITOR_LEDGER_SQLITE } from "./migration-visitors.ts";
import { IMPORT_JOBS_SQLITE } from "./imports.ts";
import { EVENT_WEBHOOKS_SQLITE } from "./event-webhooks.ts";
import { OAUTH_SQLITE } from "./oauth.ts";
import { KEY_SCOPES_SQLITE } from "./migration-key-scopes.ts";
import { DOMAINS_SQLITE } from "./domains.ts";
import { WORKSPACE_DEFAULT_DOMAIN_DDL } from "../workspace-rows.ts";
import { ownersToWorkspaces, WORKSPACES_SQLITE } from "./workspaces.ts";
import { AUDIT_SQLITE } from "./audit.ts";
import { HOUR_DIGESTS_SQLITE } from "../hour-digests.ts";

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** What SQL text cannot say (a table made again from its stored definition), run after `sql` in the same transaction. */
  run?: (db: Database) => void;
}

export const SQLITE_MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "initial schema",
    sql: `
CREATE TABLE accounts (
  id            TEXT PRIMARY KEY,
  email         TEXT NOT NULL UNIQUE, -- stored lower-cased, so lookups are case-insensitive
  password_hash TEXT NOT NULL,
  created_at    INTEGER NOT NULL
);

CREATE TABLE sessions (
  id_hash    TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  csrf_token TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX sessions_account ON sessions(account_id);

CREATE TABLE api_keys (
  id           TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name         TEXT NOT NULL,
  key_hash     TEXT NOT NULL UNIQUE,
  prefix       TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  last_used_at INTEGER,
  revoked_at   INTEGER
);
CREATE INDEX api_keys_account ON api_keys(account_id, created_at);

-- Slugs are case-sensitive: TEXT compares with the BINARY collation unless told otherwise.
CREATE TABLE links (
  id             TEXT PRIMARY KEY,
  account_id     TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  domain         TEXT NOT NULL,
  slug           TEXT NOT NULL,
  target         TEXT NOT NULL,
  status         TEXT NOT NULL CHECK (status IN ('active', 'paused', 'archived')),
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  expires_at     INTEGER,
  starts_at      INTEGER,
  max_hits       INTEGER,
  hits           INTEGER NOT NULL DEFAULT 0,
  password_hash  TEXT,
  tags           TEXT NOT NULL DEFAULT '[]', -- JSON array, in the owner's order; link_tags indexes it
  folder         TEXT,
  utm_source     TEXT,
  utm_medium     TEXT,
  utm_campaign   TEXT,
  rules          TEXT NOT NULL DEFAULT '[]', -- JSON
  ab_urls        TEXT NOT NULL DEFAULT '[]', -- JSON
  webhook_url    TEXT,
  webhook_secret TEXT,
  serve_og       INTEGER NOT NULL DEFAULT 0,
  og_title       TEXT,
  og_description TEXT,
  og_image_url   TEXT,
  UNIQUE (domain, slug)
);
CREATE INDEX links_account_created ON links(account_id, created_at DESC, id DESC);

-- One row per (link, tag) so a tag filter is an exact, indexed match rather than a search in JSON.
CREATE TABLE link_tags (
  link_id TEXT NOT NULL REFERENCES links(id) ON DELETE CASCADE,
  tag     TEXT NOT NULL,
  PRIMARY KEY (link_id, tag)
) WITHOUT ROWID;
CREATE INDEX link_tags_tag ON link_tags(tag, link_id);

-- Raw clicks; the client address is never stored, only the country derived from it.
CREATE TABLE clicks (
  id       TEXT PRIMARY KEY,
  link_id  TEXT NOT NULL REFERENCES links(id) ON DELETE CASCADE,
  ts       INTEGER NOT NULL,
  country  TEXT,
  device   TEXT NOT NULL,
  browser  TEXT NOT NULL,
  os       TEXT NOT NULL,
  referrer TEXT,
  variant  INTEGER
);
CREATE INDEX clicks_link_ts ON clicks(link_id, ts);

-- What stats read: their cost follows the number of (hour, dimension) cells, not the number of clicks.
-- country '' = unknown, variant -1 = no A/B variant (key columns cannot be NULL).
CREATE TABLE click_rollups (
  link_id TEXT NOT NULL REFERENCES links(id) ON DELETE CASCADE,
  hour    INTEGER NOT NULL,
  device  TEXT NOT NULL,
  browser TEXT NOT NULL,
  country TEXT NOT NULL,
  variant INTEGER NOT NULL,
  clicks  INTEGER NOT NULL,
  PRIMARY KEY (link_id, hour, device, browser, country, variant)
) WITHOUT ROWID;
`,
  },
  {
    version: 2,
    name: "lifetime totals and hourly counts per link",
    sql: `
-- Stats read these instead of scanning rollups: their size follows the number of distinct devices, browsers,
-- countries and variants (and hours), never the number of clicks. Triggers keep them in step with every
-- rollup write (click consumer, import, direct seeding alike).
CREATE TABLE click_totals (
  link_id   TEXT NOT NULL REFERENCES links(id) ON DELETE CASCADE,
  dimension TEXT NOT NULL,
  value     TEXT NOT NULL,
  clicks    INTEGER NOT NULL,
  PRIMARY KEY (link_id, dimension, value)
) WITHOUT ROWID;

CREATE TABLE click_hourly (
  link_id TEXT NOT NULL REFERENCES links(id) ON DELETE CASCADE,
  hour    INTEGER NOT NULL,
  clicks  INTEGER NOT NULL,
  PRIMARY KEY (link_id, hour)
) WITHOUT ROWID;

INSERT INTO click_hourly (link_id, hour, clicks)
  SELECT link_id, hour, SUM(clicks) FROM click_rollups GROUP BY link_id, hour;
INSERT INTO click_totals (link_id, dimension, value, clicks)
  SELECT link_id, 'device', device, SUM(clicks) FROM click_rollups GROUP BY link_id, device
  UNION ALL SELECT link_id, 'browser', browser, SUM(clicks) FROM click_rollups GROUP BY link_id, browser
  UNION ALL SELECT link_id, 'country', country, SUM(clicks) FROM click_rollups GROUP BY link_id, country
  UNION ALL SELECT link_id, 'variant', CAST(variant AS TEXT), SUM(clicks) FROM click_rollups GROUP BY link_id, variant;

CREATE TRIGGER click_rollups_totals_insert AFTER INSERT ON click_rollups BEGIN
  INSERT INTO click_hourly (link_id, hour, clicks) VALUES (NEW.link_id, NEW.hour, NEW.clicks)
    ON CONFLICT (link_id, hour) DO UPDATE SET clicks = clicks + excluded.clicks;
  INSERT INTO click_totals (link_id, dimension, value, clicks) VALUES
    (NEW.link_id, 'device', NEW.device, NEW.clicks), (NEW.link_id, 'browser', NEW.browser, NEW.clicks),
    (NEW.link_id, 'country', NEW.country, NEW.clicks), (NEW.link_id, 'variant', CAST(NEW.variant AS TEXT), NEW.clicks)
    ON CONFLICT (link_id, dimension, value) DO UPDATE SET clicks = clicks + excluded.clicks;
END;

CREATE TRIGGER click_rollups_totals_update AFTER UPDATE OF clicks ON click_rollups BEGIN
  UPDATE click_hourly SET clicks = clicks + NEW.clicks - OLD.clicks WHERE link_id = NEW.link_id AND hour = NEW.hour;
  UPDATE click_totals SET clicks = clicks + NEW.clicks - OLD.clicks WHERE link_id = NEW.link_id AND (
    (dimension = 'device' AND value = NEW.device) OR (dimension = 'browser' AND value = NEW.browser) OR
    (dimension = 'country' AND value = NEW.country) OR (dimension = 'variant' AND value = CAST(NEW.variant AS TEXT)));
END;
`,
  },
  {
    version: 3,
    name: "raw clicks in one b-tree keyed by link, time and click id",
    sql: `
-- Every click the service serves is a row here, so each index costs on every redirect. Before: a rowid table,
-- a unique index on id and an index on (link_id, ts), three b-trees per click. Now one: the primary key
-- (link_id, ts, id) orders rows as they are read and deleted (per link, by time) and still makes a repeated
-- click (same id, hence same link and time) a conflict, so a redelivered batch is written once.
CREATE TABLE clicks_v3 (
  id       TEXT NOT NULL,
  link_id  TEXT NOT NULL REFERENCES links(id) ON DELETE CASCADE,
  ts       INTEGER NOT NULL,
  country  TEXT,
  device   TEXT NOT NULL,
  browser  TEXT NOT NULL,
  os       TEXT NOT NULL,
  referrer TEXT,
  variant  INTEGER,
  PRIMARY KEY (link_id, ts, id)
) WITHOUT ROWID;
INSERT INTO clicks_v3 (id, link_id, ts, country, device, browser, os, referrer, variant)
  SELECT id, link_id, ts, country, device, browser, os, referrer, variant FROM clicks;
DROP TABLE clicks;
ALTER TABLE clicks_v3 RENAME TO clicks;
`,
  },
  {
    version: 4,
    name: "raw clicks as one row per batch and link",
    sql: `
-- A row per click made the raw log the dearest part of recording a click; a row now holds one delivered batch's
-- clicks of one link as JSON columns (shared/adapters/click-log.ts), and (link_id, batch_id) is what makes a
-- redelivered batch a no-op. A rowid table: rows are kilobytes, too large for WITHOUT ROWID.
CREATE TABLE click_batches (
  link_id  TEXT NOT NULL REFERENCES links(id) ON DELETE CASCADE,
  batch_id TEXT NOT NULL,
  first_ts INTEGER NOT NULL,
  last_ts  INTEGER NOT NULL,
  clicks   INTEGER NOT NULL,
  data     TEXT NOT NULL,
  PRIMARY KEY (link_id, batch_id)
);
-- Clicks stored before: one row per link and minute, named after that minute.
INSERT INTO click_batches (link_id, batch_id, first_ts, last_ts, clicks, data)
  SELECT link_id, 'minute:' || minute, min(ts), max(ts), count(*),
    json_object('ts', json_group_array(ts), 'country', json_group_array(country), 'device', json_group_array(device),
      'browser', json_group_array(browser), 'os', json_group_array(os), 'referrer', json_group_array(referrer),
      'variant', json_group_array(variant))
  FROM (SELECT link_id, ts - ts % 60000 AS minute, ts, country, device, browser, os, referrer, variant
        FROM clicks ORDER BY link_id, ts, id)
  GROUP BY link_id, minute
  ORDER BY min(ts);
DROP TABLE clicks;
`,
  },
  {
    version: 5,
    name: "where an ended link sends visitors",
    sql: `ALTER TABLE links ADD COLUMN expired_url TEXT;`,
  },
  {
    version: 6,
    name: "the owner's own id for a link, unique per account",
    sql: `
ALTER TABLE links ADD COLUMN external_id TEXT;
CREATE UNIQUE INDEX links_account_external_id ON links(account_id, external_id) WHERE external_id IS NOT NULL;
`,
  },
  {
    version: 8,
    name: "maxHits reservations: hits taken in blocks before they are served",
    sql: `
-- Counters (in process memory, or Redis) count hits of a maxHits link only within this reservation, raised in
-- blocks before they serve, so a counter lost in a crash restarts above every hit it served (hits lag behind).
ALTER TABLE links ADD COLUMN reserved_hits INTEGER NOT NULL DEFAULT 0;
-- A link without a limit has no reservation: when a limit is set again, counting starts from its recorded hits.
CREATE TRIGGER links_reservation_ends AFTER UPDATE OF max_hits ON links
  WHEN NEW.max_hits IS NULL AND NEW.reserved_hits <> 0
  BEGIN UPDATE links SET reserved_hits = 0 WHERE id = NEW.id; END;
`,
  },
  {
    version: 9,
    name: "a link's webhook paused after its endpoint kept failing, and why",
    sql: `
ALTER TABLE links ADD COLUMN webhook_paused_at INTEGER;
ALTER TABLE links ADD COLUMN webhook_paused_reason TEXT;
`,
  },
  {
    version: 10,
    name: "tag and folder filters that ignore case",
    sql: `
-- The list's tag and folder filters compare lower(tag) and lower(folder) with the lower-cased filter: these
-- indexes answer exactly those expressions, so a filter seeks instead of reading every link of the account.
CREATE INDEX link_tags_tag_lower ON link_tags(lower(tag), link_id);
CREATE INDEX links_account_folder_lower ON links(account_id, lower(folder), created_at DESC, id DESC);
`,
  },
  {
    version: 11,
    name: "analytics: raw click log per batch, rollup cells over every dimension, settled totals",
    sql: ANALYTICS_STORAGE_SQLITE,
  },
  { version: 12, name: "unique visitors: the day keys and the (link, visitor) pairs seen, two days kept", sql: VISITOR_LEDGER_SQLITE },
  { version: 14, name: "import jobs (issue #25)", sql: IMPORT_JOBS_SQLITE },
  { version: 15, name: "event webhooks: account endpoints and the outbox of their deliveries", sql: EVENT_WEBHOOKS_SQLITE },
  { version: 16, name: "analytics: settled totals per ISO week and month besides days; hourly ones of the day not settled yet", sql: SETTLED_WEEKS_MONTHS_SQLITE },
  { version: 17, name: "what each API key may do: its scopes (NULL: a key from before, every scope)", sql: KEY_SCOPES_SQLITE },
  { version: 18, name: "OAuth authorization server: clients, codes, grants and their tokens (issue #23)", sql: OAUTH_SQLITE },
  { version: 20, name: "custom domains, each hostname unique across accounts (issue #24)", sql: DOMAINS_SQLITE },
  {
    version: 21,
    name: "workspaces, members and invitations; every account's personal workspace; owner columns name workspaces (issue #24)",
    sql: WORKSPACES_SQLITE,
    run: ownersToWorkspaces,
  },
  { version: 22, name: "the audit log: who did what and when in a workspace (issue #24)", sql: AUDIT_SQLITE },
  { version: 25, name: "a workspace's default domain, by hostname (issue #24)", sql: WORKSPACE_DEFAULT_DOMAIN_DDL },
  { version: 26, name: "analytics: account totals per day and link totals per day and month ranked by clicks, links with recent cells (issue #20)", sql: ACCOUNT_TOTALS_SQLITE },
  { version: 27, name: "analytics: hour digests of busy links' hours not settled yet, and each cell's part folded into them (issue #20)", sql: HOUR_DIGESTS_SQLITE },
];

/** Applies every migration not yet recorded; a no-op when the schema is current. */
export function applySqliteMigrations(db: Database, migrations: Migration[] = SQLITE_MIGRATIONS): void {
  const apply = db.transaction(() => {
    db.run(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    INTEGER PRIMARY KEY,
      name       TEXT NOT NULL,
      applied_at INTEGER NOT NULL
    )`);
    const done = new Set(
      db.query<{ version: number }, []>("SELECT version FROM schema_migrations").all().map((r) => r.version),
    );
    const record = db.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(m.version)) continue;
      db.run(m.sql);
      m.run?.(db);
      record.run(m.version, m.name, Date.now());
    }
  });
  // IMMEDIATE takes the write lock up front: a second process waits (busy_timeout) instead of both
  // reading "not applied" and then colliding. Foreign keys are off meanwhile (SQLite's procedure for making a table
  // again: dropping the old one must not cascade into its children); a migration that does so checks its table.
  const enforced = db.query<{ foreign_keys: number }, []>("PRAGMA foreign_keys").get()?.foreign_keys === 1;
  db.run("PRAGMA foreign_keys = OFF");
  try {
    apply.immediate();
  } finally {
    if (enforced) db.run("PRAGMA foreign_keys = ON");
  }
}

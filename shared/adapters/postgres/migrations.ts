/**
 * Postgres schema, as numbered migrations (same logical model as the SQLite ones). They run at start-up
 * in one transaction holding a transaction-scoped advisory lock, so processes starting together apply
 * each step exactly once: the second waits, then finds nothing left to do. Never edit a shipped
 * migration: append a new one.
 */
import { ACCOUNT_TOTALS_POSTGRES } from "./migration-account-totals.ts";
import type { Sql } from "postgres";
import { IMPORT_JOBS_POSTGRES } from "./imports.ts";
import { ANALYTICS_STORAGE_POSTGRES, CELL_KEYS_BYTEWISE_POSTGRES, SETTLED_WEEKS_MONTHS_POSTGRES } from "./migration-analytics.ts";
import { EVENT_WEBHOOKS_POSTGRES } from "./event-webhooks.ts";
import { OAUTH_POSTGRES } from "./oauth.ts";
import { KEY_SCOPES_POSTGRES } from "./migration-key-scopes.ts";
import { DOMAINS_POSTGRES } from "./domains.ts";
import { WORKSPACE_DEFAULT_DOMAIN_DDL } from "../workspace-rows.ts";
import { WORKSPACES_POSTGRES } from "./workspaces.ts";
import { AUDIT_POSTGRES } from "./audit.ts";
import { CELL_SETS_POSTGRES } from "./cell-sets.ts";
import { HOUR_DIGESTS_POSTGRES } from "../hour-digests.ts";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Arbitrary constant naming "clink schema migrations" among advisory locks in this database. */
export const MIGRATION_LOCK_ID = 7_349_112_865;

export const POSTGRES_MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "initial schema",
    sql: `
CREATE TABLE accounts (
  id            text PRIMARY KEY,
  email         text NOT NULL UNIQUE, -- stored lower-cased, so lookups are case-insensitive
  password_hash text NOT NULL,
  created_at    bigint NOT NULL       -- epoch ms, like every time column here
);

CREATE TABLE sessions (
  id_hash    text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  csrf_token text NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL
);
CREATE INDEX sessions_account ON sessions(account_id);

CREATE TABLE api_keys (
  id           text PRIMARY KEY,
  account_id   text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name         text NOT NULL,
  key_hash     text NOT NULL UNIQUE,
  prefix       text NOT NULL,
  created_at   bigint NOT NULL,
  last_used_at bigint,
  revoked_at   bigint
);
CREATE INDEX api_keys_account ON api_keys(account_id, created_at);

-- Slugs are case-sensitive (deterministic default collation): "abc" and "ABC" are two links.
CREATE TABLE links (
  id             text PRIMARY KEY,
  account_id     text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  domain         text NOT NULL,
  slug           text NOT NULL,
  target         text NOT NULL,
  status         text NOT NULL CHECK (status IN ('active', 'paused', 'archived')),
  created_at     bigint NOT NULL,
  updated_at     bigint NOT NULL,
  expires_at     bigint,
  starts_at      bigint,
  max_hits       integer,
  hits           bigint NOT NULL DEFAULT 0,
  password_hash  text,
  tags           jsonb NOT NULL DEFAULT '[]', -- in the owner's order; link_tags indexes it
  folder         text,
  utm_source     text,
  utm_medium     text,
  utm_campaign   text,
  rules          jsonb NOT NULL DEFAULT '[]',
  ab_urls        jsonb NOT NULL DEFAULT '[]',
  webhook_url    text,
  webhook_secret text,
  serve_og       boolean NOT NULL DEFAULT false,
  og_title       text,
  og_description text,
  og_image_url   text,
  UNIQUE (domain, slug)
);
CREATE INDEX links_account_created ON links(account_id, created_at DESC, id DESC);

-- One row per (link, tag) so a tag filter is an exact, indexed match.
CREATE TABLE link_tags (
  link_id text NOT NULL REFERENCES links(id) ON DELETE CASCADE,
  tag     text NOT NULL,
  PRIMARY KEY (link_id, tag)
);
CREATE INDEX link_tags_tag ON link_tags(tag, link_id);

-- Raw clicks; the client address is never stored, only the country derived from it.
CREATE TABLE clicks (
  id       text PRIMARY KEY,
  link_id  text NOT NULL REFERENCES links(id) ON DELETE CASCADE,
  ts       bigint NOT NULL,
  country  text,
  device   text NOT NULL,
  browser  text NOT NULL,
  os       text NOT NULL,
  referrer text,
  variant  integer
);
CREATE INDEX clicks_link_ts ON clicks(link_id, ts);

-- What stats read: their cost follows the number of (hour, dimension) cells, not the number of clicks.
-- country '' = unknown, variant -1 = no A/B variant (key columns cannot be NULL).
CREATE TABLE click_rollups (
  link_id text NOT NULL REFERENCES links(id) ON DELETE CASCADE,
  hour    bigint NOT NULL,
  device  text NOT NULL,
  browser text NOT NULL,
  country text NOT NULL,
  variant integer NOT NULL,
  clicks  bigint NOT NULL,
  PRIMARY KEY (link_id, hour, device, browser, country, variant)
);
`,
  },
  {
    version: 2,
    name: "lifetime totals and hourly counts per link",
    sql: `
-- Stats read these instead of scanning rollups: their size follows the number of distinct devices, browsers,
-- countries and variants (and hours), never the number of clicks. A trigger keeps them in step with every
-- rollup write (click consumer, import, direct seeding alike).
CREATE TABLE click_totals (
  link_id   text NOT NULL REFERENCES links(id) ON DELETE CASCADE,
  dimension text NOT NULL,
  value     text NOT NULL,
  clicks    bigint NOT NULL,
  PRIMARY KEY (link_id, dimension, value)
);

CREATE TABLE click_hourly (
  link_id text NOT NULL REFERENCES links(id) ON DELETE CASCADE,
  hour    bigint NOT NULL,
  clicks  bigint NOT NULL,
  PRIMARY KEY (link_id, hour)
);

INSERT INTO click_hourly (link_id, hour, clicks)
  SELECT link_id, hour, sum(clicks) FROM click_rollups GROUP BY link_id, hour;
INSERT INTO click_totals (link_id, dimension, value, clicks)
  SELECT link_id, 'device', device, sum(clicks) FROM click_rollups GROUP BY link_id, device
  UNION ALL SELECT link_id, 'browser', browser, sum(clicks) FROM click_rollups GROUP BY link_id, browser
  UNION ALL SELECT link_id, 'country', country, sum(clicks) FROM click_rollups GROUP BY link_id, country
  UNION ALL SELECT link_id, 'variant', variant::text, sum(clicks) FROM click_rollups GROUP BY link_id, variant;

-- SET search_path FROM CURRENT: the tables are found in this schema whatever the writing session's path is.
CREATE FUNCTION click_rollups_totals() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  delta bigint := NEW.clicks - CASE WHEN TG_OP = 'UPDATE' THEN OLD.clicks ELSE 0 END;
BEGIN
  INSERT INTO click_hourly (link_id, hour, clicks) VALUES (NEW.link_id, NEW.hour, delta)
    ON CONFLICT (link_id, hour) DO UPDATE SET clicks = click_hourly.clicks + excluded.clicks;
  INSERT INTO click_totals (link_id, dimension, value, clicks) VALUES
    (NEW.link_id, 'device', NEW.device, delta), (NEW.link_id, 'browser', NEW.browser, delta),
    (NEW.link_id, 'country', NEW.country, delta), (NEW.link_id, 'variant', NEW.variant::text, delta)
    ON CONFLICT (link_id, dimension, value) DO UPDATE SET clicks = click_totals.clicks + excluded.clicks;
  RETURN NULL;
END $$;

CREATE TRIGGER click_rollups_totals AFTER INSERT OR UPDATE OF clicks ON click_rollups
  FOR EACH ROW EXECUTE FUNCTION click_rollups_totals();
`,
  },
  {
    version: 3,
    name: "raw clicks without a per-row foreign key check",
    sql: `
-- The foreign key made every raw click row run a referential check (a KEY SHARE lock on its link): about
-- half of what writing a click cost. recordClicks already keeps only clicks of existing links, and its rollup
-- insert (still under a foreign key) locks each link of the batch once, so a link deleted meanwhile fails the
-- whole statement instead of leaving orphans. The cascade is kept by one statement-level trigger.
ALTER TABLE clicks DROP CONSTRAINT IF EXISTS clicks_link_id_fkey;

CREATE FUNCTION clicks_of_deleted_links() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM clicks c USING deleted_links d WHERE c.link_id = d.id;
  RETURN NULL;
END $$;

CREATE TRIGGER clicks_of_deleted_links AFTER DELETE ON links
  REFERENCING OLD TABLE AS deleted_links FOR EACH STATEMENT EXECUTE FUNCTION clicks_of_deleted_links();
`,
  },
  {
    version: 4,
    name: "raw clicks under one index keyed by link, time and click id",
    sql: `
-- Every click is a row here, so each index costs on every redirect: the primary key on id and the index on
-- (link_id, ts) become one primary key (link_id, ts, id). A repeated click (same id, hence same link and time)
-- is still a conflict, so a redelivered batch is written once; deleting a link's clicks uses its prefix.
ALTER TABLE clicks DROP CONSTRAINT clicks_pkey;
DROP INDEX clicks_link_ts;
ALTER TABLE clicks ADD PRIMARY KEY (link_id, ts, id);
`,
  },
  {
    version: 5,
    name: "raw clicks as one row per batch and link",
    sql: `
-- A row per click made the raw log the dearest part of recording a click (about 5 us of backend CPU each); a row
-- now holds one delivered batch's clicks of one link as JSON columns (shared/adapters/click-log.ts), and
-- (link_id, batch_id) is what makes a redelivered batch a no-op. Read it in SQL with data::jsonb.
CREATE TABLE click_batches (
  link_id  text NOT NULL,
  batch_id text NOT NULL,
  first_ts bigint NOT NULL,
  last_ts  bigint NOT NULL,
  clicks   integer NOT NULL,
  data     text NOT NULL,
  PRIMARY KEY (link_id, batch_id)
);
-- Clicks stored before: one row per link and minute, named after that minute.
INSERT INTO click_batches (link_id, batch_id, first_ts, last_ts, clicks, data)
  SELECT link_id, 'minute:' || (ts - ts % 60000), min(ts), max(ts), count(*),
    json_build_object('ts', json_agg(ts ORDER BY ts, id), 'country', json_agg(country ORDER BY ts, id),
      'device', json_agg(device ORDER BY ts, id), 'browser', json_agg(browser ORDER BY ts, id),
      'os', json_agg(os ORDER BY ts, id), 'referrer', json_agg(referrer ORDER BY ts, id),
      'variant', json_agg(variant ORDER BY ts, id))::text
  FROM clicks GROUP BY link_id, ts - ts % 60000;

-- As before: no per-row foreign key (recordClicks keeps only rows of existing links); one statement-level
-- trigger deletes a deleted link's raw clicks.
DROP TRIGGER clicks_of_deleted_links ON links;
DROP FUNCTION clicks_of_deleted_links();
DROP TABLE clicks;
CREATE FUNCTION click_batches_of_deleted_links() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM click_batches c USING deleted_links d WHERE c.link_id = d.id;
  RETURN NULL;
END $$;
CREATE TRIGGER click_batches_of_deleted_links AFTER DELETE ON links
  REFERENCING OLD TABLE AS deleted_links FOR EACH STATEMENT EXECUTE FUNCTION click_batches_of_deleted_links();
`,
  },
  {
    version: 6,
    name: "raw click data compressed with lz4",
    sql: `
-- A log row's data (a few KB of JSON) is compressed when stored; with the default pglz that compression was
-- about half of Postgres' CPU per recorded click (0.57 -> 0.31 us with lz4, 2,000-click batches). Rows stored
-- before keep pglz, which Postgres reads as before. Servers older than 14, or built without lz4, keep pglz.
DO $$
BEGIN
  IF current_setting('server_version_num')::int >= 140000 THEN
    EXECUTE 'ALTER TABLE click_batches ALTER COLUMN data SET COMPRESSION lz4';
  END IF;
EXCEPTION WHEN feature_not_supported THEN
  NULL;
END $$;
`,
  },
  {
    version: 7,
    name: "room on click-count pages for in-place updates",
    sql: `
-- Traffic spread over many links (about one click per link per batch) cost Postgres about 57 us of CPU per click
-- (10,000 links, in-process run), against 0.2 us for clicks on one link: each batch updates, per link it has
-- clicks of, the link's hit count, its rollup cells, its hourly count and four totals. With full pages each such
-- update wrote a new row version elsewhere with an entry in every index; with room left on the page, Postgres
-- updates in place (HOT: none of these counts is in an index). Pages written from now on keep that room.
ALTER TABLE links SET (fillfactor = 70);
ALTER TABLE click_rollups SET (fillfactor = 70);
ALTER TABLE click_hourly SET (fillfactor = 70);
ALTER TABLE click_totals SET (fillfactor = 70);
`,
  },
  {
    version: 8,
    name: "where an ended link sends visitors",
    sql: `ALTER TABLE links ADD COLUMN expired_url text;`,
  },
  {
    version: 9,
    name: "the owner's own id for a link, unique per account",
    sql: `
ALTER TABLE links ADD COLUMN external_id text;
CREATE UNIQUE INDEX links_account_external_id ON links(account_id, external_id) WHERE external_id IS NOT NULL;
`,
  },
  {
    version: 10,
    name: "a link's webhook paused after its endpoint kept failing, and why",
    sql: `
ALTER TABLE links ADD COLUMN webhook_paused_at bigint;
ALTER TABLE links ADD COLUMN webhook_paused_reason text;
`,
  },
  {
    version: 11,
    name: "maxHits reservations: hits taken in blocks before they are served",
    sql: `
-- Counters (Redis) count hits of a maxHits link only within this reservation, raised in blocks before they
-- serve, so a counter lost with Redis restarts above every hit served (hits lag behind by the queued clicks).
ALTER TABLE links ADD COLUMN reserved_hits bigint NOT NULL DEFAULT 0;
-- A link without a limit has no reservation: when a limit is set again, counting starts from its recorded hits.
CREATE FUNCTION links_reservation_ends() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.reserved_hits := 0;
  RETURN NEW;
END $$;
CREATE TRIGGER links_reservation_ends BEFORE UPDATE OF max_hits ON links
  FOR EACH ROW WHEN (NEW.max_hits IS NULL AND NEW.reserved_hits <> 0) EXECUTE FUNCTION links_reservation_ends();
`,
  },
  {
    version: 13,
    name: "tag and folder filters that ignore case",
    sql: `
-- The list's tag and folder filters compare lower(tag) and lower(folder) with the lower-cased filter: these
-- indexes answer exactly those expressions, so a filter seeks instead of reading every link of the account.
CREATE INDEX link_tags_tag_lower ON link_tags(lower(tag), link_id);
CREATE INDEX links_account_folder_lower ON links(account_id, lower(folder), created_at DESC, id DESC);
`,
  },
  {
    version: 14,
    name: "analytics: raw click log per batch, rollup cells over every dimension, settled totals",
    sql: ANALYTICS_STORAGE_POSTGRES,
  },
  {
    version: 15,
    name: "rollup cell keys compared bytewise",
    sql: CELL_KEYS_BYTEWISE_POSTGRES,
  },
  { version: 16, name: "import jobs (issue #25)", sql: IMPORT_JOBS_POSTGRES },
  { version: 17, name: "event webhooks: account endpoints and the outbox of their deliveries", sql: EVENT_WEBHOOKS_POSTGRES },
  { version: 18, name: "analytics: settled totals per ISO week and month besides days; hourly ones of the day not settled yet", sql: SETTLED_WEEKS_MONTHS_POSTGRES },
  { version: 19, name: "what each API key may do: its scopes (NULL: a key from before, every scope)", sql: KEY_SCOPES_POSTGRES },
  { version: 20, name: "OAuth authorization server: clients, codes, grants and their tokens (issue #23)", sql: OAUTH_POSTGRES },
  { version: 22, name: "custom domains, each hostname unique across accounts (issue #24)", sql: DOMAINS_POSTGRES },
  {
    version: 23,
    name: "workspaces, members and invitations; every account's personal workspace; owner columns name workspaces (issue #24)",
    sql: WORKSPACES_POSTGRES,
  },
  { version: 24, name: "the audit log: who did what and when in a workspace (issue #24)", sql: AUDIT_POSTGRES },
  { version: 25, name: "analytics: rollup cells appended as one set per link, hour and transaction (issue #20)", sql: CELL_SETS_POSTGRES },
  { version: 27, name: "a workspace's default domain, by hostname (issue #24)", sql: WORKSPACE_DEFAULT_DOMAIN_DDL },
  { version: 28, name: "analytics: account totals per day and link totals per day and month ranked by clicks (issue #20)", sql: ACCOUNT_TOTALS_POSTGRES },
  { version: 29, name: "analytics: hour digests of busy links' hours not settled yet, and a mark on the cells folded into them (issue #20)", sql: HOUR_DIGESTS_POSTGRES },
];

/**
 * Creates `schema` when given (search_path already points at it on every connection), then applies
 * every migration not yet recorded in `schema_migrations`.
 */
export async function applyPostgresMigrations(
  sql: Sql<any>,
  schema: string | undefined,
  migrations: Migration[] = POSTGRES_MIGRATIONS,
): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`;
    // Inside the lock: concurrent CREATE SCHEMA IF NOT EXISTS can otherwise fail on a unique violation.
    if (schema) await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await tx.unsafe(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const rows = await tx<{ version: number }[]>`SELECT version FROM schema_migrations`;
    const done = new Set(rows.map((r) => r.version));
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(m.version)) continue;
      await tx.unsafe(m.sql); // no parameters: simple protocol, several statements allowed
      await tx`INSERT INTO schema_migrations (version, name) VALUES (${m.version}, ${m.name})`;
    }
  });
}

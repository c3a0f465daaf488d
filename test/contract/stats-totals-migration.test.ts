/** Migration 2 back-fills the per-link totals from rollups written before it, and keeps them in step after. */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "bun:test";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { SQLITE_MIGRATIONS, applySqliteMigrations } from "../../shared/adapters/sqlite/migrations.ts";

const dir = mkdtempSync(join(tmpdir(), "clink-totals-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("rollups from a version-1 database appear in stats after upgrading, and new rollups add to them", async () => {
  const file = join(dir, "v1.sqlite");
  const db = new Database(file);
  applySqliteMigrations(db, SQLITE_MIGRATIONS.filter((m) => m.version === 1));
  const hour = Date.parse("2026-01-01T10:00:00Z");
  db.run(`INSERT INTO accounts (id, email, password_hash, created_at) VALUES ('a', 'a@x.io', 'h', 0)`);
  db.run(`INSERT INTO links (id, account_id, domain, slug, target, status, created_at, updated_at, hits, tags, rules, ab_urls, serve_og)
          VALUES ('l', 'a', 'd', 's', 'https://e.com', 'active', 0, 0, 0, '[]', '[]', '[]', 0)`);
  const cell = db.query(`INSERT INTO click_rollups (link_id, hour, device, browser, country, variant, clicks) VALUES ('l', ?, ?, ?, ?, ?, ?)`);
  cell.run(hour, "mobile", "Safari", "US", 0, 3);
  cell.run(hour, "desktop", "Chrome", "", -1, 2);
  db.close();

  const store = new SqliteStore(file);
  await store.migrate();
  expect(await store.getStats("l", hour)).toEqual({
    total: 5, byDevice: { mobile: 3, desktop: 2 }, byBrowser: { Safari: 3, Chrome: 2 }, byCountry: { US: 3, unknown: 2 },
    byVariant: { "0": 3 }, hourly: [{ hour, clicks: 5 }],
  });
  await store.recordClicks([
    { batch: "c1", linkId: "l", ts: hour + 1000, country: "US", device: "mobile", browser: "Safari", os: "iOS", referrer: null, variant: 0 },
    { batch: "c2", linkId: "l", ts: hour + 3_600_000, country: "DE", device: "tablet", browser: "Safari", os: "iOS", referrer: null, variant: null },
  ]);
  const s = await store.getStats("l", hour);
  expect(s.total).toBe(7);
  expect(s.byDevice).toEqual({ mobile: 4, desktop: 2, tablet: 1 });
  expect(s.byCountry).toEqual({ US: 4, unknown: 2, DE: 1 });
  expect(s.byVariant).toEqual({ "0": 4 });
  expect(s.hourly).toEqual([{ hour, clicks: 6 }, { hour: hour + 3_600_000, clicks: 1 }]);
  await store.close();
});

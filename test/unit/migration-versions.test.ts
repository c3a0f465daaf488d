/**
 * Migration lists: each version once, in ascending order, with a name. Two migrations sharing a version make a
 * fresh database apply one and record the other as done, silently; helpers adding migrations side by side can
 * collide, so the lists are checked here rather than by eye.
 */
import { describe, expect, test } from "bun:test";
import { POSTGRES_MIGRATIONS } from "../../shared/adapters/postgres/migrations.ts";
import { SQLITE_MIGRATIONS } from "../../shared/adapters/sqlite/migrations.ts";

describe.each([
  ["SQLite", SQLITE_MIGRATIONS],
  ["Postgres", POSTGRES_MIGRATIONS],
] as const)("%s migrations", (_name, migrations) => {
  test("every version appears once, listed in ascending order", () => {
    const versions = migrations.map((m) => m.version);
    expect(new Set(versions).size).toBe(versions.length);
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
  });

  test("every migration has a name and some SQL", () => {
    for (const m of migrations) expect([m.version, m.name.length > 0, m.sql.trim().length > 0]).toEqual([m.version, true, true]);
  });
});

/**
 * Export and import carry workspaces (issue #24): a SQLite instance with a renamed personal workspace, a shared one
 * with a second member, and what each holds (links with clicks, a key its member made, a domain) is exported,
 * imported into Postgres, exported again, imported into a fresh SQLite and exported a third time: the three files
 * hold the same records, and the last store answers memberships as the first. Real files, the real export and
 * import functions (control/ops), a real Postgres schema.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { exportTo } from "../../control/ops/export-cli.ts";
import { importFrom, validateExportFile } from "../../control/ops/import-cli.ts";
import { PostgresStore } from "../../shared/adapters/postgres/store.ts";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import type { Store } from "../../shared/ports.ts";
import { click, linkFor, T0, uid } from "./store-harness.ts";

const dir = mkdtempSync(join(tmpdir(), "clink-ws-export-"));
const url = process.env.DATABASE_URL_TEST ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await sql.end();
});

/** The record lines of an export file (its header names the source and time, which differ by design). */
const recordsOf = (path: string) => readFileSync(path, "utf8").trim().split("\n").slice(1);

async function populate(store: Store) {
  const owner = uid();
  const member = uid();
  for (const [id, email] of [[owner, "owner@example.com"], [member, "member@example.com"]] as const) {
    expect(await store.createAccount({ id, email, passwordHash: "$argon2id$x", createdAt: T0 })).toBe(true);
  }
  expect(await store.renameWorkspace(owner, "Mine")).toBe(true);
  const team = uid();
  expect(await store.createWorkspace({ id: team, name: "Acme", personalOf: null, defaultDomain: null, createdAt: T0 + 1 }, owner)).toBe(true);
  await store.createInvitation({
    id: uid(), workspaceId: team, tokenHash: `inv-${uid()}`, role: "admin", createdBy: owner, createdAt: T0, expiresAt: T0 + 10, usedAt: null,
    usedBy: null, revokedAt: null,
  });
  const [invitation] = await store.listInvitations(team);
  expect(await store.acceptInvitation(invitation!.tokenHash, member, T0 + 2)).toMatchObject({ ok: true });
  const links = [linkFor(owner), linkFor(team), linkFor(team, { tags: ["q1"] })];
  expect(await store.insertLinks(links)).toEqual([true, true, true]);
  await store.recordClicks([click(links[0]!.id), click(links[1]!.id), click(links[1]!.id, { bot: true })]);
  await store.createApiKey({
    id: uid(), accountId: team, createdBy: member, name: "ci", keyHash: `hash-${uid()}`, prefix: "ck_AbC1", createdAt: T0, lastUsedAt: null,
    revokedAt: null, scopes: ["links:read"],
  });
  await store.createDomain({
    id: uid(), accountId: team, hostname: "go.acme.example", method: "dns", token: "clink-t", state: "verified", checkedAt: T0, checkOk: true,
    checkResult: "found", verifiedAt: T0, rootRedirect: null, notFoundRedirect: null, createdAt: T0, updatedAt: T0,
  });
  expect(await store.setDefaultDomain(team, "go.acme.example")).toBe(true);
  // A personal workspace's default domain is carried too (here one whose domain is gone: kept as written, ignored at read).
  expect(await store.setDefaultDomain(owner, "gone.example")).toBe(true);
  return { owner, member, team };
}

test("SQLite → Postgres → SQLite: the same workspaces, members and everything they hold", async () => {
  const first = new SqliteStore(join(dir, "a.sqlite"));
  const second = new PostgresStore(url, { schema, max: 2 });
  const third = new SqliteStore(join(dir, "c.sqlite"));
  try {
    for (const s of [first, second, third]) await s.migrate();
    const { owner, member, team } = await populate(first);
    const files = [join(dir, "1.jsonl"), join(dir, "2.jsonl"), join(dir, "3.jsonl")] as const;

    const counts = await exportTo(first, "SQLite", files[0]);
    expect(counts).toMatchObject({ account: 2, workspace: 3, member: 4, apiKey: 1, link: 3, domain: 1 });
    await validateExportFile(files[0]);
    const intoPostgres = await importFrom(second, files[0]);
    // The personal workspaces came with their accounts (one renamed by its record); the shared one and its two members were written.
    expect(intoPostgres.inserted).toMatchObject({ account: 2, workspace: 2, member: 2, apiKey: 1, link: 3, domain: 1 });
    expect(intoPostgres.skipped).toMatchObject({ workspace: 1, member: 2 }); // the unrenamed personal one, the personal owners
    await exportTo(second, "Postgres", files[1]);
    await importFrom(third, files[1]);
    await exportTo(third, "SQLite", files[2]);

    expect(recordsOf(files[1])).toEqual(recordsOf(files[0]));
    expect(recordsOf(files[2])).toEqual(recordsOf(files[0]));
    for (const id of [owner, member]) expect(await third.listMemberships(id)).toEqual(await first.listMemberships(id));
    expect((await third.listMemberships(owner)).map((m) => [m.workspace.name, m.role])).toEqual([["Mine", "owner"], ["Acme", "owner"]]);
    expect(await third.listMembers(team)).toEqual(await first.listMembers(team));
    expect((await third.getWorkspace(team))?.defaultDomain).toBe("go.acme.example");
    expect((await third.getWorkspace(owner))?.defaultDomain).toBe("gone.example");

    // A file from before default domains (its workspace records have no defaultDomain) imports them as null.
    const older = join(dir, "older.jsonl");
    writeFileSync(older, readFileSync(files[0], "utf8").replace(/,"defaultDomain":(null|"[^"]*")/g, ""));
    expect(readFileSync(older, "utf8")).not.toContain("defaultDomain");
    const fourth = new SqliteStore(join(dir, "d.sqlite"));
    try {
      await fourth.migrate();
      await importFrom(fourth, older);
      expect((await fourth.getWorkspace(team))?.defaultDomain).toBeNull();
      expect((await fourth.getWorkspace(owner))?.defaultDomain).toBeNull();
      expect((await fourth.getWorkspace(team))?.name).toBe("Acme");
    } finally {
      await fourth.close();
    }

    // Imported again: nothing new.
    const again = await importFrom(third, files[1]);
    expect(Object.values(again.inserted).every((n) => n === 0)).toBe(true);
  } finally {
    for (const s of [first, second, third]) await s.close();
  }
});

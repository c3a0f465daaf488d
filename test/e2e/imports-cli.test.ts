/**
 * `npm run import-links` end to end: a real process on a real SQLite data directory imports a Bitly export for an
 * account named by email, prints the summary and the refused rows, and exits 1 because rows were refused; a second
 * run changes nothing; a wrong account or file exits 2 with nothing written.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { runToExit } from "../helpers/run-to-exit.ts";

const dataDir = mkdtempSync(join(tmpdir(), "clink-import-cli-"));
const env = { DATA_DIR: dataDir, BASE_URL: "http://clink.test", LOG_LEVEL: "silent" };
const bitly = join(import.meta.dir, "..", "fixtures", "imports", "bitly.csv");
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test("imports a Bitly export into the account, reports refused rows, and a second run changes nothing", async () => {
  const store = new SqliteStore(join(dataDir, "clink.sqlite"));
  await store.migrate();
  await store.createAccount({ id: "acct-cli", email: "ops@example.com", passwordHash: "x", createdAt: 0 });
  await store.close();

  const args = ["control/imports/cli.ts", "--account", "ops@example.com", "--format", "bitly", "--file", bitly];
  const first = await runToExit(args, { env, timeoutMs: 30_000 });
  expect(first.stdout).toContain("done: 8 rows, 4 created (0 of them renamed), 1 skipped, 3 refused");
  expect(first.stdout).toContain("row 6: failed invalid_url");
  expect(first.code).toBe(1);
  const second = await runToExit(args, { env, timeoutMs: 30_000 });
  expect(second.stdout).toContain("done: 8 rows, 0 created (0 of them renamed), 5 skipped, 3 refused");

  const check = new SqliteStore(join(dataDir, "clink.sqlite"));
  const link = await check.getLink("clink.test", "3xKq9Zp");
  const jobs = await check.listImportJobs("acct-cli", 10);
  await check.close();
  expect(link).toMatchObject({ accountId: "acct-cli", hits: 1234, target: "https://example.com/spring?utm=a&b=1" });
  expect(jobs.map((j) => j.fileName)).toEqual(["bitly.csv", "bitly.csv"]);

  const nobody = await runToExit(["control/imports/cli.ts", "--account", "nobody@example.com", "--format", "bitly", "--file", bitly], { env, timeoutMs: 30_000 });
  expect([nobody.code, nobody.stderr.trim()]).toEqual([2, "Cannot import: No account with the email nobody@example.com; nothing was written"]);
  const usage = await runToExit(["control/imports/cli.ts", "--format", "bitly"], { env, timeoutMs: 30_000 });
  expect(usage.code).toBe(2);
  expect(usage.stderr).toContain("Usage: npm run import-links");
});

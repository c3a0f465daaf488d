/** The VisitorLedger contract on SQLite: two connections to one migrated file (the writer thread's and another). */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteConnection } from "../../shared/adapters/sqlite/connection.ts";
import { applySqliteMigrations } from "../../shared/adapters/sqlite/migrations.ts";
import { SqliteVisitorLedger } from "../../shared/adapters/sqlite/visitors.ts";
import { expectForgottenAfterTwoDays, runVisitorLedgerContract } from "./visitors.contract.ts";

const open = async () => {
  const dir = mkdtempSync(join(tmpdir(), "clink-visitors-"));
  const file = join(dir, "clink.sqlite");
  const first = new SqliteConnection(file);
  applySqliteMigrations(first.db);
  const second = new SqliteConnection(file);
  return {
    a: new SqliteVisitorLedger(first),
    b: new SqliteVisitorLedger(second),
    close: async () => {
      first.close();
      second.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};
runVisitorLedgerContract("SQLite", open);
expectForgottenAfterTwoDays("SQLite", open);

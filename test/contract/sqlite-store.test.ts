/** The Store contract against SQLite, on a real file (WAL) in a fresh temporary directory. */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { runStoreContract } from "./store.contract.ts";

// A sub-directory that does not exist yet: the adapter must create it.
const dir = join(tmpdir(), `clink-sqlite-${crypto.randomUUID()}`);
const file = join(dir, "nested", "clink.db");

runStoreContract(
  "SQLite",
  async () => new SqliteStore(file),
  async () => rmSync(dir, { recursive: true, force: true }),
);

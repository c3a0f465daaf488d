/** The imports role of the Store against SQLite, on a real file in a fresh temporary directory. */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { runImportsContract } from "./imports.contract.ts";

const dir = join(tmpdir(), `clink-imports-${crypto.randomUUID()}`);
runImportsContract("SQLite", async () => new SqliteStore(join(dir, "clink.db")), async () => rmSync(dir, { recursive: true, force: true }));

/** The AuditStore contract against SQLite, on a real file (WAL) in a fresh temporary directory. */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { runAuditContract } from "./audit.contract.ts";

const dir = join(tmpdir(), `clink-audit-${crypto.randomUUID()}`);

runAuditContract("SQLite", async () => new SqliteStore(join(dir, "clink.db")), async () => rmSync(dir, { recursive: true, force: true }));

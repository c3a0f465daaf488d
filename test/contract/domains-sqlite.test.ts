/** The DomainStore contract against SQLite, on a real file (WAL) in a fresh temporary directory. */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { runDomainContract } from "./domains.contract.ts";

const dir = join(tmpdir(), `clink-domains-${crypto.randomUUID()}`);

runDomainContract("SQLite", async () => new SqliteStore(join(dir, "clink.db")), async () => rmSync(dir, { recursive: true, force: true }));

/** The WorkspaceStore contract against SQLite, on a real file (WAL) in a fresh temporary directory. */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../shared/adapters/sqlite/store.ts";
import { runWorkspaceContract } from "./workspaces.contract.ts";

const dir = join(tmpdir(), `clink-workspaces-${crypto.randomUUID()}`);

runWorkspaceContract("SQLite", async () => new SqliteStore(join(dir, "clink.db")), async () => rmSync(dir, { recursive: true, force: true }));

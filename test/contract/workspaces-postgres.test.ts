/** The WorkspaceStore contract against a real Postgres (DATABASE_URL, default the local test database), in a random schema. */
import postgres from "postgres";
import { PostgresStore } from "../../shared/adapters/postgres/store.ts";
import { runWorkspaceContract } from "./workspaces.contract.ts";

const url = process.env.DATABASE_URL_TEST ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = `t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;

runWorkspaceContract("Postgres", async () => new PostgresStore(url, { schema, max: 4 }), async () => {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await sql.end({ timeout: 5 });
  }
});
